"""Chapter 16's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

import math

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch16_flash_attention import prose
from fromscratch.chapters.ch16_flash_attention.prose import FUSED, NAIVE, OURS

SIZE = get_profile("gpu").ch16
T = SIZE.lengths[-1]
MiB = 2**20
SQUARE = T * T * 4  # one (t, t) matrix of fp32 numbers
RETURNED = 4 * T * SIZE.head_dim * 4  # the output and the gradients of q, k and v, fp32
DEVICES = ("cpu", "cuda")


def series(last: float, growth: float) -> list[float]:
    """Peaks at every length of the profile, ending at ``last`` and growing ``growth`` times per length."""
    return [last / growth ** (len(SIZE.lengths) - 1 - i) for i in range(len(SIZE.lengths))]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "matrices, held",
    [(3.01, "about 3 such matrices"), (2.2, "about 2 such matrices"), (1.02, "about as large as")],
)
@pytest.mark.parametrize(
    "fused, said", [(RETURNED * 1.1, "times smaller than naive"), (None, "about as large as naive")]
)
def test_naive_memory(matrices, held, fused, said):
    naive = matrices * SQUARE
    peaks = {NAIVE: series(naive, 4), FUSED: series(fused or naive, 2)}
    text = prose.naive_memory(peaks, SIZE.lengths, SIZE.head_dim)
    assert_reads(text, never_together=[("such matrices", "one such matrix")])
    assert held in text and said in text
    assert f"At $t$ = {T:,}" in text
    assert f"take {RETURNED / MiB:,.1f} MiB" in text


def test_naive_memory_below_one_matrix_reads():
    peaks = {NAIVE: series(0.6 * SQUARE, 4), FUSED: series(RETURNED, 2)}
    text = prose.naive_memory(peaks, SIZE.lengths, SIZE.head_dim)
    assert_reads(text)
    assert "1.7 times smaller than the" in text and "one such matrix at a time" in text


OURS_CASES = {  # ours' last peak, its growth per doubling, the fused kernel's last peak
    "close to fused, linear": (RETURNED * 1.1, 1.95, RETURNED * 1.15),
    "smaller than fused, slow growth": (RETURNED * 1.6, 1.3, RETURNED * 4),
    "larger than fused, fast growth": (RETURNED * 3, 2.6, RETURNED * 1.05),
    "flat": (RETURNED * 4, 1.0, RETURNED * 1.05),
}


@pytest.mark.parametrize("case", OURS_CASES)
@pytest.mark.parametrize("naive_growth", [3.98, 3.0, 5.0])
def test_tiles_memory(case, naive_growth):
    ours, growth, fused = OURS_CASES[case]
    peaks = {
        NAIVE: series(3 * SQUARE, naive_growth),
        FUSED: series(fused, 2),
        OURS: series(ours, growth),
    }
    text = flat(prose.tiles_memory(peaks, SIZE.lengths, SIZE.head_dim))
    assert_reads(
        text,
        never_together=[
            ("close to PyTorch's", "than PyTorch's"),
            ("nearly all of it", "less than half"),
            ("most of it", "less than half"),
        ],
    )
    beside = {
        "close to fused, linear": "close to PyTorch's fused kernel's",
        "smaller than fused, slow growth": "times smaller than PyTorch's",
        "larger than fused, fast growth": "times larger than PyTorch's",
        "flat": "times larger than PyTorch's",
    }[case]
    assert beside in text
    ours_grew = {
        "close to fused, linear": "close to the 2 times",
        "smaller than fused, slow growth": "less than the 2 times",
        "larger than fused, fast growth": "more than the 2 times",
        "flat": "ours did not grow",
    }[case]
    assert ours_grew in text
    naive_grew = {3.98: "close to the 4 times", 3.0: "less than the 4 times", 5.0: "more than the 4 times"}
    assert f"peak grew {naive_growth:.2f} times, {naive_grew[naive_growth]}" in text
    much = {
        "close to fused, linear": "most of it (91 %)",
        "smaller than fused, slow growth": "most of it (62 %)",
        "larger than fused, fast growth": "less than half of it (33 %)",
        "flat": "less than half of it (25 %)",
    }[case]
    assert much in text
    assert f"From $t$ = {SIZE.lengths[-2]:,} to {T:,}" in text
    assert "(within 25 %)" in text or "close to PyTorch's" not in text


def test_tiles_memory_all_returned_and_one_length():
    peaks = {NAIVE: series(3 * SQUARE, 4), FUSED: series(RETURNED, 2), OURS: series(RETURNED * 1.01, 2)}
    text = prose.tiles_memory(peaks, SIZE.lengths, SIZE.head_dim)
    assert_reads(text)
    assert "nearly all of it" in text
    with pytest.raises(ValueError, match="two lengths"):
        prose.tiles_memory({k: v[-1:] for k, v in peaks.items()}, SIZE.lengths[-1:], SIZE.head_dim)


def tiles_share() -> float:
    n = math.ceil(SIZE.timing_length / SIZE.block)
    return n * (n + 1) / 2 / n**2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "took, said", [(0.0, "close to the"), (0.3, "more than the"), (-0.3, "less than the")]
)
def test_causal_time(device, took, said):
    seconds = {False: 2.0, True: 2.0 * (tiles_share() + took)}
    text = flat(prose.causal_time(seconds, SIZE, device=device, load=2.5))
    assert_reads(text, never_together=[("close to the", "more than the"), ("close to the", "less than the")])
    assert said in text and f"{tiles_share():.2f} of the tiles it computes" in text
    assert ("on the diagonal also build and apply a mask" in text) == (took > 0)
    assert f"{SIZE.heads} heads, blocks of {SIZE.block}" in text
    assert f"median of {SIZE.repeats} forward and backward passes" in text
    assert ("one CPU thread, load average 2.5" in text) == (device == "cpu")
    assert ("on the GPU" in text) == (device == "cuda")
    assert "cuda" not in text and "load" not in text.replace("load average 2.5", "")


def test_causal_time_says_no_load_it_does_not_know():
    text = prose.causal_time({False: 1.0, True: 0.6}, SIZE, device="cpu", load=float("nan"))
    assert_reads(text)
    assert "load" not in text and "one CPU thread" in text


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "ours, ours_said",
    [
        (40.0, "40 times slower than PyTorch's"),
        (5.0, "5.0 times slower than PyTorch's"),
        (1.02, "about as fast as PyTorch's"),
        (0.5, "2.0 times faster"),
    ],
)
@pytest.mark.parametrize(
    "naive, naive_said", [(1.2, "1.2 times slower than it"), (0.98, "about as fast as it")]
)
def test_speeds(device, ours, ours_said, naive, naive_said):
    fused = 0.01
    seconds = {NAIVE: naive * fused, OURS: ours * fused, FUSED: fused}
    text = flat(prose.speeds(seconds, 1e9, SIZE, device=device, load=1.0))
    assert_reads(text)
    assert ours_said in text and naive_said in text
    assert f"{1e9 / seconds[OURS] / 1e9:,.1f} GFLOP/s" in text
    assert f"At $t$ = {SIZE.timing_length:,} with {SIZE.heads} heads" in text
    assert ("load average" in text) == (device == "cpu")
    assert "1.0 times" not in text


def test_one_repeat_and_one_head_read():
    one = SIZE.__class__(**{**SIZE.__dict__, "repeats": 1, "heads": 1})
    text = prose.speeds({NAIVE: 2.0, OURS: 3.0, FUSED: 1.0}, 1e9, one, device="mps", load=0.0)
    assert_reads(text)
    assert "1 forward and backward pass " in text and "with 1 head " in text and "Apple's GPU" in text
