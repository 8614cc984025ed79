"""Run sizes of chapters 02-04 (attention: the scaling curves and the timing table): smoke, cpu and gpu."""

from __future__ import annotations

from dataclasses import dataclass, replace


# --- chapters 02-04: attention ---------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionRun:
    """The sizes of chapters 02-04's experiments: the scaling curves and the timing table."""

    scaling_dims: tuple[int, ...]  # head widths d for chapter 03's "why we scale" curves
    scaling_samples: int  # random query/key sets averaged per d
    scaling_keys: int  # keys each random query attends over
    timing_lengths: tuple[int, ...]  # sequence lengths for the teaching-vs-fast timing table
    timing_repeats: int  # timed runs per length (after one warm-up run)
    timing_batch: int  # sequences per timed batch
    timing_emb: int  # embedding width e of the timed SelfAttention
    timing_heads: int  # heads h of the timed SelfAttention


SMOKE = AttentionRun(
    scaling_dims=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),  # d = 2 .. 1024 in every profile
    scaling_samples=200,
    scaling_keys=16,
    timing_lengths=(16, 64),
    timing_repeats=2,
    timing_batch=2,
    timing_emb=32,
    timing_heads=4,
)
CPU = replace(
    SMOKE,
    scaling_samples=2_000,
    timing_lengths=(64, 256, 1024),
    timing_repeats=10,
    timing_batch=4,
    timing_emb=128,
    timing_heads=8,
)
GPU = replace(CPU, timing_lengths=(256, 1024, 4096), timing_repeats=20, timing_emb=256)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
