"""Chapter 17's scores on held-out problems: ``n`` samples per problem, pass@k, majority vote, and
intervals by a bootstrap over the problems (paired where two models answered the same problems).
Shapes: ``P`` problems, ``n`` samples each."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fromscratch.chapters.ch17_reasoning.tasks import Pieces, answers, sample_groups
from fromscratch.data.verifiable import Problem
from fromscratch.training.rl import pass_at_k


@dataclass
class Samples:
    """``n`` answers to each of ``P`` problems: ``correct`` bool ``(P, n)``, ``answers`` (the parsed
    answers, None where malformed), ``formatted`` bool ``(P, n)``, ``lengths`` (response tokens)."""

    correct: np.ndarray
    answers: list[list[str | None]]
    formatted: np.ndarray
    lengths: np.ndarray
    targets: list[str]

    @property
    def n(self) -> int:
        return self.correct.shape[1]

    def pass_at(self, k: int) -> np.ndarray:
        """Per problem, the unbiased pass@k from its ``n`` samples ``(P,)``."""
        c = self.correct.sum(1)
        return pass_at_k(np.full_like(c, self.n), c, np.full_like(c, k))

    def majority_at(self, k: int) -> np.ndarray:
        """Per problem, 1.0 when the most common answer of the first ``k`` samples is right ``(P,)``
        (malformed answers do not vote; a tie goes to the answer seen first)."""
        out = []
        for row, target in zip(self.answers, self.targets, strict=True):
            votes = Counter(a for a in row[:k] if a is not None)
            out.append(float(bool(votes) and votes.most_common(1)[0][0] == target))
        return np.array(out)


def sample_scores(
    model,
    tokenizer: Pieces,
    problems: Sequence[Problem],
    n: int,
    *,
    max_tokens: int,
    temperature: float,
    batch: int,
    seed: int = 0,
) -> Samples:
    """``n`` samples for each problem (``batch`` problems per call to ``generate``), scored."""
    correct, parsed, formatted, lengths = [], [], [], []
    for start in range(0, len(problems), batch):
        chunk = problems[start : start + batch]
        groups = sample_groups(
            model, tokenizer, chunk, n, max_tokens=max_tokens, temperature=temperature, seed=seed + start
        )
        correct.append(groups.rewards.bool().cpu().numpy())
        formatted.append(groups.formatted.bool().cpu().numpy())
        lengths.append(groups.mask.sum(-1).cpu().numpy())
        parsed += [answers(texts) for texts in groups.texts]
    return Samples(
        np.concatenate(correct),
        parsed,
        np.concatenate(formatted),
        np.concatenate(lengths),
        [str(p.target) for p in problems],
    )


@dataclass(frozen=True)
class Interval:
    """A mean over problems and its bootstrap interval."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.1%} [{self.low:.1%}, {self.high:.1%}]"


DRAWS = 2_000  # bootstrap resamples of the problems


def bootstrap(values: np.ndarray, *, draws: int = DRAWS, level: float = 0.95, seed: int = 0) -> Interval:
    """The mean of ``values`` ``(P,)`` (one per problem) and the percentile interval of its bootstrap."""
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (draws, len(values)))].mean(1)
    tail = (1 - level) / 2
    return Interval(float(values.mean()), *map(float, np.quantile(means, [tail, 1 - tail])))


def paired(before: np.ndarray, after: np.ndarray, **options) -> Interval:
    """``after - before`` on the same problems, and its bootstrap interval (problems resampled together)."""
    return bootstrap(np.asarray(after, float) - np.asarray(before, float), **options)


def table_rows(before: Samples, after: Samples, ks: Sequence[int]) -> list[dict]:
    """pass@k and majority@k for each ``k``, before and after, with intervals and the paired change."""
    rows = []
    for name, score in (("pass", Samples.pass_at), ("majority", Samples.majority_at)):
        for k in ks:
            b, a = score(before, k), score(after, k)
            rows.append(
                {
                    "metric": f"{name}@{k}",
                    "before": bootstrap(b),
                    "after": bootstrap(a),
                    "change": paired(b, a),
                }
            )
    return rows


def by_metric(rows: Sequence[dict], when: str) -> dict[str, list[Interval]]:
    """``{"pass": [Interval per k], "majority": [...]}`` of ``when`` (``"before"`` or ``"after"``)."""
    out: dict[str, list[Interval]] = {}
    for row in rows:
        out.setdefault(row["metric"].split("@")[0], []).append(row[when])
    return out


__all__ = ["DRAWS", "by_metric", "Interval", "Samples", "bootstrap", "paired", "sample_scores", "table_rows"]
