"""Verdicts: the words a chapter's computed prose chooses from its numbers, by rules tested on both sides
(chapters 06-15).

A chapter never decides "ahead", "crossed" or "at chance" with a threshold typed into its prose cell;
it asks one of these, and prints what they return. Every function takes plain numbers and returns a
string or a small frozen record; none draws or prints.

- ``plural(n, "seed")`` -> ``"1 seed"``, ``"3 seeds"``; ``join_words(["a", "b", "c"])`` -> ``"a, b and c"``;
- ``times(ratio)`` -> ``"2.5 times faster"``, ``"1.5 times slower"``, ``"about as fast"`` (never "0 times"
  or "-2 times"; a ratio that is not positive raises);
- ``binomial_se(p, n)``: the standard error of an accuracy ``p`` measured on ``n`` items;
- ``compare(a, b, sd=..., seeds=..., floor=...)`` -> :class:`Comparison`: ``a`` ahead of, behind or within
  noise of ``b``, from the means, their spread over seeds and the noise of one measurement; one seed
  never decides a lesson (``decided`` is False, ``runs`` says "one run each");
- ``paired(diffs)`` -> :class:`Comparison`: the mean of paired per-seed differences against zero, judged by
  their spread over the seeds; ``agree_by_chance(n)`` -> ``"1 time in 4"``: how often ``n`` seeds of a change
  with no effect all move the same way;
- ``crossing(xs, a, b)`` -> :class:`Crossing`: does curve ``a`` cross curve ``b`` never, once (and stay
  crossed) or more than once, and where;
- ``versus_chance(score, chance, n)`` -> ``"below"``, ``"at"``, ``"above"`` or ``"solved"``;
- ``trend(values, noise)`` -> ``"rising"``, ``"flat"`` or ``"fell"``: how a curve ended;
- ``relative_to(value, target, tol)`` -> ``"above"``, ``"close to"`` or ``"below"``;
- ``seeds_said(n)`` -> ``"one run"``, ``"the mean of 3 seeds"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Comparison",
    "Crossing",
    "agree_by_chance",
    "binomial_se",
    "compare",
    "crossing",
    "join_words",
    "paired",
    "plural",
    "relative_to",
    "seeds_said",
    "times",
    "trend",
    "versus_chance",
]


# --- words ----------------------------------------------------------------------------------------
def plural(n: float, word: str, many: str | None = None) -> str:
    """``"1 seed"``, ``"3 seeds"``, ``"1,000 reviews"``; ``many``: the plural when it is not ``word + "s"``
    (``plural(2, "pass", "passes")``). Whole numbers get thousands separators; others ``:g``."""
    shown = f"{int(n):,}" if float(n).is_integer() else f"{n:g}"
    return f"{shown} {word if n == 1 else (many or word + 's')}"


def join_words(items: Sequence[object], last: str = "and") -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"`` (``last="or"``: ``"a, b or c"``); ``""`` for no items."""
    words = [str(item) for item in items]
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def seeds_said(n: int) -> str:
    """``"one run"`` for one seed, ``"the mean of 3 seeds"`` for more."""
    return "one run" if n == 1 else f"the mean of {plural(n, 'seed')}"


def times(
    ratio: float, *, more: str = "faster", less: str = "slower", same: float = 0.05, digits: int = 1
) -> str:
    """How many times one thing is the other, as words: ``ratio`` = this one's speed over the other's
    (or its size, with ``more="larger", less="smaller"``).

    ``"2.5 times faster"`` above 1, ``"2.0 times slower"`` below (its inverse, never "0.4 times faster"),
    ``"about as fast"`` within ``same`` (a share: 0.05 = 5 %) of 1; the last word of ``more`` names it
    (``"about as fast"``, ``"about as large"``). A ratio that is not a positive finite number raises.
    """
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"a ratio of {ratio!r} cannot be said in times: pass a positive, finite ratio.")
    if abs(ratio - 1) <= same:
        return f"about as {_adjective(more)}"
    if ratio > 1:
        return f"{ratio:.{digits}f} times {more}"
    return f"{1 / ratio:.{digits}f} times {less}"


def _adjective(comparative: str) -> str:
    """``faster`` -> ``fast``, ``larger`` -> ``large``, ``bigger`` -> ``big``, ``more X`` -> ``X``."""
    word = comparative.split()[-1]
    if comparative.startswith(("more ", "less ")):
        return word
    stem = word[:-2] if word.endswith("er") else word
    if len(stem) > 2 and stem[-1] == stem[-2]:  # bigger -> big
        stem = stem[:-1]
    if stem.endswith("rg"):  # larger -> large
        stem += "e"
    return stem


# --- noise ----------------------------------------------------------------------------------------
def binomial_se(p: float, n: int) -> float:
    """The standard error of an accuracy ``p`` measured on ``n`` independent items, ``sqrt(p(1 - p)/n)``."""
    if n < 1:
        raise ValueError(f"an accuracy on n = {n} items has no standard error: pass n >= 1.")
    return math.sqrt(max(p * (1 - p), 0.0) / n)


# --- two numbers ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """``a`` against ``b``: ``side`` is ``"ahead"``, ``"behind"`` or ``"within noise"`` (:func:`compare`)."""

    gap: float  # a - b (higher is better: for a loss, compare(-a, -b))
    noise: float  # a gap must be larger than this to count
    seeds: int  # runs behind each mean

    @property
    def side(self) -> str:
        if self.gap > self.noise:
            return "ahead"
        if self.gap < -self.noise:
            return "behind"
        return "within noise"

    @property
    def decided(self) -> bool:
        """True when the gap is beyond the noise *and* more than one seed stands behind it: only then
        may a sentence draw a lesson from it."""
        return self.side != "within noise" and self.seeds > 1

    @property
    def runs(self) -> str:
        """``"one run each"`` or ``"the mean of 3 seeds each"``: what stands behind the numbers."""
        return f"{seeds_said(self.seeds)} each"

    def says(self, a: str, b: str, *, scale: float = 100, unit: str = "points", digits: int = 1) -> str:
        """``"the transformer is ahead of the bag by 2.3 points"``, ``"... behind ..."``, or ``"the
        transformer and the bag are within noise of each other (0.4 points apart)"``; the gap times
        ``scale`` (100: fractions as points), in ``unit``."""
        apart = f"{abs(self.gap) * scale:.{digits}f} {unit}"
        if self.side == "within noise":
            return f"{a} and {b} are within noise of each other ({apart} apart)"
        return f"{a} is ahead of {b} by {apart}" if self.side == "ahead" else f"{a} is behind {b} by {apart}"


def compare(
    a: float,
    b: float,
    *,
    sd: tuple[float, float] = (0.0, 0.0),
    seeds: int = 1,
    floor: float = 0.0,
    z: float = 2.0,
) -> Comparison:
    """Is ``a`` ahead of ``b`` (higher is better), behind it, or within noise?

    a, b: means over ``seeds`` runs each. sd: their standard deviations over the seeds (unknown for one
    seed: leave 0). floor: the noise of one measurement, e.g. ``2 * binomial_se(p, n_test)`` for accuracies
    on ``n_test`` items. The gap counts when it exceeds ``max(floor, z * sqrt(sd_a² + sd_b²) / sqrt(seeds))``,
    about ``z`` standard errors of the difference of the means.
    """
    if seeds < 1:
        raise ValueError(f"seeds = {seeds}: a mean needs at least one run.")
    spread = z * math.hypot(*sd) / math.sqrt(seeds)
    return Comparison(gap=a - b, noise=max(floor, spread), seeds=seeds)


def paired(diffs: Sequence[float], *, floor: float = 0.0, z: float = 2.0) -> Comparison:
    """Paired differences, one per seed (``a - b`` in each seed, higher is better), against zero.

    The gap is their mean; it counts when it exceeds ``max(floor, z * sd / sqrt(n))``, ``sd`` their
    standard deviation over the ``n`` seeds: the signs alone never decide. One seed has no spread and
    decides nothing (``decided`` is False). For a loss, pass the negated differences.
    """
    n = len(diffs)
    if n < 1:
        raise ValueError("paired needs at least one difference: pass one per seed.")
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else 0.0
    return compare(mean, 0.0, sd=(sd, 0.0), seeds=n, floor=floor, z=z)


def agree_by_chance(n: int) -> str:
    """How often ``n`` seeds of a change with no effect all land on the same side (either), as
    ``"1 time in 4"`` (3 seeds: 2 * (1/2)**3); ``"every time"`` for one seed."""
    if n < 1:
        raise ValueError(f"n = {n}: pass the number of seeds, at least 1.")
    return "every time" if n == 1 else f"1 time in {2 ** (n - 1):,}"


def relative_to(value: float, target: float, *, tol: float) -> str:
    """``"above"``, ``"close to"`` (within ``tol``, inclusive) or ``"below"`` ``target``: a measured slope
    against the one a formula predicts, say."""
    if value > target + tol:
        return "above"
    if value < target - tol:
        return "below"
    return "close to"


def versus_chance(score: float, chance: float, n: int, *, solved: float | None = None, z: float = 2.0) -> str:
    """Where an accuracy measured on ``n`` items stands against guessing (``chance``, e.g. 0.5):

    ``"below"`` or ``"above"`` when more than ``z`` standard errors (of a guess, ``binomial_se(chance,
    n)``) away, ``"at"`` otherwise; ``"solved"`` when ``solved`` is given and ``score >= solved``.
    """
    if solved is not None and score >= solved:
        return "solved"
    noise = z * binomial_se(chance, n)
    if score > chance + noise:
        return "above"
    if score < chance - noise:
        return "below"
    return "at"


# --- curves ---------------------------------------------------------------------------------------
def trend(values: Sequence[float], noise: float) -> str:
    """How a curve (higher is better, e.g. validation accuracy) ended, judged against ``noise``:

    ``"fell"`` when the last value is more than ``noise`` below the curve's best, ``"rising"`` when it is
    more than ``noise`` above the value halfway through, ``"flat"`` otherwise (also for fewer than two
    values). For a loss, pass the negated values.
    """
    if len(values) < 2:
        return "flat"
    if values[-1] < max(values) - noise:
        return "fell"
    if values[-1] > values[len(values) // 2] + noise:
        return "rising"
    return "flat"


@dataclass(frozen=True)
class Crossing:
    """Where curve ``a`` crosses curve ``b`` (see :func:`crossing`)."""

    kind: str  # "never", "once" or "several"
    at: object  # "once": the first x from which a stays on its new side; else None
    above: str | None  # "a" or "b": which is above at the last x apart (None: never apart)
    changes: tuple = ()  # every x at which the order flipped (from the previous x apart)


def crossing(
    xs: Sequence[object], a: Sequence[float], b: Sequence[float], *, rel_tol: float = 0.0
) -> Crossing:
    """Does curve ``a`` cross curve ``b`` over the whole of ``xs``, and where?

    The order at each x is the sign of ``a - b``; points where the two are within ``rel_tol`` of the
    larger (a share) count as ties and are skipped. ``"never"``: one order everywhere (``above`` says
    which); ``"once"``: one change, and ``a``'s new side holds at every later x, so ``at`` is the first x
    of the new order; ``"several"``: the order flips more than once (``changes`` lists where).
    """
    if not len(xs) == len(a) == len(b):
        raise ValueError(f"xs, a and b need one value each per x: got {len(xs)}, {len(a)} and {len(b)}.")
    signs = []
    for x, ya, yb in zip(xs, a, b, strict=True):
        if abs(ya - yb) > rel_tol * max(abs(ya), abs(yb)):
            signs.append((x, 1 if ya > yb else -1))
    if not signs:
        return Crossing("never", None, None)
    changes = tuple(x for (_, before), (x, now) in zip(signs, signs[1:], strict=False) if now != before)
    above = "a" if signs[-1][1] > 0 else "b"
    if not changes:
        return Crossing("never", None, above)
    if len(changes) == 1:
        return Crossing("once", changes[0], above, changes)
    return Crossing("several", None, above, changes)
