"""Chapter 10's computed prose reads at every size: rendered with the ``gpu`` profile's sizes and with
synthetic results on both sides of every verdict (issue 43)."""

from __future__ import annotations

import math

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch10_modern_transformers import prose
from fromscratch.chapters.ch10_modern_transformers.bert_imdb import BertData
from fromscratch.chapters.ch10_modern_transformers.label_efficiency import CHAPTER_06
from fromscratch.chapters.results import quoted
from fromscratch.training.history import History

GPU = get_profile("gpu").ch10
FEW = GPU.label_efficiency
N_TEST = 25_000  # the gpu profile scores all the test reviews


def reviews(n_test: int) -> BertData:
    """The chapter's ``data``, as far as the prose reads it: ``n_test`` test reviews."""
    return BertData(train=[], test=[None] * n_test, vocab=None, mask_id=0)


def pretraining(losses: list[float]) -> History:
    return History([{"step": i + 1, "loss": loss, "lr": 1e-3} for i, loss in enumerate(losses)])


FLOOR = 5.3
CURVES = {  # the running mean against the floor: never, once (down or up), several times, below throughout
    "never": [10.0 - 0.001 * i for i in range(2_000)],
    "once": [10.0 - 0.004 * i for i in range(2_000)],
    "rising": [4.0 + 0.001 * i for i in range(2_000)],
    "several": [6.0 if (i // 200) % 2 == 0 else 4.6 for i in range(2_000)],
    "below throughout": [4.0] * 2_000,
}


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("at_mask", [4.4, 6.2])  # below and above the unigram baseline at [MASK]
@pytest.mark.parametrize("at_chosen", [4.5, 5.6, 6.0])  # past the floor, not, and above the unigram
def test_masked_lm_reads(curve, at_mask, at_chosen):
    text = prose.masked_lm(
        pretraining(CURVES[curve]), GPU.bert.vocab_size, at_mask, 5.9, at_chosen, 5.86, FLOOR
    )
    assert_reads(
        text,
        never_together=[
            ("never went below", "went below the copy-aware floor after"),
            ("reads the words around each blank", "shows no reading of the context"),
            ("all it shows", "reads the words around each blank"),
        ],
    )
    assert f"ln V = {math.log(GPU.bert.vocab_size):.1f}" in text and f"{GPU.bert.vocab_size:,} ids" in text
    expected = {
        "never": "never went below the copy-aware floor",
        "once": "went below the copy-aware floor after",
        "rising": "rose above the copy-aware floor after",
        "several": "crossed the copy-aware floor",
        "below throughout": "stayed below the copy-aware floor",
    }[curve]
    assert expected in text
    assert ("below** it" in text) == (at_mask < 5.9)
    assert ("reads the words around each blank" in text) == (at_chosen < FLOOR)  # the evaluation decides
    assert "only the last" not in text and "all it shows" not in text


def test_masked_lm_says_the_share_of_the_gap_in_points():
    text = prose.masked_lm(pretraining(CURVES["never"]), GPU.bert.vocab_size, 4.4, 5.9, 4.5, 6.0, 5.3)
    gap_all, gap_floor = 100 * (1 - 4.5 / 6.0), 100 * (1 - 5.3 / 6.0)
    assert f"so {gap_all - gap_floor:.1f} of those {gap_all:.1f} points go beyond it" in text
    assert_reads(text)


@pytest.mark.parametrize("pretrained", [0.90, 0.84, 0.80])  # ahead, level, behind a control at 0.84
def test_pretrained_vs_control_reads(pretrained):
    text = prose.pretrained_vs_control(pretrained, 0.84, reviews(N_TEST), GPU)
    assert_reads(text, never_together=[("ahead, beyond", "within the noise")])
    verdict = {0.90: "the pretrained encoder ahead", 0.84: "within the noise", 0.80: "the control ahead"}
    assert verdict[pretrained] in text
    assert f"{quoted('06', 'bag_accuracy'):.1%}" in text  # chapter 06's number, from its results.json
    cpu = get_profile("cpu").ch06
    assert f"reading {cpu.model.context:,} words" in text and f"these read {GPU.bert.context:,}" in text


def test_pretrained_vs_control_quotes_what_it_is_given():
    chapter_06 = {"bag": 0.5, "transformer": 0.75}
    text = prose.pretrained_vs_control(0.82, 0.81, reviews(1_000), GPU, chapter_06=chapter_06)
    assert_reads(text)
    assert "50.0% and 75.0%" in text
    assert list(CHAPTER_06.values()) == [quoted("06", "bag_accuracy"), quoted("06", "transformer_accuracy")]


@pytest.mark.parametrize("accuracy", [0.70, 0.503, 0.30])
def test_zero_shot_reads(accuracy):
    text = prose.zero_shot(accuracy, GPU.probe_test, 0.5, 0.85)
    assert_reads(text)
    verdict = {0.70: "above the 50.0%", 0.503: "no better than the 50.0%", 0.30: "below the 50.0%"}
    assert verdict[accuracy] in text


def test_lr_pick_says_where_the_rates_come_from():
    assert "in the `cpu` profile" in prose.lr_pick(FEW)  # the gpu profile reuses the cpu picks
    assert "by hand" in prose.lr_pick(get_profile("smoke").ch10.label_efficiency)
    assert_reads(prose.lr_pick(FEW))


def curve(random: float, ours: float, minilm: float) -> dict[tuple[int, str], list[float]]:
    return {
        (n, init): [value + 0.01 * k]
        for k, n in enumerate(FEW.chapter_labels)
        for init, value in (("random", random), ("ours", ours), ("minilm", minilm))
    }


CURVE_CASES = {
    "ours behind, MiniLM ahead": (0.62, 0.57, 0.75),
    "ours ahead, MiniLM behind": (0.62, 0.70, 0.55),
    "all within noise": (0.62, 0.625, 0.615),
    "random at chance": (0.50, 0.58, 0.80),
    "all at chance": (0.50, 0.505, 0.495),
}


@pytest.mark.parametrize("case", CURVE_CASES)
def test_label_efficiency_reads(case):
    text = prose.label_efficiency(curve(*CURVE_CASES[case]), FEW.test_reviews)
    assert_reads(text)
    for n in FEW.chapter_labels:
        assert f"At N = {n:,}" in text
    assert f"{FEW.test_reviews:,} test reviews" in text and "One seed each" in text
    expected = {
        "ours behind, MiniLM ahead": "5.0 points behind random weights, and MiniLM is 13.0 points ahead",
        "ours ahead, MiniLM behind": "8.0 points ahead of random weights, and MiniLM is 7.0 points behind",
        "all within noise": "ours is within noise of random weights",
        "random at chance": "(random weights at chance), ours is",
        "all at chance": "(all three at chance), ours is",
    }[case]
    assert expected in text


NEIGHBOURS = {
    "mixed": {w: ["great", "awful", "film"] for w in prose.PROBED},
    "one": {
        "good": ["great", "film", "awful"],
        "bad": ["the", "a", "an"],
        "best": ["x"] * 3,
        "worst": ["y"] * 3,
    },
    "same polarity only": {
        "good": ["great", "film", "plot"],
        "bad": ["awful"] * 3,
        "best": ["x"] * 3,
        "worst": ["y"] * 3,
    },
    "none": {w: ["the", "movie", "film"] for w in prose.PROBED},
}


@pytest.mark.parametrize("neighbours", NEIGHBOURS)
@pytest.mark.parametrize("ours", [0.70, 0.62, 0.55])  # ahead of, level with, behind random at 0.62
@pytest.mark.parametrize("tuned", [0.58, 0.75])  # below and above the probe on the same start
def test_frozen_start_reads(neighbours, ours, tuned):
    n = max(FEW.chapter_labels)
    fine_tuned = {(n, "ours"): [tuned]}
    text = prose.frozen_start(NEIGHBOURS[neighbours], {"ours": ours, "random": 0.62}, fine_tuned, FEW, 2_000)
    assert_reads(text, never_together=[("*more* sentiment", "*less* sentiment")])
    count = {
        "mixed": "all four have",
        "one": "one of the four has",
        "none": "none of the four has",
        "same polarity only": "none of the four has",
    }
    assert count[neighbours] in text
    side = {0.70: "*more* sentiment", 0.62: "about as much sentiment", 0.55: "*less* sentiment"}[ours]
    assert side in text
    assert ("The fine-tuning is what fails" in text) == (ours == 0.70 and tuned < ours)
    if "fine-tuning is what fails" in text:
        assert f"{FEW.steps(n):,} steps" in text and f"{FEW.lr('ours'):g}" in text
    if ours == 0.55:
        assert ("as the neighbours suggest" in text) == (neighbours in ("mixed", "one"))
