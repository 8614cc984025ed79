"""How far chapter 09's BLEU gaps move with the test sentences: a paired bootstrap (Koehn 2004).

One run per model gives no spread over seeds, but the test set is itself a sample of sentences.
:func:`resample` draws the test sentences again with replacement, the same draw for every model (so
the models stay paired), and rescores each model's corpus BLEU, and its BLEU per source-length bin,
from sacreBLEU's per-sentence n-gram counts (summed counts give the corpus score exactly). The
chapter's prose then computes every gap it quotes in each draw, and a gap counts only beyond twice
its standard deviation over the draws (:func:`spread`). This is the noise of the test set, not of a
rerun: another seed can move a score further.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping, Sequence

__all__ = ["Draw", "resample", "spread"]

# one bootstrap draw: {model name: (corpus BLEU, (BLEU of each length bin, ...))}
Draw = Mapping[str, tuple[float, tuple[float, ...]]]


def resample(
    references: Sequence[str],
    systems: Mapping[str, Sequence[str]],
    lengths: Sequence[int] | None = None,
    edges: Sequence[int] | None = None,
    *,
    resamples: int = 200,
    seed: int = 0,
) -> list[Draw]:
    """``resamples`` bootstrap draws of the test set, each scored for every model in ``systems``
    (``{name: translations}``, one per reference). With ``lengths`` (source tokens per sentence) and
    ``edges`` (the bins' lower ends, as :func:`~fromscratch.metrics.translation.bleu_by_length` takes
    them) each draw also holds the BLEU of every bin that is not empty in the full test set (an empty
    bin in a draw scores 0). The same ``seed`` draws the same sentences, whichever models are scored."""
    from sacrebleu.metrics import BLEU

    n = len(references)
    if n < 1 or any(len(hyps) != n for hyps in systems.values()):
        raise ValueError(f"resample needs one translation per reference for every model ({n} references).")
    metric = BLEU()
    stats = {  # per sentence: matches and totals of 1- to 4-grams, hypothesis and reference lengths
        name: metric._extract_corpus_statistics(list(hyps), [list(references)])
        for name, hyps in systems.items()
    }
    bins = _bins(lengths or [0] * n, edges or [0])
    rng = random.Random(seed)

    def score(rows: list[list[int]]) -> float:
        summed = [sum(column) for column in zip(*rows, strict=True)] if rows else [0] * 10
        return metric._compute_score_from_stats(summed).score if summed[-1] else 0.0

    draws = []
    for _ in range(resamples):
        picked = [rng.randrange(n) for _ in range(n)]
        draw = {}
        for name, rows in stats.items():
            chosen = [rows[i] for i in picked]
            per_bin = tuple(score([rows[i] for i in picked if i in members]) for members in bins)
            draw[name] = (score(chosen), per_bin)
        draws.append(draw)
    return draws


def _bins(lengths: Sequence[int], edges: Sequence[int]) -> list[set[int]]:
    """The sentence indices in each non-empty source-length bin, as ``bleu_by_length`` bins them."""
    members = []
    for lo, hi in zip(edges, [*edges[1:], None], strict=True):
        picked = {i for i, t in enumerate(lengths) if t >= lo and (hi is None or t < hi)}
        if picked:
            members.append(picked)
    return members


def spread(draws: Sequence[Draw], quantity: Callable[[Draw], float]) -> float:
    """The standard deviation of ``quantity`` (a gap computed from one draw) over the draws; 0 for
    fewer than two draws."""
    values = [quantity(draw) for draw in draws]
    return statistics.stdev(values) if len(values) > 1 else 0.0
