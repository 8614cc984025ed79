"""Chapter 07's computed sentences read at every size: the gpu profile's sizes, both sides of each verdict."""

from __future__ import annotations

import pytest
import torch
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch07_masking_generation import prose
from fromscratch.training.history import History

GPU = get_profile("gpu").ch07
QUARTER = GPU.demo.steps // 4


def _losses(start, end, wobble=0.05):
    """A training run of demo.steps losses on a falling curve that ends near ``end``, with noise."""
    steps = GPU.demo.steps
    losses = [start + (end - start) * min(1.0, 2 * i / steps) + wobble * (-1) ** i for i in range(steps)]
    return History([{"step": i + 1, "loss": loss, "lr": 1e-3} for i, loss in enumerate(losses)])


@pytest.mark.parametrize(
    "unmasked, masked, says",
    [
        (_losses(8.2, 0.4), _losses(8.2, 2.6), "below the masked twin, more than the steps' noise"),
        (_losses(8.2, 2.6), _losses(8.2, 2.6), "no lower than the masked twin"),
        (_losses(8.2, 2.9), _losses(8.2, 2.6), "above the masked twin"),
    ],
)
def test_copying(unmasked, masked, says):
    text = prose.copying(unmasked, masked, QUARTER)
    assert says in text and f"last {QUARTER:,} steps" in text and "far more" not in text
    assert_reads(text, never_together=[("more than the steps' noise", "not found the copying trick")])


@pytest.mark.parametrize(
    "val, says", [(1.9, "it learned from the bytes before"), (5.2, "has not yet learned")]
)
def test_validation(val, says):
    text = prose.validation(1.8, val, 5.0)
    assert says in text
    assert_reads(text)


@pytest.mark.parametrize(
    "share, brackets, smoke, says",
    [
        (0.60, 3, False, "a hint that it tracks the markup"),
        (0.12, 3, False, "does not track the markup"),
        (0.50, 0, True, "does not track the markup"),  # no bracket in the window: no division by zero
    ],
)
def test_brackets(share, brackets, smoke, says):
    shown = 28
    on_brackets = torch.tensor([0.05, 0.02, 0.01, share])  # head 3 is the most bracket-minded
    is_bracket = torch.arange(shown) < brackets  # (t,): the first `brackets` bytes
    profile = get_profile("smoke" if smoke else "gpu")
    text = prose.brackets(3, on_brackets, is_bracket, shown, profile)
    assert says in text and ("smoke-sized" in text) == smoke
    assert f"head 3 puts {share:.2f} of its weight" in text
    assert_reads(text)
