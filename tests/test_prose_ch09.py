"""Chapter 09's computed prose reads at every size: rendered with the ``gpu`` profile's sizes and
with synthetic results on both sides of every verdict (issue 43)."""

from __future__ import annotations

import random

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch09_encoder_decoder import bootstrap, prose
from fromscratch.chapters.ch09_encoder_decoder.prose import BAHDANAU, BOTTLENECK, TRANSFORMER
from fromscratch.metrics.translation import BleuScore
from fromscratch.training.history import History

GPU = get_profile("gpu").ch09
LABELS = ["0-9", "10-13", "14-17", "18-21", "22-25", "26+"]
COUNTS = [180, 260, 250, 160, 90, 60]


def bins(*scores: float) -> list[tuple[str, int, float]]:
    return list(zip(LABELS, COUNTS, scores, strict=True))


def lengths() -> list[int]:
    return [n for label, count in zip((5, 12, 16, 20, 24, 30), COUNTS, strict=True) for n in [label] * count]


def scored(bleu: dict[str, float]) -> dict[str, tuple[BleuScore, list[str]]]:
    """The chapter's ``results``: ``{name: (test BLEU, translations)}``, as ``evaluate`` returns them."""
    return {name: (BleuScore(score, "nrefs:1|tok:13a", sum(COUNTS)), []) for name, score in bleu.items()}


def rnns(minutes: float) -> dict[str, tuple[None, History, float]]:
    """The chapter's ``rnns``: ``{name: (model, history, minutes of training)}``."""
    return {name: (None, History([]), minutes) for name in (BOTTLENECK, BAHDANAU)}


def draws(bleu, by_bin=None, sd=0.3, resamples=200):
    """Synthetic bootstrap draws: every model's BLEU (and each bin's) jittered by ``sd``, independently."""
    rng = random.Random(0)
    by_bin = by_bin or {name: [] for name in bleu}
    return [
        {
            name: (bleu[name] + rng.gauss(0, sd), tuple(b + rng.gauss(0, sd) for *_, b in by_bin[name]))
            for name in bleu
        }
        for _ in range(resamples)
    ]


def test_resample_pairs_the_models_and_rescores_exactly():
    refs = ["ein hund läuft im park", "zwei kinder spielen", "eine frau liest ein buch", "ein mann"]
    good = ["ein hund läuft im park", "zwei kinder spielen", "eine frau liest", "ein mann"]
    drawn = bootstrap.resample(refs, {"a": good, "b": good}, [5, 3, 5, 2], [0, 4], resamples=50)
    assert len(drawn) == 50 and all(d["a"] == d["b"] for d in drawn)  # same sentences for both
    assert bootstrap.spread(drawn, lambda d: d["b"][0] - d["a"][0]) == 0.0
    assert len(drawn[0]["a"][1]) == 2  # two non-empty bins
    worse = bootstrap.resample(refs, {"a": good, "b": ["ein", "kinder", "frau", "mann"]}, resamples=50)
    assert bootstrap.spread(worse, lambda d: d["b"][0] - d["a"][0]) > 0
    with pytest.raises(ValueError, match="one translation per reference"):
        bootstrap.resample(refs, {"a": good[:2]})


def test_halves_weigh_bins_by_their_sentences():
    rows = [("a", 3, 0.0), ("b", 1, 0.0), ("c", 2, 0.0)]  # 6 sentences: 3 in the shorter half
    assert prose.halves(rows, [1.0, 2.0, 3.0]) == (1.0, pytest.approx((2 + 6) / 3))
    rows = [("a", 2, 0.0), ("b", 2, 0.0)]  # a bin across the middle counts in both halves
    assert prose.halves([("a", 4, 0.0)], [5.0]) == (5.0, 5.0)
    assert prose.halves(rows, [1.0, 3.0]) == (1.0, 3.0)


PLAIN = bins(20, 18, 17, 16, 14, 12)
CASES = {  # Bahdanau's bins: overall side, bins ahead, trend of the gap, which score lower on long ones
    "ahead, every bin, about the same": (bins(25, 23, 22, 21, 19, 17), 22.9, 17.7),
    "ahead, widening": (bins(21, 19, 19, 20, 19, 18), 22.0, 17.7),
    "behind, narrowing, none ahead": (bins(19, 16, 14, 12, 10, 8), 15.0, 17.7),
    "within noise, some bins": (bins(21, 17, 18, 15, 15, 11), 18.0, 17.7),
    "flat models": (bins(20, 20, 20, 20, 20, 20), 20.0, 17.7),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("sd", [0.3, 3.0])  # a quiet and a noisy test set
def test_bahdanau_by_length_reads(case, sd):
    attention, attention_bleu, plain_bleu = CASES[case]
    bleu = {BOTTLENECK: plain_bleu, BAHDANAU: attention_bleu}
    by_bin = {BOTTLENECK: PLAIN, BAHDANAU: attention}
    text = prose.bahdanau_by_length(
        by_bin, scored(bleu), rnns(GPU.rnn_train.minutes), lengths(), draws(bleu, by_bin, sd)
    )
    assert_reads(
        text,
        never_together=[
            ("ahead by", "points apart, within what resampling"),
            ("better on the long sentences", "about the same on both halves"),
            ("Both models score lower", "Neither scores"),
        ],
    )
    assert "one run each" in text and f"{GPU.rnn_train.minutes:.1f} minutes" in text


def test_bahdanau_by_length_picks_each_side():
    def text(attention, attention_bleu, sd=0.3):
        bleu = {BOTTLENECK: 17.7, BAHDANAU: attention_bleu}
        by_bin = {BOTTLENECK: PLAIN, BAHDANAU: attention}
        return prose.bahdanau_by_length(by_bin, scored(bleu), rnns(5.0), lengths(), draws(bleu, by_bin, sd))

    assert "ahead by 5.2 points" in text(CASES["ahead, every bin, about the same"][0], 22.9)
    assert "behind by 2.7 points" in text(CASES["behind, narrowing, none ahead"][0], 15.0)
    assert "within what resampling" in text(CASES["within noise, some bins"][0], 18.0)
    noisy = text(
        CASES["ahead, every bin, about the same"][0], 22.9, sd=3.0
    )  # the same gap, a noisier test set
    assert "5.2 points apart, within what resampling" in noisy
    assert "Neither scores clearly lower" in noisy
    assert "as the paper found" not in text(CASES["ahead, widening"][0], 22.0)
    assert "every length bin" in text(CASES["ahead, every bin, about the same"][0], 22.9)
    assert "none of the length bins" in text(CASES["behind, narrowing, none ahead"][0], 15.0)
    assert "better on the long sentences" in text(CASES["ahead, widening"][0], 22.0)
    assert "worse on the long sentences" in text(CASES["behind, narrowing, none ahead"][0], 15.0)
    assert "Only the bottleneck model scores lower" in text(CASES["flat models"][0], 20.0)
    low = {BOTTLENECK: 0.4, BAHDANAU: 1.0}
    low_bins = {BOTTLENECK: bins(0, 0, 0, 0, 0, 0), BAHDANAU: bins(1, 1, 1, 1, 1, 1)}
    near_zero = prose.bahdanau_by_length(low_bins, scored(low), rnns(0.5), lengths(), draws(low, low_bins))
    assert_reads(near_zero)
    assert "do not translate yet" in near_zero
    assert "do not translate yet" not in text(CASES["flat models"][0], 20.0)


def test_one_bin_and_one_sentence_read():
    one = [("0-9", 1, 10.0)]
    bleu = {BOTTLENECK: 10.0, BAHDANAU: 12.0}
    by_bin = {BOTTLENECK: one, BAHDANAU: [("0-9", 1, 12.0)]}
    text = prose.bahdanau_by_length(by_bin, scored(bleu), rnns(0.5), [7], draws(bleu, by_bin, resamples=1))
    assert_reads(text)
    assert "the one length bin" in text


@pytest.mark.parametrize("device", ["cpu", "cuda", "mps"])
@pytest.mark.parametrize("transformer", [0.30, 0.45, 0.80])  # faster, about as fast, slower than 0.44 s
def test_step_times_read(device, transformer):
    seconds = {BOTTLENECK: 0.44, BAHDANAU: 0.50, TRANSFORMER: transformer}
    text = prose.step_times(seconds, repeats=GPU.timing_repeats, device=device)
    assert_reads(text, never_together=[("decoder pays", "did not make")])
    assert ("one CPU thread" in text) == (device == "cpu")
    assert "cuda" not in text
    verdict = {0.30: "decoder pays", 0.45: "about as fast", 0.80: "did not make"}[transformer]
    assert verdict in text


def runs(load: float | None) -> dict[str, tuple[History, float]]:
    rows = [{"step": 1, "loss": 3.0, "lr": 1e-3}, {"step": 1, "seconds": 60.0, "val_bleu": 9.0}]
    if load is not None:
        rows[1]["load"] = load
    return {name: (History(rows), GPU.train.minutes) for name in (BOTTLENECK, BAHDANAU, TRANSFORMER)}


VERSUS = {  # transformer greedy, beam; Bahdanau greedy 22.9, beam 23.4
    "ahead with both": (25.0, 26.1),
    "behind with both": (20.0, 20.4),
    "within noise with both": (22.6, 23.9),
    "opposite sides": (24.5, 21.0),
    "only greedy separates": (20.5, 23.0),
    "only beam separates": (23.0, 26.0),
}


@pytest.mark.parametrize("case", VERSUS)
@pytest.mark.parametrize("load", [None, 1.0, 40.0])
def test_transformer_vs_bahdanau_reads(case, load):
    transformer_greedy, transformer_beam = VERSUS[case]
    greedy = {BOTTLENECK: 17.7, BAHDANAU: 22.9, TRANSFORMER: transformer_greedy}
    beam = {BOTTLENECK: 18.1, BAHDANAU: 23.4, TRANSFORMER: transformer_beam}
    all_bins = {
        BOTTLENECK: PLAIN,
        BAHDANAU: bins(25, 23, 22, 21, 19, 17),
        TRANSFORMER: bins(26, 22, 23, 20, 20, 18),
    }
    text = prose.transformer_vs_bahdanau(
        scored(greedy),
        scored(beam),
        all_bins,
        runs(load),
        GPU,
        "cpu",
        greedy_draws=draws(greedy),
        beam_draws=draws(beam),
        cores=16,
    )
    assert_reads(
        text,
        never_together=[
            ("with both decodings (by", "does not rank"),
            ("with both decodings (by", "only"),
            ("within noise of each other", "does not rank"),
        ],
    )
    expected = {
        "ahead with both": "is ahead of Bahdanau's GRU with both decodings",
        "behind with both": "is behind Bahdanau's GRU with both decodings",
        "within noise with both": "within noise of each other with both decodings",
        "opposite sides": "the order depends on the decoding",
        "only greedy separates": "only greedy decoding separates them",
        "only beam separates": "only beam search separates them",
    }[case]
    assert expected in text
    assert f"beam of {GPU.beam_size}" in text and "one run each" in text
    assert ("machine was busy" in text) == (load == 40.0)


def test_a_noisy_test_set_ranks_no_transformer():
    greedy = {BOTTLENECK: 17.7, BAHDANAU: 22.9, TRANSFORMER: 25.0}
    all_bins = {name: PLAIN for name in greedy}

    def text(sd):
        noisy = draws(greedy, sd=sd)
        return prose.transformer_vs_bahdanau(
            scored(greedy),
            scored(greedy),
            all_bins,
            runs(None),
            GPU,
            "cuda",
            greedy_draws=noisy,
            beam_draws=noisy,
        )

    assert "is ahead of Bahdanau's GRU with both decodings" in text(0.3)
    assert "within noise of each other with both decodings" in text(3.0)
    assert_reads(text(3.0))


def test_a_busy_gpu_run_says_nothing_of_the_cpu_load():
    greedy = {BOTTLENECK: 17.7, BAHDANAU: 22.9, TRANSFORMER: 25.0}
    all_bins = {name: PLAIN for name in greedy}
    text = prose.transformer_vs_bahdanau(
        scored(greedy),
        scored(greedy),
        all_bins,
        runs(40.0),
        GPU,
        "cuda",
        greedy_draws=draws(greedy),
        beam_draws=draws(greedy),
        cores=16,
    )
    assert_reads(text)
    assert "busy" not in text
