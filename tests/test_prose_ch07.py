"""Chapter 07's computed sentences read at every size: the gpu profile's sizes, both sides of each verdict."""

from __future__ import annotations

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch07_masking_generation import prose

GPU = get_profile("gpu").enwik8
QUARTER = GPU.demo.steps // 4


def _losses(start, end, wobble=0.05):
    """A falling curve of demo.steps training losses that ends near ``end``, with noise."""
    steps = GPU.demo.steps
    return [start + (end - start) * min(1.0, 2 * i / steps) + wobble * (-1) ** i for i in range(steps)]


@pytest.mark.parametrize(
    "unmasked, masked, says",
    [
        (_losses(8.2, 0.4), _losses(8.2, 2.6), "far more than the steps' noise"),
        (_losses(8.2, 2.6), _losses(8.2, 2.6), "no lower than the masked twin"),
        (_losses(8.2, 2.9), _losses(8.2, 2.6), "above the masked twin"),
    ],
)
def test_copying(unmasked, masked, says):
    text = prose.copying(unmasked, masked, QUARTER)
    assert says in text and f"last {QUARTER:,} steps" in text
    assert_reads(text, never_together=[("far more than", "not found the copying trick")])


@pytest.mark.parametrize(
    "val, says", [(1.9, "it learned from the bytes before"), (5.2, "has not yet learned")]
)
def test_validation(val, says):
    text = prose.validation(1.8, val, 5.0)
    assert says in text
    assert_reads(text)


@pytest.mark.parametrize(
    "share, bracket_share, smoke, says",
    [
        (0.60, 0.10, False, "a hint that it tracks the markup"),
        (0.12, 0.10, False, "does not track the markup"),
        (0.50, 0.0, True, "does not track the markup"),  # no bracket in the window: no division by zero
    ],
)
def test_brackets(share, bracket_share, smoke, says):
    text = prose.brackets(3, share, bracket_share, 28, smoke)
    assert says in text and ("smoke-sized" in text) == smoke
    assert_reads(text)
