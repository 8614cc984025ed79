"""Chapter 11's run: KV cache, Transformer-XL, sparse attention, positions (all on enwik8's prefix)."""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.models import GeneratorConfig, TransformerXLConfig


@dataclass(frozen=True)
class LongContextRun:
    """The sizes of chapter 11's experiments; every trained model shares ``emb``, ``heads``, ``depth``."""

    data_bytes: (
        int  # first bytes of enwik8 read: the 1,000,000-byte prefix, cut 90/5/5 (not the standard split)
    )
    emb: int  # embedding width e of every trained model
    heads: int  # attention heads h
    depth: int  # blocks (layers)
    batch_size: int  # sequences per training step
    lr: float  # peak AdamW learning rate (linear warm-up, then linear decay to 0)
    warmup_steps: int  # linear warm-up steps of every training run
    eval_bytes: int  # held-out (validation) bytes scored for every bits-per-byte figure
    kv_prompts: tuple[int, ...]  # 11.1: prompt lengths whose generation is timed with and without the cache
    kv_new: int  # 11.1: tokens generated per timed call
    kv_repeats: int  # 11.1: timed calls per prompt length (the fastest counts)
    segment: int  # 11.2: Transformer-XL's segment length L
    memory: int  # 11.2: Transformer-XL's memory M per layer (training)
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

    def generator(self, *, context: int, **fields) -> GeneratorConfig:
        """A pre-norm generator of this run's size: ``Generator(prof.long_context.generator(context=64,
        positions="rope"))``; ``fields`` are other :class:`GeneratorConfig` fields."""
        return GeneratorConfig(
            emb=self.emb, heads=self.heads, depth=self.depth, context=context, norm="pre", **fields
        )

    @property
    def xl(self) -> TransformerXLConfig:
        """The Transformer-XL of section 11.2: ``TransformerXL(prof.long_context.xl)``; ``memory=0`` for its twin."""
        return TransformerXLConfig(
            emb=self.emb, heads=self.heads, depth=self.depth, segment=self.segment, memory=self.memory
        )


# fmt: off
LONG_CONTEXT_RUNS = {
    # smoke: tiny models and a few dozen steps: proves the code runs (seconds)
    "smoke": LongContextRun(data_bytes=1_000_000, emb=32, heads=4, depth=2, batch_size=8, lr=5e-3,
                            warmup_steps=5, eval_bytes=4_000, kv_prompts=(16, 64), kv_new=16, kv_repeats=1,
                            segment=16, memory=16, xl_segments=3, xl_steps=30, eval_memories=(0, 16, 32),
                            sparse_lengths=(256, 512, 1024), sparse_repeats=1, sparse_context=64,
                            sparse_block=8, sparse_steps=30, train_context=32, position_steps=30),
    # cpu: the whole chapter in about 10 minutes on 2 free cores, still on the 1 MB prefix
    "cpu": LongContextRun(data_bytes=1_000_000, emb=64, heads=4, depth=2, batch_size=16, lr=3e-3,
                          warmup_steps=50, eval_bytes=50_000, kv_prompts=(64, 256, 1024, 2048), kv_new=64,
                          kv_repeats=3, segment=64, memory=64, xl_segments=4, xl_steps=1_000,
                          eval_memories=(0, 32, 64, 128, 256), sparse_lengths=(512, 1024, 2048, 4096, 8192),
                          sparse_repeats=3, sparse_context=256, sparse_block=16, sparse_steps=1_000,
                          train_context=64, position_steps=1_000),
    "gpu": LongContextRun(data_bytes=1_000_000, emb=256, heads=8, depth=6, batch_size=32, lr=1e-3,
                          warmup_steps=200, eval_bytes=200_000, kv_prompts=(64, 256, 1024, 4096), kv_new=128,
                          kv_repeats=5, segment=128, memory=128, xl_segments=4, xl_steps=5_000,
                          eval_memories=(0, 64, 128, 256, 512), sparse_lengths=(512, 1024, 2048, 4096, 8192),
                          sparse_repeats=5, sparse_context=512, sparse_block=32, sparse_steps=5_000,
                          train_context=128, position_steps=5_000),
}
# fmt: on
