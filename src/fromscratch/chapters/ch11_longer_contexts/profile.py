"""Chapter 11's run: KV cache, Transformer-XL, sparse attention, positions (all on enwik8's prefix)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models import LongContextConfig, TransformerXLConfig
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class LongContextRun:
    """The sizes of chapter 11's experiments. Every trained generator is ``model`` with its ``context``
    (and positions or sparsity) replaced, and trains with ``train`` for that experiment's steps:
    ``train(model, batches, next_byte_loss, replace(size.train, steps=size.sparse_steps))``."""

    data_bytes: (
        int  # first bytes of enwik8 read: the 1,000,000-byte prefix, cut 90/5/5 (not the standard split)
    )
    model: LongContextConfig  # the (pre-norm) generator every experiment starts from
    xl: TransformerXLConfig  # 11.2: the Transformer-XL (segment L, memory M); memory=0 for its twin
    train: TrainConfig  # peak lr and warm-up of every training run (each experiment sets its steps)
    batch_size: int  # sequences per training step
    eval_bytes: int  # held-out (validation) bytes scored for every bits-per-byte figure
    kv_prompts: tuple[int, ...]  # 11.1: prompt lengths whose generation is timed with and without the cache
    kv_new: int  # 11.1: tokens generated per timed call
    kv_repeats: int  # 11.1: timed calls per prompt length (the fastest counts)
    xl_segments: int  # 11.2: consecutive segments per training sequence (memory carried across them)
    xl_steps: int  # 11.2: training steps of each Transformer-XL (with memory and without)
    eval_memories: tuple[int, ...]  # 11.2: memory lengths tried at evaluation
    sparse_lengths: tuple[int, ...]  # 11.4: sequence lengths t of the dense vs sparse timings
    sparse_repeats: int  # 11.4: timed calls per length
    sparse_context: int  # 11.4: context of the sparse and dense generators trained side by side
    sparse_block: int  # 11.4: their block (stride) l
    sparse_steps: int  # 11.4: their training steps
    train_context: int  # 11.5: the context L the four position schemes are trained at
    position_steps: int  # 11.5: training steps per position scheme
    factors: tuple[int, ...] = (1, 2, 4)  # 11.5: evaluation lengths, as multiples of train_context
    eval_parts: int = 10  # the eval_bytes are scored in this many equal parts: their spread is the noise


# smoke: tiny models and a few dozen steps: proves the code runs (seconds)
SMOKE = LongContextRun(
    data_bytes=1_000_000,
    # the generator and the Transformer-XL share emb, heads and depth; the generator's context is
    # train_context, the XL's memory its segment
    model=LongContextConfig(emb=32, heads=4, depth=2, context=32),
    xl=TransformerXLConfig(emb=32, heads=4, depth=2, segment=16, memory=16),
    train=TrainConfig(lr=5e-3, warmup_steps=5),
    batch_size=8,
    eval_bytes=4_000,
    kv_prompts=(16, 64),
    kv_new=16,
    kv_repeats=1,
    xl_segments=3,
    xl_steps=30,
    eval_memories=(0, 16, 32),
    sparse_lengths=(256, 512, 1024),
    sparse_repeats=1,
    sparse_context=64,
    sparse_block=8,
    sparse_steps=30,
    train_context=32,
    position_steps=30,
)
# cpu: the whole chapter in about 10 minutes on 2 free cores, still on the 1 MB prefix
CPU = replace(
    SMOKE,
    model=replace(SMOKE.model, emb=64, context=64),
    xl=replace(SMOKE.xl, emb=64, segment=64, memory=64),
    train=replace(SMOKE.train, lr=3e-3, warmup_steps=50),
    batch_size=16,
    eval_bytes=50_000,
    kv_prompts=(64, 256, 1024, 2048),
    kv_new=64,
    kv_repeats=3,
    xl_segments=4,
    xl_steps=1_000,
    eval_memories=(0, 32, 64, 128, 256),
    sparse_lengths=(512, 1024, 2048, 4096, 8192),
    sparse_repeats=3,
    sparse_context=256,
    sparse_block=16,
    sparse_steps=1_000,
    train_context=64,
    position_steps=1_000,
)
GPU = replace(
    CPU,
    model=replace(CPU.model, emb=256, heads=8, depth=6, context=128),
    xl=replace(CPU.xl, emb=256, heads=8, depth=6, segment=128, memory=128),
    train=replace(CPU.train, lr=1e-3, warmup_steps=200),
    batch_size=32,
    eval_bytes=200_000,
    kv_prompts=(64, 256, 1024, 4096),
    kv_new=128,
    kv_repeats=5,
    xl_steps=5_000,
    eval_memories=(0, 64, 128, 256, 512),
    sparse_repeats=5,
    sparse_context=512,
    sparse_block=32,
    sparse_steps=5_000,
    train_context=128,
    position_steps=5_000,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
