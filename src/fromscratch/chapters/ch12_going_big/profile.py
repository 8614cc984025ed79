"""Chapter 12's run: memory, half precision, accumulation, checkpointing, many devices."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models import ClassifierConfig, GeneratorConfig
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class GoingBigRun:
    """The sizes of chapter 12's measurements; the measured model is a byte-level generator (ch. 07)."""

    model: GeneratorConfig  # the measured generator (12.1, 12.3-12.5); context = the longest of `lengths`
    batch: int  # b of the memory measurements and timed steps
    lengths: tuple[int, ...]  # t of the memory-vs-length measurement (12.1)
    timing_length: int  # t of the timed steps (12.1 teaching vs fused, 12.4 checkpointing)
    repeats: int  # timed steps per measurement (the median counts, after one warm-up step)
    matmul_size: int  # n of the n x n matmul timed in fp32 and bf16 (12.2)
    amp_model: GeneratorConfig  # the generator trained in fp32 and in bf16 (12.2)
    amp_train: TrainConfig  # how it trains (12.2); the chapter sets only the precision
    amp_batch: int  # batch of that comparison
    eval_bytes: int  # validation bytes scored for bits per byte (12.2)
    accumulate: int  # k micro-batches per optimiser step (12.3)
    checkpoint_depths: tuple[int, ...]  # depths of the checkpointing measurement (12.4)
    ddp_steps: int  # timed steps of the 2-process demo (12.5)


# smoke: tiny sizes, only to prove every cell runs (seconds)
SMOKE = GoingBigRun(
    model=GeneratorConfig(emb=32, heads=4, depth=2, context=128),  # context: the longest of `lengths`
    batch=2,
    lengths=(16, 32, 64, 128),
    timing_length=64,
    repeats=2,
    matmul_size=128,
    amp_model=GeneratorConfig(emb=32, heads=4, depth=1, context=16),
    amp_train=TrainConfig(steps=10, lr=3e-3, warmup_steps=1),  # lr 3e-3 in every profile, 10 % warm-up
    amp_batch=8,
    eval_bytes=1_000,
    accumulate=4,
    checkpoint_depths=(1, 2, 4),
    ddp_steps=2,
)
# cpu: half the blog's generator width; minutes on 2 cores. The bf16 comparison is small: on a CPU
# without bf16 units each bf16 step runs PyTorch's slow reference kernels
CPU = replace(
    SMOKE,
    model=replace(SMOKE.model, emb=128, heads=8, depth=4, context=1024),
    batch=8,
    lengths=(64, 128, 256, 512, 1024),
    timing_length=256,
    repeats=5,
    matmul_size=512,
    amp_model=replace(SMOKE.amp_model, emb=64, depth=2, context=64),
    amp_train=replace(SMOKE.amp_train, steps=40, warmup_steps=4),
    eval_bytes=20_000,
    checkpoint_depths=(2, 4, 8, 12),
    ddp_steps=10,
)
# gpu: the blog's generator width (e 256, 8 heads), 4 blocks: the teaching path at t = 2048 fits a T4
GPU = replace(
    CPU,
    model=replace(CPU.model, emb=256, context=2048),
    lengths=(256, 512, 1024, 2048),
    timing_length=1024,
    repeats=10,
    matmul_size=4096,
    amp_model=replace(CPU.amp_model, emb=256, depth=12, context=256),
    amp_train=replace(CPU.amp_train, steps=1_000, warmup_steps=100),
    amp_batch=32,
    eval_bytes=200_000,
    checkpoint_depths=(6, 12, 24, 48),
    ddp_steps=20,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}


def training_runs(prof) -> list[tuple[str, GeneratorConfig | ClassifierConfig, int]]:
    """``(name, model config, batch)`` of every run in profile ``prof`` whose model chapter 12's
    estimate covers (classifiers and generators): 06's classifier, 07's and 11's generators, 12's own."""
    runs = [
        ("06 IMDb classifier", prof.ch06.model, prof.ch06.batch_size),
        ("07 enwik8 generator", prof.ch07.model, prof.ch07.batch_size),
    ]
    lc = prof.ch11.model  # chapter 11's dense generator with learned positions: a pre-norm Generator
    sizes = dict(emb=lc.emb, heads=lc.heads, depth=lc.depth, context=lc.context, ff_mult=lc.ff_mult)
    generator = GeneratorConfig(vocab_size=lc.vocab_size, **sizes, dropout=lc.dropout, norm="pre")
    runs.append(("11 long-context generator", generator, prof.ch11.batch_size))
    gb = prof.ch12
    runs.append(("12 measured generator", gb.model, gb.batch))
    return runs
