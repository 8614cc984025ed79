"""Chapter 11's computed prose reads at every size: rendered with the ``gpu`` profile's sizes and with
synthetic results on both sides of every verdict (issue 43)."""

from __future__ import annotations

import random

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch11_longer_contexts import prose

GPU = get_profile("gpu").ch11
PARTS = GPU.eval_parts


def parts(value: float, wobble: float = 0.01) -> list[float]:
    """Bits per byte on each part: ``value`` on average, moving by about ``wobble`` from part to part, and
    a little differently for each value (two models never move in lockstep)."""
    draw = random.Random(round(value * 1e6))
    shifts = [draw.uniform(-1, 1) for _ in range(PARTS)]
    centre = sum(shifts) / PARTS
    return [value + wobble * ((i % 3) - 1) + 0.01 * (s - centre) for i, s in enumerate(shifts)]


def test_paired_judges_the_part_by_part_differences():
    a = parts(2.0)
    assert prose.paired(a, [x + 0.05 for x in a]).side == "ahead"  # a is lower on every part
    assert prose.paired([x + 0.05 for x in a], a).side == "behind"
    noisy = [x + (0.05 if i % 2 else -0.049) for i, x in enumerate(a)]  # no consistent gap
    assert prose.paired(a, noisy).side == "within noise"
    assert prose.mean([1.0, 2.0, 3.0]) == 2.0
    with pytest.raises(ValueError):
        prose.paired([1.0], [1.0, 2.0])


KV = {  # ms per byte without and with the cache at the gpu profile's prompts
    "faster everywhere": ([1.0, 2.0, 8.0, 30.0], [0.5, 0.6, 1.5, 5.0]),
    "slower, then faster": ([0.8, 0.9, 1.2, 4.0], [1.4, 1.6, 1.1, 1.3]),  # the GPU check's pattern
    "never clearly faster": ([1.0, 1.1, 1.2, 1.3], [0.9, 1.0, 1.1, 1.2]),
}


@pytest.mark.parametrize("case", KV)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_kv_cache_reads(case, device):
    plain, cached = KV[case]
    text = prose.kv_cache(GPU.kv_prompts, plain, cached, device=device)
    assert_reads(text)
    assert ("one CPU thread" in text) == (device == "cpu") and "cuda" not in text
    assert " and 256 and " not in text  # lists read "64, 256 and 1,024"
    if case == "slower, then faster":
        assert "clearly slower at 64 and 256 bytes" in text and "clearly faster" in text
        assert "within a factor of 1.5 of recomputing at 1,024 bytes" in text
    if case == "never clearly faster":
        assert "hides the work" in text and "clearly faster" not in text


XL = {
    "memory helps and is relied on": (2.38, 2.52, 2.51),
    "memory does not help": (2.50, 2.50, 2.501),
    "the twin does better": (2.50, 2.49, 2.40),
}


@pytest.mark.parametrize("case", XL)
def test_xl_memory_reads(case):
    with_memory, taken_away, without = XL[case]
    xl = {
        "with memory": parts(with_memory),
        "memory taken away": parts(taken_away),
        "without memory": parts(without),
    }
    text = prose.xl_memory(xl, GPU)
    assert_reads(text, never_together=[("lowers the bits per byte", "does not clearly help")])
    assert f"{GPU.eval_bytes:,} validation bytes in {PARTS} parts" in text and "one training run each" in text
    expected = {
        "memory helps and is relied on": "learned to rely on it",
        "memory does not help": "does not clearly help",
        "the twin does better": "the twin trained without memory does better",
    }[case]
    assert expected in text


def test_sparse_timing_reads_when_sparse_is_faster_or_slower():
    lengths = list(GPU.sparse_lengths)
    dense = [5.2, 48.5, 227.6, 889.4, 4028.4]
    sparse = [1.3, 2.5, 6.1, 15.9, 115.4]
    mb = [4 * 8 * t * t / 2**20 for t in lengths]
    text = prose.sparse_timing(lengths, dense, sparse, mb, [m / 20 for m in mb])
    assert_reads(text)
    assert "times faster" in text and f"t = {lengths[-1]:,}" in text
    slower = prose.sparse_timing(lengths, [1.0] * 5, [2.0] * 5, mb, mb)  # sparse slower: no "0 times"
    assert_reads(slower)
    assert "2.0 times slower" in slower


SPARSE = {
    "both sparse ahead": (3.53, 3.33, 3.04),
    "dense ahead of both": (3.00, 3.20, 3.30),
    "all within noise": (3.00, 3.001, 2.999),
    "one ahead, one behind": (3.00, 2.80, 3.20),
}


@pytest.mark.parametrize("case", SPARSE)
def test_sparse_models_read(case):
    dense, strided, fixed = SPARSE[case]
    bits = {"dense": parts(dense), "strided": parts(strided), "fixed": parts(fixed)}
    text = prose.sparse_models(bits, GPU)
    assert_reads(text, never_together=[("Here seeing every pair paid", "inductive bias")])
    assert f"{GPU.sparse_steps:,} steps" in text and f"context {GPU.sparse_context}" in text
    if case in ("both sparse ahead", "one ahead, one behind"):
        assert f"{GPU.sparse_context / GPU.train_context:g} times as long" in text
    if case == "dense ahead of both":
        assert "the strided model is behind the dense one" in text and "seeing every pair paid" in text
    if case == "all within noise":
        assert text.count("within noise of the dense one") == 2


def schemes(longest: dict[str, float], first: dict[str, float]) -> dict[str, list[list[float]]]:
    return {s: [parts(first[s]), parts((first[s] + longest[s]) / 2), parts(longest[s])] for s in first}


FIRST = {"learned": 3.27, "sinusoidal": 2.95, "rope": 2.72, "alibi": 2.88, "t5": 2.80, "nope": 2.90}
EXTRAPOLATION = {
    "only ALiBi keeps": {
        "learned": 4.23,
        "sinusoidal": 4.68,
        "rope": 4.74,
        "alibi": 2.887,
        "t5": 3.5,
        "nope": 3.9,
    },
    "ALiBi best and fails": {
        "learned": 4.0,
        "sinusoidal": 4.0,
        "rope": 4.0,
        "alibi": 3.9,
        "t5": 3.9,
        "nope": 2.92,
    },
    "all keep": dict(FIRST),
    "none keeps": {s: v + 1 for s, v in FIRST.items()},
}


@pytest.mark.parametrize("case", EXTRAPOLATION)
def test_extrapolation_reads(case):
    first = dict(FIRST)
    if case == "ALiBi best and fails":
        first["alibi"] = 2.5
    text = prose.extrapolation(schemes(EXTRAPOLATION[case], first), GPU)
    assert_reads(text, never_together=[("and it keeps its score", "yet it changes by")])
    assert f"{max(GPU.factors)}L" in text and f"{GPU.position_steps:,} steps each" in text
    if case == "only ALiBi keeps":
        assert "their score" in text and ": ALiBi (the others" in text
        assert "ALiBi pays for its penalty" in text  # RoPE is best at L
    if case == "ALiBi best and fails":
        assert "the best is ALiBi" in text and "also" not in text
        assert "NoPE has no position it could meet untrained, and it keeps its score" in text
    if case == "all keep":
        assert "the others" not in text
    if case == "none keeps":
        assert "none of them (they change by" in text and "yet it changes by" in text
