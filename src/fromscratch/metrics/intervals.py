"""How sure an accuracy is: the 95 % confidence interval of a proportion (chapter 15).

An accuracy measured on ``n`` test examples is an estimate: another sample of ``n`` would give
another number. The **Wilson score interval** (Wilson 1927) is the range of true accuracies ``p`` for
which the observed ``k`` correct out of ``n`` is not surprising at the chosen level (``z = 1.96`` for
95 %):

    centre = (k + z²/2) / (n + z²),   half-width = z / (n + z²) · sqrt(k (n - k) / n + z²/4)

Unlike the textbook ``p ± z·sqrt(p(1-p)/n)`` it never leaves [0, 1] and stays honest near 0 and 1 and
for small ``n``. Two methods whose intervals overlap widely are not shown to differ by this test set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


@dataclass(frozen=True)
class Proportion:
    """``correct`` out of ``n``, with its Wilson interval ``(low, high)`` at level ``z``."""

    correct: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.correct / self.n

    def __str__(self) -> str:
        return f"{self.value:.1%} [{self.low:.1%}, {self.high:.1%}]"


def wilson_interval(correct: int, n: int, *, z: float = Z95) -> Proportion:
    """The Wilson score interval of ``correct`` successes in ``n`` trials (95 % for the default ``z``)."""
    if n < 1 or not 0 <= correct <= n:
        raise ValueError(f"need 0 <= correct <= n and n >= 1, got correct={correct}, n={n}.")
    z2 = z * z
    centre = (correct + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(correct * (n - correct) / n + z2 / 4)
    return Proportion(correct, n, max(0.0, centre - half), min(1.0, centre + half))


__all__ = ["Z95", "Proportion", "wilson_interval"]
