"""Run sizes of chapters 02-04 (attention: the scaling curves and the timing table): smoke, cpu and gpu."""

from __future__ import annotations

from dataclasses import dataclass


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


def _attention(
    samples: int, lengths: tuple[int, ...], repeats: int, batch: int, emb: int, heads: int
) -> AttentionRun:
    """An attention run: head widths d = 2 .. 1024 with 16 keys for the scaling curves, then the timings."""
    dims = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    return AttentionRun(dims, samples, 16, lengths, repeats, batch, emb, heads)


ATTENTION_RUNS = {
    "smoke": _attention(samples=200, lengths=(16, 64), repeats=2, batch=2, emb=32, heads=4),
    "cpu": _attention(samples=2_000, lengths=(64, 256, 1024), repeats=10, batch=4, emb=128, heads=8),
    "gpu": _attention(samples=2_000, lengths=(256, 1024, 4096), repeats=20, batch=4, emb=256, heads=8),
}
