"""Comparing two arms scored on the same test reviews: paired tests (chapter 15).

Two arms that answer the same ``n`` reviews are *paired*: on most reviews both are right or both wrong,
and only the reviews where they disagree say which is better. Overlapping 95 % intervals of the two
accuracies are no test (their difference can be clear while the intervals overlap). Two paired tests:

- :func:`mcnemar`: McNemar's exact test, for one run of each arm: of the ``d`` reviews where exactly
  one arm is right, how surprising is the split if both were equally good (a fair coin, ``d`` tosses)?
- :func:`paired_bootstrap`: the difference of accuracies with a 95 % interval from a *hierarchical*
  bootstrap: each resample draws each arm's runs (seeds, draws of labels or examples) with replacement,
  then the reviews with replacement, the same reviews for both arms (so a review keeps its pairing).
  The spread between seeds is inside the interval, not only the spread between reviews. With few runs
  (3) the runs' share is still understated (a bootstrap of ``s`` values has ``(s - 1)/s`` of their
  variance), so the interval is a floor, read "given these draws".

Inputs are tables ``(s, n)``, ``s`` runs of an arm on ``n`` reviews (``(n,)`` is one run): bool
(correct or not) or float (a probability, say, whose mean difference is then compared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class Difference:
    """Accuracy of arm a minus arm b on the same reviews, with its paired 95 % interval."""

    a: float  # arm a's accuracy (mean over its runs; a float table's mean)
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


def _runs(table: Tensor) -> Tensor:
    table = torch.as_tensor(table)
    table = table if table.dtype == torch.bool or table.is_floating_point() else table.bool()
    return table[None] if table.dim() == 1 else table  # (s, n)


def mcnemar(a: Tensor, b: Tensor) -> float:
    """McNemar's exact two-sided p-value of two runs ``(n,)`` on the same items: the binomial probability
    of a split of the disagreements at least as uneven as the one seen, under a fair coin."""
    a, b = _runs(a).bool(), _runs(b).bool()
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


def _run_weights(s: int, resamples: int, generator: torch.Generator) -> Tensor:
    """Each resample's draw of ``s`` runs with replacement, as weights ``(resamples, s)`` summing to 1."""
    if s == 1:
        return torch.ones(resamples, 1)
    picked = torch.randint(s, (resamples, s), generator=generator)  # (resamples, s)
    return torch.zeros(resamples, s).scatter_add_(1, picked, torch.ones(resamples, s)) / s


def paired_bootstrap(
    a: Tensor, b: Tensor, *, resamples: int = 2_000, seed: int = 0, chunk: int = 250
) -> Difference:
    """The mean of ``a`` minus that of ``b`` (each ``(s, n)`` or ``(n,)``, the same ``n`` reviews; bool or
    float), its 95 % interval (percentile) from ``resamples`` hierarchical draws: each arm's runs with
    replacement (independently: runs that share a draw are not assumed to), then the reviews with
    replacement, the same for both arms; and McNemar's p when both are one bool run. ``chunk``: resamples
    computed at once (memory ``chunk * n``)."""
    a, b = _runs(a), _runs(b)
    if a.size(1) != b.size(1):
        raise ValueError(f"both arms must answer the same reviews; got {a.size(1)} and {b.size(1)}.")
    n = a.size(1)
    generator = torch.Generator().manual_seed(seed)
    means = []
    for start in range(0, resamples, chunk):
        k = min(chunk, resamples - start)
        weights_a = _run_weights(a.size(0), k, generator)  # (k, s_a)
        weights_b = _run_weights(b.size(0), k, generator)  # (k, s_b)
        per_review = weights_a @ a.float() - weights_b @ b.float()  # (k, n): each review's difference
        rows = torch.randint(n, (k, n), generator=generator)  # (k, n): the reviews drawn
        means.append(per_review.gather(1, rows).mean(1))  # (k,)
    means = torch.cat(means).sort().values  # (resamples,)
    low, high = means[int(0.025 * resamples)].item(), means[int(0.975 * resamples) - 1].item()
    one_run = a.size(0) == b.size(0) == 1 and a.dtype == b.dtype == torch.bool
    p = mcnemar(a[0], b[0]) if one_run else None
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
