"""Comparing two arms scored on the same test reviews: paired tests (chapter 15).

Two arms that answer the same ``n`` reviews are *paired*: on most reviews both are right or both wrong,
and only the reviews where they disagree say which is better. Overlapping 95 % intervals of the two
accuracies are no test (their difference can be clear while the intervals overlap). Two paired tests:

- :func:`mcnemar`: McNemar's exact test, for one run of each arm: of the ``d`` reviews where exactly
  one arm is right, how surprising is the split if both were equally good (a fair coin, ``d`` tosses)?
- :func:`paired_bootstrap`: the difference of accuracies with a 95 % interval from resampling the
  reviews (each arm's correctness averaged over its seeds first, so a review keeps its pairing).

Inputs are correctness tables: bool ``(s, n)``, ``s`` runs (seeds, label draws) of an arm on ``n``
reviews (``(n,)`` is one run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class Difference:
    """Accuracy of arm a minus arm b on the same reviews, with its paired 95 % interval."""

    a: float  # arm a's accuracy (mean over its runs)
    b: float
    low: float  # interval of a - b
    high: float
    n: int  # reviews
    p: float | None = None  # McNemar's exact p-value (one run per arm), else None

    @property
    def value(self) -> float:
        return self.a - self.b

    @property
    def verdict(self) -> str:
        """``"ahead"``, ``"behind"`` or ``"not distinguishable"``: a against b, decided by the interval."""
        if self.low > 0:
            return "ahead"
        if self.high < 0:
            return "behind"
        return "not distinguishable"


def _runs(correct: Tensor) -> Tensor:
    correct = torch.as_tensor(correct).bool()
    return correct[None] if correct.dim() == 1 else correct  # (s, n)


def mcnemar(a: Tensor, b: Tensor) -> float:
    """McNemar's exact two-sided p-value of two runs ``(n,)`` on the same items: the binomial probability
    of a split of the disagreements at least as uneven as the one seen, under a fair coin."""
    a, b = _runs(a), _runs(b)
    if a.shape != b.shape or a.size(0) != 1:
        raise ValueError(
            f"mcnemar compares one run each on the same items; got {tuple(a.shape)}, {tuple(b.shape)}."
        )
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    d, k = only_a + only_b, min(only_a, only_b)
    if d == 0:
        return 1.0
    tail = sum(math.comb(d, i) for i in range(k + 1)) / 2**d
    return min(1.0, 2 * tail)


def paired_bootstrap(a: Tensor, b: Tensor, *, resamples: int = 2_000, seed: int = 0) -> Difference:
    """The accuracy of ``a`` minus ``b`` (each ``(s, n)`` or ``(n,)``, the same ``n`` reviews), its 95 %
    interval from ``resamples`` draws of the reviews with replacement (percentile), and McNemar's p when
    both are one run."""
    a, b = _runs(a), _runs(b)
    if a.size(1) != b.size(1):
        raise ValueError(f"both arms must answer the same reviews; got {a.size(1)} and {b.size(1)}.")
    per_review = a.float().mean(0) - b.float().mean(0)  # (n,): each review's difference, over the seeds
    n = per_review.numel()
    generator = torch.Generator().manual_seed(seed)
    rows = torch.randint(n, (resamples, n), generator=generator)  # (resamples, n)
    means = per_review[rows].mean(1).sort().values  # (resamples,)
    low, high = means[int(0.025 * resamples)].item(), means[int(0.975 * resamples) - 1].item()
    p = mcnemar(a[0], b[0]) if a.size(0) == b.size(0) == 1 else None
    return Difference(a.float().mean().item(), b.float().mean().item(), low, high, n, p)


def mean_interval(values: Tensor, *, resamples: int = 2_000, seed: int = 0) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` ``(n,)`` and its 95 % bootstrap (percentile) interval."""
    values = torch.as_tensor(values).float().flatten()
    generator = torch.Generator().manual_seed(seed)
    rows = torch.randint(values.numel(), (resamples, values.numel()), generator=generator)
    means = values[rows].mean(1).sort().values
    return (
        values.mean().item(),
        means[int(0.025 * resamples)].item(),
        means[int(0.975 * resamples) - 1].item(),
    )


__all__ = ["Difference", "mcnemar", "mean_interval", "paired_bootstrap"]
