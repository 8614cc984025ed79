"""The verdict helpers of computed prose (``fromscratch.viz.verdicts``): every branch, on both sides."""

from __future__ import annotations

import math

import pytest

from fromscratch.viz import verdicts as v


def test_plural_and_join_words():
    assert v.plural(1, "seed") == "1 seed"
    assert v.plural(3, "seed") == "3 seeds"
    assert v.plural(0, "seed") == "0 seeds"
    assert v.plural(1_000, "review") == "1,000 reviews"
    assert v.plural(2, "pass", "passes") == "2 passes"
    assert v.plural(1.0, "step") == "1 step"
    assert v.plural(2.5, "minute") == "2.5 minutes"
    assert v.join_words([]) == ""
    assert v.join_words(["a"]) == "a"
    assert v.join_words(["a", "b"]) == "a and b"
    assert v.join_words([2, 4, 8]) == "2, 4 and 8"
    assert v.join_words(["x", "y", "z"], last="or") == "x, y or z"
    assert v.seeds_said(1) == "one run"
    assert v.seeds_said(3) == "the mean of 3 seeds"


@pytest.mark.parametrize(
    "ratio, said",
    [
        (2.5, "2.5 times faster"),
        (0.4, "2.5 times slower"),
        (1.04, "about as fast"),
        (0.96, "about as fast"),
        (1.06, "1.1 times faster"),
        (0.057, "17.5 times slower"),
    ],
)
def test_times_never_says_zero_or_negative(ratio, said):
    assert v.times(ratio) == said


def test_times_other_words_and_bad_ratios():
    assert v.times(12.0, more="smaller", less="larger") == "12.0 times smaller"
    assert v.times(0.5, more="larger", less="smaller") == "2.0 times smaller"
    assert v.times(1.0, more="larger", less="smaller") == "about as large"
    assert v.times(1.0, more="bigger", less="smaller") == "about as big"
    assert v.times(1.0, more="more accurate", less="less accurate") == "about as accurate"
    assert v.times(3.0, digits=0) == "3 times faster"
    for bad in (0.0, -2.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="positive, finite"):
            v.times(bad)


def test_binomial_se():
    assert v.binomial_se(0.5, 100) == pytest.approx(0.05)
    assert v.binomial_se(1.0, 10) == 0.0
    with pytest.raises(ValueError, match="n >= 1"):
        v.binomial_se(0.5, 0)


def test_compare_ahead_behind_and_within_noise():
    ahead = v.compare(0.88, 0.85, floor=0.01)
    assert (ahead.side, ahead.decided) == ("ahead", False)  # one seed never decides a lesson
    assert ahead.runs == "one run each"
    assert ahead.says("the bag", "the transformer") == "the bag is ahead of the transformer by 3.0 points"
    behind = v.compare(0.85, 0.88, floor=0.01)
    assert behind.side == "behind"
    assert behind.says("the bag", "the transformer") == "the bag is behind the transformer by 3.0 points"
    tied = v.compare(0.875, 0.871, floor=0.01)
    assert (tied.side, tied.decided) == ("within noise", False)
    assert tied.says("A", "B") == "A and B are within noise of each other (0.4 points apart)"
    exact = v.compare(0.5, 0.5)  # no noise at all: equal is still not ahead
    assert exact.side == "within noise"


def test_compare_seeds_and_spread():
    # three seeds, a gap of 2 points, spread 0.5 each: noise 2 * 0.707 / 1.73 = 0.8 points -> decided
    clear = v.compare(0.86, 0.84, sd=(0.005, 0.005), seeds=3)
    assert clear.side == "ahead" and clear.decided and clear.runs == "the mean of 3 seeds each"
    assert clear.noise == pytest.approx(2 * math.hypot(0.005, 0.005) / math.sqrt(3))
    # the same gap with a spread of 3 points each is noise
    noisy = v.compare(0.86, 0.84, sd=(0.03, 0.03), seeds=3)
    assert noisy.side == "within noise" and not noisy.decided
    # the floor wins when the seeds agree closely
    assert v.compare(0.86, 0.84, sd=(0.0, 0.0), seeds=3, floor=0.05).side == "within noise"
    assert v.compare(1.0, 2.0, seeds=2).says("a", "b", scale=1, unit="s") == "a is behind b by 1.0 s"
    with pytest.raises(ValueError, match="at least one run"):
        v.compare(1, 2, seeds=0)


def test_relative_to():
    assert v.relative_to(1.4, 1.0, tol=0.1) == "above"
    assert v.relative_to(0.95, 1.0, tol=0.1) == "close to"
    assert v.relative_to(1.1, 1.0, tol=0.1) == "close to"  # the edge is close
    assert v.relative_to(0.6, 1.0, tol=0.1) == "below"


def test_versus_chance():
    # 1,000 items: a guess's standard error is 1.6 points, so 2 of them is 3.2
    assert v.versus_chance(0.51, 0.5, 1_000) == "at"
    assert v.versus_chance(0.49, 0.5, 1_000) == "at"
    assert v.versus_chance(0.60, 0.5, 1_000) == "above"
    assert v.versus_chance(0.40, 0.5, 1_000) == "below"
    assert v.versus_chance(0.60, 0.5, 20) == "at"  # few items: 10 points are noise
    assert v.versus_chance(0.95, 0.5, 1_000, solved=0.9) == "solved"
    assert v.versus_chance(0.80, 0.5, 1_000, solved=0.9) == "above"
    assert v.versus_chance(0.90, 0.5, 1_000, solved=0.9) == "solved"  # the edge is solved


def test_trend():
    assert v.trend([0.6, 0.8, 0.85, 0.84], noise=0.02) == "flat"  # a dip within noise
    assert v.trend([0.6, 0.8, 0.85, 0.80], noise=0.02) == "fell"
    assert v.trend([0.6, 0.7, 0.75, 0.85], noise=0.02) == "rising"
    assert v.trend([0.6, 0.7, 0.75, 0.76], noise=0.02) == "flat"
    assert v.trend([0.6], noise=0.02) == "flat"
    assert v.trend([], noise=0.02) == "flat"
    assert v.trend([-3.0, -2.0, -1.5], noise=0.1) == "rising"  # a falling loss, negated


def test_crossing_never():
    never = v.crossing([64, 128, 256], [1.0, 2.0, 3.0], [2.0, 4.0, 8.0])
    assert (never.kind, never.at, never.above) == ("never", None, "b")
    assert v.crossing([1, 2], [5.0, 5.0], [1.0, 2.0]).above == "a"
    tied = v.crossing([1, 2], [1.0, 2.0], [1.0, 2.0])
    assert (tied.kind, tied.above) == ("never", None)


def test_crossing_once_and_stays():
    once = v.crossing([64, 128, 256, 512], [1.0, 2.0, 5.0, 9.0], [2.0, 3.0, 4.0, 5.0])
    assert (once.kind, once.at, once.above, once.changes) == ("once", 256, "a", (256,))
    # within the tolerance a point counts as a tie and does not flip the order
    wobble = v.crossing([1, 2, 3], [1.0, 1.01, 0.5], [1.005, 1.0, 1.0], rel_tol=0.02)
    assert (wobble.kind, wobble.above) == ("never", "b")


def test_crossing_several():
    # the GPU case of chapter 08: slower at 64, faster in between, slower again at the end
    several = v.crossing([64, 256, 1024, 8192], [2.0, 1.0, 1.0, 3.0], [1.0, 2.0, 2.0, 2.0])
    assert (several.kind, several.at, several.changes, several.above) == ("several", None, (256, 8192), "a")
    with pytest.raises(ValueError, match="one value each"):
        v.crossing([1, 2], [1.0], [1.0, 2.0])
