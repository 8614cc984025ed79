"""The shared reading checks of computed prose (``tests/prose_checks.py``) catch what they promise."""

from __future__ import annotations

import pytest
from prose_checks import assert_reads, problems


def test_a_good_text_reads():
    assert_reads(
        "In this run (1 seed, 3 runs, 0.1 seconds a step) the GRU was 2.5 times slower at $t = 64$,"
        " where $t^{2}$ grows; `{code}` stays. None of these 256 byte values... reads fine."
    )


@pytest.mark.parametrize(
    "text, what",
    [
        ("from 1 seeds", "singular count with a plural noun"),
        ("over 3 seed.", "plural count with a singular noun"),
        ("it was 0 times faster", "not positive"),
        ("it was -2.0 times faster", "not positive"),
        ("it was 0.0 times slower", "not positive"),
        ("an accuracy of nan", "uncomputed"),
        ("the value None here", "uncomputed"),
        ("a loss of tensor(0.5)", "uncomputed"),
        ("at {t_max} bytes", "unrendered placeholder"),
        ("the GRU  was slow", "two spaces"),
        ("the GRU was slow .", "space before punctuation"),
        ("the GRU was slow () here", "empty parentheses"),
        ("the GRU was slow.. here", "doubled full stop"),
    ],
)
def test_each_problem_is_found(text, what):
    found = problems(text)
    assert any(what in p for p in found), found
    with pytest.raises(AssertionError, match="does not read"):
        assert_reads(text)


def test_contradictions_and_empty_text():
    pair = [("is ahead", "within noise")]
    assert problems("A is ahead of B. C is behind D.", pair) == []
    assert "contradiction" in problems("A is ahead of B, within noise.", pair)[0]
    with pytest.raises(AssertionError, match="empty"):
        assert_reads("  ")
