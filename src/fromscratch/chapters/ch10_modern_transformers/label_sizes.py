"""Chapter 10's label-efficiency curve: its sizes, one entry per profile (``prof.ch10.label_efficiency``).

The same fine-tuning from three starting points (random weights, our pretrained BERT, MiniLM) on ``N``
labelled reviews, every size held equal across them; :mod:`.label_efficiency`
runs it, in chapter 10 (``chapter_labels``, one seed) and in ``benchmarks/label_efficiency.py`` (the table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class LabelEfficiencyRun:
    """The sizes of the label-efficiency benchmark; equal for all three starting points."""

    labels: tuple[int, ...]  # N: labelled training reviews per fine-tuning (balanced pos/neg)
    seeds: int  # seeds (training subset, head init, batch order) for N <= many_seeds_up_to
    many_seeds_up_to: int  # larger N run with seed 0 only
    test_reviews: int  # balanced test reviews, the same ones for every run
    val_reviews: int  # balanced training reviews held out to pick each arm's lr (never trained on)
    lr_labels: int  # the N at which each arm's lr is picked (seed 0)
    lrs: tuple[tuple[str, tuple[float, ...]], ...]  # per starting point, the peak lrs tried
    picked: tuple[tuple[str, float], ...]  # per starting point, the lr the benchmark picked from `lrs`
    chapter_labels: tuple[int, ...]  # the N that chapter 10 fine-tunes itself (one seed, `picked` lrs)
    context: int  # tokens per review (its own tokenizer's), [CLS] included: head + tail
    batch: int  # reviews per fine-tuning step
    finetune: TrainConfig  # epochs over the N reviews (lr, warm-up and steps filled in per run)
    min_steps: int  # at least this many steps, however small N
    warmup: float  # warm-up as a fraction of the steps
    pooling: str  # the classifier reads the mean of the outputs ("mean") or the [CLS] one ("cls")
    dropout: float  # dropout in every encoder and the head (MiniLM's own: 0.1)
    picked_in: str | None = None  # the profile whose benchmark run picked `picked` (None: set by hand)

    def steps(self, n: int) -> int:
        """Optimiser steps of a fine-tuning on ``n`` reviews: ``epochs`` passes, at least ``min_steps``."""
        return max(self.min_steps, math.ceil(self.finetune.epochs * n / self.batch))

    def config(self, n: int, lr: float) -> TrainConfig:
        """The fine-tuning's ``TrainConfig`` for ``n`` reviews at peak learning rate ``lr``."""
        steps = self.steps(n)
        return replace(
            self.finetune, steps=steps, lr=lr, warmup_steps=round(self.warmup * steps), progress=False
        )

    def grid(self, init: str) -> tuple[float, ...]:
        return dict(self.lrs)[init]

    def lr(self, init: str) -> float:
        """The peak lr of ``init`` that ``benchmarks/label_efficiency.py`` picked on the held-out reviews."""
        return dict(self.picked)[init]

    def at_edge(self, init: str) -> bool:
        """True when ``init``'s pick is the smallest or largest of a grid of three or more: the grid does
        not bracket its best rate."""
        grid = self.grid(init)
        return len(grid) > 2 and self.lr(init) in (min(grid), max(grid))


# smoke: two tiny cells per starting point, to prove the code runs (seconds)
SMOKE = LabelEfficiencyRun(
    labels=(16, 32),
    seeds=2,
    many_seeds_up_to=16,
    test_reviews=32,
    val_reviews=16,
    lr_labels=16,
    lrs=(("random", (1e-3,)), ("ours", (1e-3,)), ("minilm", (1e-4, 3e-4))),
    picked=(("random", 1e-3), ("ours", 1e-3), ("minilm", 1e-4)),
    chapter_labels=(16, 32),
    context=24,
    batch=8,
    finetune=TrainConfig(epochs=1, weight_decay=0.01),
    min_steps=2,
    warmup=0.1,
    pooling="mean",
    dropout=0.0,
)
# cpu: ~60 min on 2 threads with the pretraining (14 min); the cost that fixed context and the steps is
# in benchmarks/label_efficiency.py's docstring
CPU = replace(
    SMOKE,
    labels=(100, 300, 1_000, 3_000),
    seeds=3,
    many_seeds_up_to=1_000,
    test_reviews=2_000,
    val_reviews=500,
    lr_labels=300,
    lrs=(("random", (3e-4, 1e-3, 3e-3)), ("ours", (3e-4, 1e-3, 3e-3)), ("minilm", (3e-5, 1e-4, 3e-4))),
    picked=(("random", 1e-3), ("ours", 3e-3), ("minilm", 1e-4)),  # measured: the benchmark's lr pick
    picked_in="cpu",
    chapter_labels=(100, 1_000),
    context=128,
    batch=16,
    min_steps=60,
    dropout=0.1,
)
# gpu: the cpu table plus all the labels (24,500: 500 are held out to pick the lr), at the gpu profile's
# fine-tuning length (its pretraining's); not run yet (no GPU was lent), so its lrs are the cpu ones
# until the benchmark picks its own
GPU = replace(CPU, labels=(100, 300, 1_000, 3_000, 24_500), context=256)

LABEL_EFFICIENCY_RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["LABEL_EFFICIENCY_RUNS", "LabelEfficiencyRun"]
