"""Chapter 12's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

from dataclasses import replace

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch12_going_big import prose

GB = get_profile("gpu").ch12
DEVICES = ("cpu", "cuda")


@pytest.mark.parametrize("device", DEVICES)
def test_how_timed_names_a_thread_only_on_a_cpu(device):
    said = prose.how_timed(device, GB.repeats)
    assert_reads(said)
    assert ("thread" in said) == (device == "cpu")
    assert ("GPU" in said) == (device == "cuda")
    assert prose.how_timed("cpu", 1) == "median of 1 step, torch on one CPU thread"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "speed, said",
    [(3.2, "times faster** than fp32"), (0.004, "times slower** than fp32"), (1.01, "about as fast")],
)
@pytest.mark.parametrize(
    "bpb, ended", [(2.41, "above fp32"), (2.30, "below fp32"), (2.35, "ended at fp32's")]
)
def test_half_precision(device, speed, said, bpb, ended):
    name = "fp16" if device == "cuda" else "bf16"
    results = {"fp32": (20_000.0, 2.35), name: (20_000.0 * speed, bpb)}
    text = prose.half_precision(results, steps=GB.amp_train.steps, device=device)
    assert_reads(text)
    assert said in text and ended in text
    assert "one run of each" in text  # one seed never decides the lesson
    assert f"{GB.amp_train.steps:,} steps" in text


@pytest.mark.parametrize(
    "ratios, than",
    [
        ((1.6, 1.7, 1.9, 2.2), "more than"),
        ((1.05, 1.1, 1.12, 1.15), "less than"),
        ((1.3, 1.33, 1.35, 1.4), "about"),
        ((1.1, 1.3, 1.6, 1.4), "scattered around"),
    ],
)
@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_cost_against_the_theory(ratios, than, device):
    text = prose.checkpoint_cost(ratios, GB, device, 0.4)
    assert_reads(text)
    assert f": {than} the $4/3$" in text
    assert "depths 6, 12, 24 and 48" in text and f"median of {GB.repeats} steps per depth" in text
    assert ("thread" in text) == (device == "cpu")


def test_checkpoint_cost_one_depth():
    text = prose.checkpoint_cost([1.31], replace(GB, checkpoint_depths=(12,), repeats=1), "cpu", 1.0)
    assert_reads(text)
    assert "$\\times 1.31$ per step at depth 12: about" in text


@pytest.mark.parametrize("speed", [2.5, 0.3, 1.0])
def test_summary(speed):
    results = {"fp32": (1_000.0, 2.0), "bf16": (1_000.0 * speed, 2.0)}
    text = prose.summary(results, [1.3, 1.5], device="cuda")
    assert_reads(text)
    assert ("about as fast as fp32" in text) == (speed == 1.0)
