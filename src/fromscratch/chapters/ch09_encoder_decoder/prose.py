"""Chapter 09's sentences about its own run: each function takes the run's numbers and returns a
paragraph whose verdicts come from :mod:`fromscratch.viz.verdicts` (issue 43).

The chapter prints them with ``viz.prose(...)``; ``tests/test_prose_ch09.py`` renders every branch with the
``gpu`` profile's sizes. Model names are the chapter's: ``"GRU bottleneck"``, ``"GRU + Bahdanau"`` and
``"transformer"``. BLEU bins are what :func:`fromscratch.metrics.translation.bleu_by_length` returns,
``[(label, sentences, BLEU), ...]``, the same bins for every model. Each run is one seed, so a BLEU gap
counts only beyond twice its spread over a paired bootstrap of the test sentences (``bootstrap.py``).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence

from fromscratch.chapters.ch09_encoder_decoder.bootstrap import Draw, spread
from fromscratch.chapters.ch09_encoder_decoder.pipeline import training_load
from fromscratch.chapters.ch09_encoder_decoder.profile import TranslationRun
from fromscratch.metrics.translation import BleuScore
from fromscratch.training.history import History
from fromscratch.viz.verdicts import compare, plural, times

NOT_TRANSLATING = 5.0  # test BLEU below which a model does not translate yet (a few matching words)
SAME_TIME = 0.1  # step timings within 10 % of each other count as equal (medians of a few steps)
BUSY = 1.5  # load average per core above which other work took steps from the training

BOTTLENECK, BAHDANAU, TRANSFORMER = "GRU bottleneck", "GRU + Bahdanau", "transformer"
Bins = Sequence[tuple[str, int, float]]


def halves(bins: Bins, values: Sequence[float]) -> tuple[float, float]:
    """The sentence-weighted mean of ``values`` (one per bin) over the bins holding the shorter half of the
    test sentences, and over those holding the longer half (a bin across the middle counts in both, in
    proportion): bins of a few sentences weigh little."""
    total = sum(n for _, n, _ in bins)
    if total < 1 or len(values) != len(bins):
        raise ValueError(
            f"halves needs one value per bin and some sentences, got {len(values)} for {len(bins)}."
        )
    shorter = longer = 0.0
    seen = 0
    for (_, n, _), value in zip(bins, values, strict=True):
        first = min(max(total / 2 - seen, 0.0), n)  # this bin's sentences in the shorter half
        shorter += first * value
        longer += (n - first) * value
        seen += n
    return shorter / (total / 2), longer / (total / 2)


def _bin_gaps(first: Bins, second: Bins) -> list[float]:
    """``second``'s BLEU minus ``first``'s, bin by bin."""
    if [label for label, *_ in first] != [label for label, *_ in second]:
        raise ValueError("the two models' bins differ: score both with the same bleu_by_length edges.")
    return [b - a for (*_, a), (*_, b) in zip(first, second, strict=True)]


def _in_bins(gaps: Sequence[float], who: str) -> str:
    """``"ahead in 4 of 6 length bins (-0.4 to +3.6 points)"``; a gap that rounds to +0.0 is not ahead."""
    ahead = sum(round(gap, 1) > 0 for gap in gaps)
    if ahead == len(gaps):
        where = "every length bin" if len(gaps) > 1 else "the one length bin"
    elif ahead == 0:
        where = "none of the length bins"
    else:
        where = f"{ahead} of {plural(len(gaps), 'length bin')}"
    spread = f"{gaps[0]:+.1f} points" if len(gaps) == 1 else f"{min(gaps):+.1f} to {max(gaps):+.1f} points"
    return f"{who} is ahead in {where} ({spread})"


def _noise(draws: Sequence[Draw], quantity) -> float:
    """Twice the bootstrap standard deviation of ``quantity`` (a gap computed from one draw): the floor
    a gap between single runs must pass to count."""
    return 2 * spread(draws, quantity)


def bahdanau_by_length(
    bins: dict[str, Bins],
    results: dict[str, tuple[BleuScore, list[str]]],
    rnns: dict[str, tuple[object, History, float]],
    lengths: Sequence[int],
    draws: Sequence[Draw],
) -> str:
    """Section 9.3: Bahdanau's model against the bottleneck one, on the whole test set and by source length.

    bins: the two models' BLEU bins, by model name; results: ``{name: (test BLEU, translations)}`` as
    :func:`~fromscratch.chapters.ch09_encoder_decoder.pipeline.evaluate` returns them; rnns: the chapter's
    ``{name: (model, history, minutes of training)}`` (the longest training is said); lengths: the source
    length (tokens) of every test sentence; draws: the two models rescored on resampled test sentences,
    with the same bins (:func:`~fromscratch.chapters.ch09_encoder_decoder.bootstrap.resample`): every gap
    below counts only beyond twice its spread over the draws.
    """
    bleu = {name: score.score for name, (score, _) in results.items()}
    minutes = max(m for *_, m in rnns.values())
    plain, attention = bins[BOTTLENECK], bins[BAHDANAU]
    plain_bleu, attention_bleu = bleu[BOTTLENECK], bleu[BAHDANAU]
    cuts = statistics.quantiles(lengths, n=10, method="inclusive") if len(lengths) > 1 else [lengths[0]] * 9
    overall = compare(
        attention_bleu, plain_bleu, floor=_noise(draws, lambda d: d[BAHDANAU][0] - d[BOTTLENECK][0])
    )
    said = {
        "ahead": f"ahead by {overall.gap:.1f} points, more than resampling the test sentences moves it",
        "behind": f"behind by {-overall.gap:.1f} points, more than resampling the test sentences moves it",
        "within noise": f"{abs(overall.gap):.1f} points apart, within what resampling the test sentences "
        "moves the gap",
    }[overall.side]
    gaps = _bin_gaps(plain, attention)
    short_gap, long_gap = halves(plain, gaps)

    def widened(draw: Draw) -> float:  # the longer half's gap minus the shorter half's, in one draw
        short, long = halves(
            plain, [b - a for a, b in zip(draw[BOTTLENECK][1], draw[BAHDANAU][1], strict=True)]
        )
        return long - short

    widening = compare(long_gap - short_gap, 0.0, floor=_noise(draws, widened))
    if widening.side == "within noise":
        trend = "about the same on both halves, within what resampling the test sentences moves it"
    elif widening.side == "ahead":
        trend = "in this run Bahdanau's model does relatively better on the long sentences"
    else:
        trend = "in this run Bahdanau's model does relatively worse on the long sentences"

    def drop(rows: Bins, values: Sequence[float]) -> float:  # the shorter half's BLEU minus the longer's
        short, long = halves(rows, values)
        return short - long

    lower = []  # the models that score lower on the longer half, beyond the test set's noise
    for name, key, rows in (
        ("the bottleneck model", BOTTLENECK, plain),
        ("Bahdanau's model", BAHDANAU, attention),
    ):
        noise = _noise(draws, lambda d, key=key, rows=rows: drop(rows, d[key][1]))
        if compare(drop(rows, [b for *_, b in rows]), 0.0, floor=noise).side == "ahead":
            lower.append(name)
    if len(lower) == 2:
        harder = "Both models score lower on the longer half than on the shorter: long sentences are harder."
    elif lower:
        harder = f"Only {lower[0]} scores lower on the longer half than on the shorter."
    else:
        harder = "Neither scores clearly lower on the longer half than on the shorter."
    low, high = cuts[0], cuts[-1]
    text = (
        f"In this run (about {minutes:.1f} minutes of training each, {overall.runs}) Bahdanau's model "
        f"scores **{attention_bleu:.1f}** test BLEU against the bottleneck model's {plain_bleu:.1f}, {said}. "
        f"{_in_bins(gaps, 'It')}. Weighting each bin by its sentences, Bahdanau's minus the bottleneck's "
        f"BLEU is {short_gap:+.1f} points over the shorter half of the test sentences and "
        f"{long_gap:+.1f} over the longer half: {trend}. {harder} Eight in ten test sentences here have "
        f"between {low:.0f} and {high:.0f} source tokens; a bin of few sentences moves by several points "
        "with the sentences that fall in it."
    )
    if max(plain_bleu, attention_bleu) < NOT_TRANSLATING:
        text += " Both scores are near zero: models this small and brief do not translate yet."
    return text


def _device_words(device: str) -> str:
    return {"cpu": "one CPU thread", "cuda": "the GPU", "mps": "Apple's GPU (MPS)"}.get(device, device)


def step_times(seconds: dict[str, float], *, repeats: int, device: str) -> str:
    """Section 9.4's timing pass: one training step of each model on the same batch (seconds, by model
    name; the median of ``repeats``); device: ``device.type`` of the run ("cpu" times on one thread)."""
    rnn = min(seconds[BOTTLENECK], seconds[BAHDANAU])
    speed = times(rnn / seconds[TRANSFORMER], same=SAME_TIME)
    if speed.startswith("about"):
        verdict = f"The transformer's step was {speed} as the faster RNN's."
    elif rnn > seconds[TRANSFORMER]:
        verdict = f"Here the parallel decoder pays: the transformer's step was {speed} than the faster RNN's."
    else:
        verdict = (
            f"The parallel decoder did not make the transformer's step faster here: it was {speed} than "
            "the faster RNN's, so per sentence the RNNs were not slower."
        )
    return (
        f"On {_device_words(device)}, one training step on the same batch took {seconds[BOTTLENECK]:.2f} s "
        f"for the GRU bottleneck, {seconds[BAHDANAU]:.2f} s with Bahdanau attention and "
        f"{seconds[TRANSFORMER]:.2f} s for the transformer (the median of {plural(repeats, 'timed step')}). "
        f"{verdict}"
    )


def _ranking(scores: dict[str, float]) -> str:
    order = sorted(scores, key=scores.get, reverse=True)
    return ", then ".join(f"{name} ({scores[name]:.1f})" for name in order)


def transformer_vs_bahdanau(
    results: dict[str, tuple[BleuScore, list[str]]],
    beam: dict[str, tuple[BleuScore, list[str]]],
    bins: dict[str, Bins],
    runs: dict[str, tuple[History, float]],
    size: TranslationRun,
    device: str,
    *,
    greedy_draws: Sequence[Draw],
    beam_draws: Sequence[Draw],
    cores: int | None = None,
) -> str:
    """Section 9.4's results: the transformer against Bahdanau's GRU, greedy against greedy and beam
    against beam (the decoding is never picked on the test set).

    results, beam: ``{name: (test BLEU, translations)}``, greedy and with a beam of ``size.beam_size``;
    bins: greedy BLEU by source length, by model name; runs: ``{name: (history, minutes of training)}``,
    the models compared (the load average the histories recorded says how busy the machine was); size: the
    chapter's sizes (``prof.ch09``); device: ``device.type``; greedy_draws, beam_draws: the models
    rescored on resampled test sentences (``bootstrap.resample``, the same seed for both), which say how
    far each gap moves with the test sentences; cores: the machine's (default: ``os.cpu_count()``).
    """
    greedy = {name: results[name][0].score for name in runs}
    beamed = {name: beam[name][0].score for name in runs}
    beam_size = size.beam_size
    minutes = max(m for _, m in runs.values())
    loads = [load for history, _ in runs.values() if (load := training_load(history))]
    busiest = max((high for _, high in loads), default=None)
    cores = cores or os.cpu_count() or 1

    def gap(draw: Draw) -> float:  # the transformer's lead in one draw of the test sentences
        return draw[TRANSFORMER][0] - draw[BAHDANAU][0]

    by_greedy = compare(greedy[TRANSFORMER], greedy[BAHDANAU], floor=_noise(greedy_draws, gap))
    by_beam = compare(beamed[TRANSFORMER], beamed[BAHDANAU], floor=_noise(beam_draws, gap))
    gaps = f"{abs(by_greedy.gap):.1f} points greedily, {abs(by_beam.gap):.1f} with a beam of {beam_size}"
    words = {"ahead": "ahead of", "behind": "behind", "within noise": "within noise of"}
    beam_words = f"with a beam of {beam_size}"
    if by_greedy.side == by_beam.side == "within noise":
        verdict = (
            "The transformer and Bahdanau's GRU are within noise of each other with both decodings "
            f"({gaps.replace(' points', ' points apart', 1)}; within what resampling the test "
            "sentences moves the gap)."
        )
    elif by_greedy.side == by_beam.side:
        verdict = (
            f"The transformer is {words[by_greedy.side]} Bahdanau's GRU with both decodings (by {gaps})."
        )
    else:
        verdict = (
            f"Greedily the transformer is {words[by_greedy.side]} Bahdanau's GRU ({by_greedy.gap:+.1f} "
            f"points), {beam_words} {words[by_beam.side]} it ({by_beam.gap:+.1f})"
        )
        if "within noise" in (by_greedy.side, by_beam.side):
            one = "greedy decoding" if by_beam.side == "within noise" else "beam search"
            verdict += f": only {one} separates them in this run."
        else:
            verdict += ": the order depends on the decoding, so this run does not rank the two."
    by_length = _in_bins(
        _bin_gaps(bins[BAHDANAU], bins[TRANSFORMER]), "By source length (greedy) the transformer"
    )
    text = (
        f"After about {minutes:.1f} minutes of training each ({by_greedy.runs}), greedy test BLEU ranks "
        f"{_ranking(greedy)}; {beam_words}: {_ranking(beamed)}. {verdict} {by_length}."
    )
    if device == "cpu" and busiest is not None and busiest > BUSY * cores:
        text += (
            f" The machine was busy while these trained (a load average up to {busiest:.1f} on "
            f"{plural(cores, 'core')}): the steps, and so the scores, fall short of a quiet machine's."
        )
    return text + " Section 9.7 says what longer runs showed."


__all__ = [
    "BUSY",
    "NOT_TRANSLATING",
    "SAME_TIME",
    "bahdanau_by_length",
    "halves",
    "step_times",
    "transformer_vs_bahdanau",
]
