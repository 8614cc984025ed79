"""Chapter 12's run: memory, half precision, accumulation, checkpointing, many devices."""

from __future__ import annotations

from dataclasses import dataclass

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


def _run(
    emb: int, heads: int, depth: int, lengths: tuple[int, ...], amp: tuple[int, int, int], **sizes
) -> GoingBigRun:
    """One profile's run; ``amp`` = (e, blocks, context) of 12.2's generator, which trains
    ``sizes["amp_steps"]`` steps at lr 3e-3 with a 10 % warm-up."""
    amp_emb, amp_depth, amp_context = amp
    steps = sizes.pop("amp_steps")
    return GoingBigRun(
        model=GeneratorConfig(emb=emb, heads=heads, depth=depth, context=max(lengths)),
        lengths=lengths,
        amp_model=GeneratorConfig(emb=amp_emb, heads=4, depth=amp_depth, context=amp_context),
        amp_train=TrainConfig(steps=steps, lr=3e-3, warmup_steps=steps // 10),
        **sizes,
    )


GOING_BIG_RUNS = {
    # smoke: tiny sizes, only to prove every cell runs (seconds)
    "smoke": _run(
        emb=32,
        heads=4,
        depth=2,
        lengths=(16, 32, 64, 128),
        amp=(32, 1, 16),
        amp_steps=10,
        batch=2,
        timing_length=64,
        repeats=2,
        matmul_size=128,
        amp_batch=8,
        eval_bytes=1_000,
        accumulate=4,
        checkpoint_depths=(1, 2, 4),
        ddp_steps=2,
    ),
    # cpu: half the blog's generator width; minutes on 2 cores. The bf16 comparison is small: on a CPU
    # without bf16 units each bf16 step runs PyTorch's slow reference kernels
    "cpu": _run(
        emb=128,
        heads=8,
        depth=4,
        lengths=(64, 128, 256, 512, 1024),
        amp=(64, 2, 64),
        amp_steps=40,
        batch=8,
        timing_length=256,
        repeats=5,
        matmul_size=512,
        amp_batch=8,
        eval_bytes=20_000,
        accumulate=4,
        checkpoint_depths=(2, 4, 8, 12),
        ddp_steps=10,
    ),
    # gpu: the blog's generator width (e 256, 8 heads), 4 blocks: the teaching path at t = 2048 fits a T4
    "gpu": _run(
        emb=256,
        heads=8,
        depth=4,
        lengths=(256, 512, 1024, 2048),
        amp=(256, 12, 256),
        amp_steps=1_000,
        batch=8,
        timing_length=1024,
        repeats=10,
        matmul_size=4096,
        amp_batch=32,
        eval_bytes=200_000,
        accumulate=4,
        checkpoint_depths=(6, 12, 24, 48),
        ddp_steps=20,
    ),
}


def training_runs(prof) -> list[tuple[str, GeneratorConfig | ClassifierConfig, int]]:
    """``(name, model config, batch)`` of every run in profile ``prof`` whose model chapter 12's
    estimate covers (classifiers and generators): 06's classifier, 07's and 11's generators, 12's own."""
    runs = [
        ("06 IMDb classifier", prof.imdb.model, prof.imdb.batch_size),
        ("07 enwik8 generator", prof.enwik8.model, prof.enwik8.batch_size),
    ]
    lc = prof.long_context
    runs.append(("11 long-context generator", lc.model, lc.batch_size))
    gb = prof.going_big
    runs.append(("12 measured generator", gb.model, gb.batch))
    return runs
