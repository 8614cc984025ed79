"""BLEU, the standard score of machine translation, computed by sacreBLEU (chapter 09).

BLEU (Papineni et al. 2002) compares a system's translations with reference translations: the
geometric mean of the 1- to 4-gram precisions over the whole test set (a *corpus* score, not an
average of sentence scores), times a brevity penalty for output shorter than the references; 0-100.
Its value depends on details (tokenisation, casing, smoothing), so numbers are comparable only when
computed the same way: sacreBLEU (Post 2018) scores *detokenised* text with fixed rules and prints
a **signature** that says which. We never write our own BLEU.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BleuScore", "bleu", "bleu_by_length"]


@dataclass(frozen=True)
class BleuScore:
    """A corpus BLEU and how it was computed."""

    score: float  # corpus BLEU, 0-100
    signature: str  # sacreBLEU's signature, e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    sentences: int  # number of scored sentences

    def __str__(self) -> str:
        return f"{self.score:.1f} ({self.signature})"


def bleu(hypotheses: list[str], references: list[str]) -> BleuScore:
    """Corpus BLEU of detokenised ``hypotheses`` against one reference each, with sacreBLEU's defaults."""
    from sacrebleu.metrics import BLEU

    if len(hypotheses) != len(references):
        raise ValueError(
            f"bleu needs one hypothesis per reference, got {len(hypotheses)} hypotheses and "
            f"{len(references)} references."
        )
    if not references:
        raise ValueError("bleu needs at least one sentence.")
    metric = BLEU()
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return BleuScore(result.score, str(metric.get_signature()), len(references))


def bleu_by_length(
    hypotheses: list[str], references: list[str], source_lengths: list[int], edges: list[int]
) -> list[tuple[str, int, float]]:
    """Corpus BLEU of the sentences in each source-length bin (Bahdanau et al. 2015, Figure 2).

    ``edges`` are the bins' lower ends, e.g. ``[0, 10, 15, 20, 25]``: bin ``[10, 15)`` and so on, the
    last open-ended. Returns ``(label, sentences, BLEU)`` per non-empty bin.
    """
    rows = []
    for lo, hi in zip(edges, [*edges[1:], None], strict=True):
        picked = [i for i, n in enumerate(source_lengths) if n >= lo and (hi is None or n < hi)]
        if picked:
            label = f"{lo}-{hi - 1}" if hi is not None else f"{lo}+"
            score = bleu([hypotheses[i] for i in picked], [references[i] for i in picked]).score
            rows.append((label, len(picked), score))
    return rows
