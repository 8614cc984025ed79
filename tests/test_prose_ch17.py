"""Chapter 17's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

import numpy as np
import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch17_reasoning import prose
from fromscratch.chapters.ch17_reasoning.scores import Interval, Samples
from fromscratch.chapters.ch17_reasoning.tabular import ESTIMATORS, BiasVariance

SIZE = get_profile("gpu").ch17
N = SIZE.eval_samples


def flat(text):
    return " ".join(text.split())


def _results(biased: set[str]):
    rows = []
    for name in ESTIMATORS:
        for n in SIZE.group_sizes:
            scale = (n - 1) / n if name in biased else 1.0
            rows.append(
                BiasVariance(
                    name,
                    n,
                    bias=abs(1 - scale) + 0.001,
                    variance=4.0 / n,
                    scale=scale,
                    cosine=0.9999,
                    bias_se=0.004,
                )
            )
    return rows


@pytest.mark.parametrize("biased", [set(), {"GRPO"}, {"GRPO", "GRPO, no std"}, set(ESTIMATORS)])
def test_estimators(biased):
    text = prose.estimators(_results(biased), SIZE.draws)
    assert_reads(text)
    assert ("biased in size" in text) == bool(biased)
    if biased == set(ESTIMATORS):
        assert "no estimator" in text


def _samples(p_right: float, problems: int = SIZE.held_out, n: int = N) -> Samples:
    rng = np.random.default_rng(0)
    correct = rng.random((problems, n)) < p_right
    answers = [["7" if c else "8" for c in row] for row in correct]
    return Samples(correct, answers, np.ones_like(correct), np.full(correct.shape, 45), ["7"] * problems)


@pytest.mark.parametrize(
    "one, said",
    [
        (Interval(0.4, 0.35, 0.45), "room for reinforcement learning"),
        (Interval(0.0, 0.0, 0.0), "never right"),
        (Interval(1.0, 1.0, 1.0), "solved"),
    ],
)
def test_sft(one, said):
    text = prose.sft(_samples(one.value), one, Interval(0.9, 0.85, 0.95), SIZE.sft.steps, SIZE.held_out)
    assert_reads(text)
    assert said in text


@pytest.mark.parametrize(
    "rise, said", [(0.5, "still rising"), (0.0, "levelled off"), (-0.3, "fallen from its best")]
)
def test_curves(rise, said):
    steps = SIZE.rl.steps
    reward = list(np.linspace(0.4, 0.4 + rise, steps)) if rise >= 0 else [0.8] * (steps - 30) + [0.5] * 30
    curves = {"reward": reward, "length": [45.0] * steps, "entropy": [0.3] * steps, "kl": [0.01] * steps}
    text = prose.curves(curves, steps, SIZE.rl.problems * SIZE.rl.group)
    assert_reads(text)
    assert said in text


def _rows(one: Interval, many: Interval):
    def row(metric, change):
        return {
            "metric": metric,
            "before": Interval(0.4, 0.35, 0.45),
            "after": Interval(0.5, 0.45, 0.55),
            "change": change,
        }

    return [row("pass@1", one), row(f"pass@{N}", many), row("majority@1", one), row(f"majority@{N}", one)]


UP, FLAT, DOWN = Interval(0.1, 0.06, 0.14), Interval(0.01, -0.03, 0.05), Interval(-0.1, -0.14, -0.06)


@pytest.mark.parametrize(
    "one, many, said",
    [
        (UP, FLAT, "moved pass@1 toward"),
        (UP, UP, "some problems that none of the SFT model"),
        (FLAT, UP, "some problems that none of the SFT model"),
        (DOWN, FLAT, "made the model worse"),
        (FLAT, FLAT, "changed nothing"),
    ],
)
def test_before_after(one, many, said):
    text = prose.before_after(_rows(one, many), N, SIZE.held_out)
    assert_reads(text)
    assert said in flat(text)
    assert "one run" in text


def test_summary():
    assert_reads(prose.summary(_rows(UP, FLAT), N, 12.5))


@pytest.mark.parametrize(
    "one, said",
    [
        (Interval(0.2, 0.15, 0.25), "something to reinforce"),
        (Interval(0.0, 0.0, 0.0), "never right"),
        (Interval(1.0, 1.0, 1.0), "always right"),
    ],
)
def test_chat_before(one, said):
    chat = SIZE.chat
    text = prose.chat_before(
        _samples(one.value, chat.held_out, chat.eval_samples), one, chat.model, chat.held_out
    )
    assert_reads(text)
    assert said in text


@pytest.mark.parametrize("change, said", [(UP, "rose"), (FLAT, "within noise"), (DOWN, "fell")])
def test_chat_after(change, said):
    chat = SIZE.chat
    rows = [
        {
            "metric": "pass@1",
            "before": Interval(0.2, 0.15, 0.25),
            "after": Interval(0.3, 0.25, 0.35),
            "change": change,
        }
    ]
    samples = _samples(0.2, chat.held_out, chat.eval_samples)
    text = prose.chat_after(rows, samples, samples, chat, 3.5)
    assert_reads(text)
    assert said in text and "one run" in text
