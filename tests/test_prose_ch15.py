"""Chapter 15's computed sentences read at the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

from dataclasses import replace
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
CONTRADICTIONS = [
    ("less than the noise", "pulls the answer"),
    ("took out a lean", "not neutral"),
    ("is ahead of the plain prompt", "not neutral"),
]


def _arm(
    name: str,
    n: int,
    accuracy: float,
    *,
    runs: int = 1,
    positive: float = 0.5,
    p: float | None = None,
    free: list[float] | None = None,
    seed: int = 0,
) -> Arm:
    """An arm with random answers right at ``accuracy``; ``p``: a prompt's mean p(positive) (spread over
    the reviews); ``free``: the content-free reviews' p(positive) it was calibrated with."""
    generator = torch.Generator().manual_seed(seed)
    correct = torch.rand(runs, N, generator=generator) < accuracy
    p_positive = None
    if p is not None:
        p_positive = (p + 0.05 * torch.randn(runs, N, generator=generator)).clamp(0, 1)
    content_free = None if free is None else torch.tensor([free] * runs)
    return Arm(name, n, correct, positive, p_positive, content_free)


def _arms(lora, minilm, ends_positive, ends_negative, *, p=(0.5, 0.5), calibrated=0.66) -> list[Arm]:
    k, draws = SIZE.shots, SIZE.shot_draws
    arms = [
        _arm("zero-shot", 0, 0.64, positive=0.3, p=0.4),
        _arm("zero-shot, calibrated", 0, calibrated, positive=0.2, free=[0.33, 0.83, 0.79]),
        _arm(f"{k}-shot, ends positive", k, 0.55, runs=draws, positive=ends_positive, p=p[0], seed=1),
        _arm(f"{k}-shot, ends positive, calibrated", k, 0.5, runs=draws, free=[0.9] * 3, seed=2),
        _arm(f"{k}-shot, ends negative", k, 0.6, runs=draws, positive=ends_negative, p=p[1], seed=3),
        _arm(f"{k}-shot, ends negative, calibrated", k, 0.6, runs=draws, free=[0.8] * 3, seed=4),
    ]
    for n in SIZE.labels:
        arms += [
            _arm("LoRA-SFT", n, lora, runs=SIZE.seeds, seed=10 + n),
            _arm("ch. 06 classifier", n, 0.6, runs=SIZE.seeds, seed=20 + n),
            _arm("ch. 10 MiniLM", n, minilm, runs=SIZE.seeds, seed=30 + n),
        ]
    return arms


@pytest.mark.parametrize(
    ("lora", "minilm", "shares", "p", "calibrated"),
    [
        (0.8, 0.7, (0.99, 0.4), (0.8, 0.4), 0.66),  # an order effect; calibration helps
        (0.7, 0.8, (0.5, 0.5), (0.5, 0.5), 0.64),  # no order effect; calibration changes nothing
        (0.75, 0.75, (1.0, 1.0), (0.87, 0.75), 0.52),  # the cpu run's case: saturated; calibration hurts
        (0.8, 0.7, (0.0, 0.002), (0.1, 0.2), 0.52),  # saturated the other way, pushed away from the label
    ],
)
def test_imdb_reads(lora, minilm, shares, p, calibrated):
    text = prose.imdb(_arms(lora, minilm, *shares, p=p, calibrated=calibrated), SIZE)
    assert_reads(text, never_together=CONTRADICTIONS)
    assert f"N = {max(SIZE.labels)}" in text and "the mean of 3 seeds" in text
    assert ("**saturated**" in text) == (shares[0] == shares[1] == 1.0 or max(shares) < 0.005)
    assert "behind of" not in text and "ahead of of" not in text
    if p[0] == p[1]:
        assert "less than the noise of these reviews" in text
    elif p[0] > p[1]:
        assert "pulls the answer towards itself" in text
    else:
        assert "pulls the answer away from itself" in text
    if calibrated < 0.6:
        assert "Calibrated, zero-shot is behind the plain prompt by" in text and "not neutral" in text
        assert '0.33 to "N/A", 0.83 to "[MASK]" and 0.79 to an empty review' in text
    if lora == minilm:
        assert "not told apart" in text


def test_few_shot_without_probabilities_says_the_shares_alone():
    k = SIZE.shots
    arms = [_arm(f"{k}-shot, ends {e}", k, 0.5, runs=3, positive=1.0, seed=s) for s, e in enumerate("pn")]
    arms = [
        replace(arms[0], name=f"{k}-shot, ends positive"),
        replace(arms[1], name=f"{k}-shot, ends negative"),
    ]
    text = prose.few_shot(arms, _arm("zero-shot", 0, 0.6), k)
    assert_reads(text)
    assert "**saturated**" in text and "probabilit" not in text


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
    worse = {"sentiment": ("exact", 0.6), "translation": ("BLEU", 12.0)}
    survivals = [Survival(921_600, 0.97, 0.99, 0.12), Survival(921_600, 0.2, 0.3, 0.95, "Q8_0")]
    for q4, q8 in [(scores, scores), (worse, scores), (worse, worse)]:
        text = prose.write_back(survivals, 3e-6, scores, {"Q4_1": q4, "Q8_0": q8})
        assert_reads(text)
        assert "of all entries" in text and "of those weights" not in text and "Written in Q8_0" in text
        assert ("Q4_1 and Q8_0 files equal" in text) == (q4 is q8 is scores)
    assert "Q8_0" not in prose.write_back(survivals[:1], 3e-6, scores, {"Q4_1": scores})
    pairs = SIZE.dpo_held_out
    right = torch.arange(pairs) < int(0.9 * pairs)  # the pairs the policy ranks right

    def prefs(policy: float, first: torch.Tensor | None = None) -> Preferences:
        return Preferences(
            wilson_interval(int(0.92 * pairs), pairs),
            wilson_interval(int(policy * pairs), pairs),
            wilson_interval(int(0.7 * pairs), pairs),
            (0.05, 0.04, 0.06),
            first,
        )

    assert_reads(prose.dpo(prefs(0.9), SIZE))
    for sft, verdict in [
        (right, "not told apart"),
        (torch.arange(pairs) < pairs // 2, "DPO is ahead of SFT"),
    ]:
        text = prose.dpo(prefs(0.9, right), SIZE, sft=prefs(sft.float().mean().item(), sft))
        assert_reads(text)
        assert "LoRA-SFT on the chosen answers" in text and verdict in text
    strings = ["a probe string"] * 1_000
    sparse = SimpleNamespace(missing=frozenset(range(21)))  # SmolLM2's tokeniser lacks 21 byte values
    with_missing = prose.oracles([1e-5] * 20, strings, 120, sparse, [True] * 1_000)
    assert_reads(with_missing)
    assert "21 byte values" in with_missing and "got the same ids" in with_missing
    without = prose.oracles([1e-5] * 20, strings, 120, SimpleNamespace(), [True] * 999 + [False])
    assert_reads(without)
    assert "byte value" not in without and "did **not** all get the same ids" in without
    assert_reads(prose.greedy([True] * 20, 64))


def test_the_record_holds_every_number_the_prose_reads():
    from fromscratch.chapters.ch15_assistant import headline

    arms = _arms(0.8, 0.7, 1.0, 1.0, p=(0.87, 0.75), calibrated=0.52)
    cost = dict(trainable=1, total=2, parameter_bytes=100, gradient_bytes=10, optimizer_bytes=20)
    costs = {"LoRA": StepCost(seconds=1.0, activation_bytes=50, **cost)}
    prefs = Preferences(
        wilson_interval(80, 100), wilson_interval(81, 100), wilson_interval(58, 100), (0.6, 0.5, 0.7)
    )
    numbers = headline.numbers(
        arms,
        following=(Following(24, 0.0, 0.5, 0.2, 0.25), Following(24, 1.0, 1.0, 1.0, 1.0)),
        losses=(1.59, 0.73),
        costs=costs,
        survivals=[Survival(13_271_040, 1.0, 1.0, 0.06), Survival(13_271_040, 0.3, 0.4, 0.9, "Q8_0")],
        prefs=prefs,
        sft_prefs=prefs,
    )
    k = SIZE.shots
    assert numbers["zero-shot N=0"] == round(arms[0].accuracy, 4)  # the keys other pages quote
    assert numbers[f"{k}-shot, ends positive N={k} p(positive)"] == pytest.approx(0.87, abs=0.01)
    assert numbers[f"{k}-shot, ends positive N={k} said positive"] == 1.0
    assert numbers['zero-shot, calibrated N=0 content-free p(positive) "N/A"'] == 0.33
    assert f"LoRA-SFT N={max(SIZE.labels)} run 2" in numbers
    assert numbers["15.3 after stopped"] == 1.0 and numbers["15.3 before both"] == 0.25
    assert numbers["15.4 write-back Q4_1 kept"] == 0.06 and numbers["15.4 write-back Q8_0 kept"] == 0.9
    assert numbers["15.4 LoRA bytes"] == 180
    assert numbers["15.5 DPO reward_accuracy"] == 0.8 and numbers["15.5 SFT on chosen kl mean"] == 0.6
    assert all(isinstance(v, int | float) for v in numbers.values())
