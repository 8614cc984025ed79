"""Chapter 15's computed sentences read at the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch15_assistant import prose
from fromscratch.chapters.ch15_assistant.assistant_imdb import Arm
from fromscratch.chapters.ch15_assistant.base_chat import Following
from fromscratch.chapters.ch15_assistant.preference import Preferences
from fromscratch.chapters.ch15_assistant.write_back import Survival
from fromscratch.metrics.intervals import wilson_interval
from fromscratch.training.sft import StepCost

SIZE = get_profile("gpu").ch15
N = 25_000  # the gpu profile scores every test review
CONTRADICTIONS = [("less than the noise", "pulls the answer")]


def _arm(name: str, n: int, accuracy: float, *, runs: int = 1, positive: float = 0.5, seed: int = 0) -> Arm:
    generator = torch.Generator().manual_seed(seed)
    correct = torch.rand(runs, N, generator=generator) < accuracy
    return Arm(name, n, correct, positive)


def _arms(lora: float, minilm: float, ends_positive: float, ends_negative: float) -> list[Arm]:
    k = SIZE.shots
    arms = [
        _arm("zero-shot", 0, 0.64, positive=0.3),
        _arm("zero-shot, calibrated", 0, 0.66),
        _arm(f"{k}-shot, ends positive", k, 0.55, runs=SIZE.shot_draws, positive=ends_positive, seed=1),
        _arm(f"{k}-shot, ends positive, calibrated", k, 0.6, runs=SIZE.shot_draws, seed=2),
        _arm(f"{k}-shot, ends negative", k, 0.6, runs=SIZE.shot_draws, positive=ends_negative, seed=3),
        _arm(f"{k}-shot, ends negative, calibrated", k, 0.6, runs=SIZE.shot_draws, seed=4),
    ]
    for n in SIZE.labels:
        arms += [
            _arm("LoRA-SFT", n, lora, runs=SIZE.seeds, seed=10 + n),
            _arm("ch. 06 classifier", n, 0.6, runs=SIZE.seeds, seed=20 + n),
            _arm("ch. 10 MiniLM", n, minilm, runs=SIZE.seeds, seed=30 + n),
        ]
    return arms


@pytest.mark.parametrize(
    ("lora", "minilm", "ends_positive", "ends_negative"),
    [(0.8, 0.7, 0.99, 0.4), (0.7, 0.8, 0.5, 0.5), (0.75, 0.75, 0.3, 0.8)],
)
def test_imdb_reads(lora, minilm, ends_positive, ends_negative):
    text = prose.imdb(_arms(lora, minilm, ends_positive, ends_negative), SIZE)
    assert_reads(text, never_together=CONTRADICTIONS)
    assert f"N = {max(SIZE.labels)}" in text and "the mean of 3 seeds" in text
    if ends_positive == ends_negative:
        assert "less than the noise" in text
    elif lora == minilm:
        assert "not told apart" in text


@pytest.mark.parametrize("after", [0.0, 0.9])
def test_base_chat_reads(after):
    before = Following(24, 0.0, 0.5, 0.2, 0.0)
    text = prose.base_chat(before, Following(24, after, after, after, after), (2.3, 0.8), SIZE)
    assert_reads(text)
    assert ("learned the format" in text) == (after > 0)


def test_the_rest_reads():
    cost = dict(trainable=1, total=2, parameter_bytes=100, gradient_bytes=10, optimizer_bytes=20)
    for lora_s, full_s in [(1.0, 2.0), (2.0, 1.0)]:
        costs = {
            "LoRA": StepCost(seconds=lora_s, activation_bytes=50, **cost),
            "full fine-tuning": StepCost(seconds=full_s, activation_bytes=500, **cost),
        }
        assert_reads(prose.step_cost(costs, SIZE, "cuda"))
    scores = {"sentiment": ("exact", 0.8), "translation": ("BLEU", 12.0)}
    for written in (scores, {"sentiment": ("exact", 0.6), "translation": ("BLEU", 12.0)}):
        assert_reads(prose.write_back(Survival(921_600, 0.97, 0.99, 0.12), 3e-6, scores, written))
    prefs = Preferences(
        wilson_interval(450, 500), wilson_interval(440, 500), wilson_interval(350, 500), (0.05, 0.04, 0.06)
    )
    assert_reads(prose.dpo(prefs, SIZE))
    strings = ["a probe string"] * 1_000
    sparse = SimpleNamespace(missing=frozenset(range(21)))  # SmolLM2's tokeniser lacks 21 byte values
    with_missing = prose.oracles([1e-5] * 20, strings, 120, sparse, [True] * 1_000)
    assert_reads(with_missing)
    assert "21 byte values" in with_missing and "got the same ids" in with_missing
    without = prose.oracles([1e-5] * 20, strings, 120, SimpleNamespace(), [True] * 999 + [False])
    assert_reads(without)
    assert "byte value" not in without and "did **not** all get the same ids" in without
    assert_reads(prose.greedy([True] * 20, 64))
