"""Chapter 16's sentences about its own run: each takes the run's measurements and sizes and returns the
paragraph the chapter shows under them, ``viz.prose(prose.tiles_memory(peaks, size.lengths, size.head_dim))``.

Peaks are what :func:`~fromscratch.chapters.ch16_flash_attention.pipeline.memory_rows` returns, bytes by
name and length: ``"naive"``, ``"fused kernel"`` (PyTorch's ``F.scaled_dot_product_attention``) and
``"ours"``; timings are seconds, the median of ``size.repeats`` forward and backward passes. Ratios are
said with :func:`~fromscratch.viz.verdicts.times` (never "0.4 times faster"), and "close to" only within
the tolerances below, which the sentences state. ``tests/test_prose_ch16.py`` renders every function on
both sides of each verdict, with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from fromscratch.attention.flash_cost import attention_cost
from fromscratch.chapters.ch16_flash_attention.profile import FlashRun
from fromscratch.viz.verdicts import plural, relative_to, times

__all__ = [
    "CLOSE",
    "FUSED",
    "GROWTH",
    "NAIVE",
    "OURS",
    "TILE_SHARE",
    "causal_time",
    "naive_memory",
    "speeds",
    "tiles_memory",
]

NAIVE, FUSED, OURS = "naive", "fused kernel", "ours"
MiB = 2**20
NAIVE_PEAK = "naive attention's peak"
ON = {"cuda": "the GPU", "mps": "Apple's GPU (MPS)"}
FP32 = 4  # bytes per number of every measured tensor
CLOSE = 0.25  # two peaks within 25 % of the larger count as close
GROWTH = 0.15  # a peak's growth within 15 % of what t or t² predicts follows that power
TILE_SHARE = 0.1  # the causal pass's share of the time within 0.1 of its share of the tiles follows the tiles


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / MiB:,.1f} MiB"


def _times(ratio: float, more: str, less: str) -> str:
    """``times`` with no decimals far from 1 (``"174 times smaller"``), one near it (``"3.1 times"``)."""
    return times(ratio, more=more, less=less, digits=0 if max(ratio, 1 / ratio) >= 10 else 1)


def _than(said: str) -> str:
    """``"3.1 times smaller than"``, ``"about as large as"``."""
    return f"{said} as" if said.startswith("about") else f"{said} than"


def _returned(t: int, head_dim: int) -> float:
    """Bytes of the output and the gradients of q, k and v: what every method returns, ``4 t d`` numbers."""
    return 4 * t * head_dim * FP32


def _timed(device: str, repeats: int, load: float) -> str:
    """How the timings were taken, in words true on ``device``: one CPU thread and the machine's load on a
    CPU, the GPU alone on CUDA (the host's load average says little about a GPU's kernels)."""
    passes = f"the median of {plural(repeats, 'forward and backward pass', 'forward and backward passes')}"
    if device == "cpu":
        busy = f", load average {load:.1f}" if math.isfinite(load) else ""
        return f"{passes} on one CPU thread{busy}"
    return f"{passes} on {ON.get(device, device)}"


# --- 16.1 naive attention's memory ----------------------------------------------------------------
def naive_memory(peaks: Mapping[str, Sequence[float]], lengths: Sequence[int], head_dim: int) -> str:
    """16.1: naive attention's peak at the longest length, in ``t x t`` fp32 matrices, and the fused
    kernel's beside it. ``peaks``: bytes by name (``"naive"``, ``"fused kernel"``), one per length."""
    t = lengths[-1]
    naive, fused = peaks[NAIVE][-1], peaks[FUSED][-1]
    square = t * t * FP32  # one (t, t) matrix of fp32 numbers
    matrices = naive / square
    if round(matrices) >= 2:
        held = (
            f"{matrices:.1f} times the {_mib(square)} of one $t \\times t$ matrix of fp32 numbers: about "
            f"{round(matrices)} such matrices (of the scores, the weights and their gradients) are alive "
            "at the same time"
        )
    else:
        said = _times(matrices, "larger", "smaller")
        held = (
            f"{_than(said)} the {_mib(square)} of one $t \\times t$ matrix of fp32 numbers: about one such "
            "matrix at a time"
        )
    return (
        f"At $t$ = {t:,} naive attention's pass peaks at {_mib(naive)}, {held}. PyTorch's fused kernel "
        f"peaks at {_mib(fused)} in the same pass, {_than(_times(fused / naive, 'larger', 'smaller'))} "
        f"naive attention; the output and the gradients of $q$, $k$ and $v$, which every method returns, "
        f"take {_mib(_returned(t, head_dim))}."
    )


# --- 16.5 the tiles' memory -----------------------------------------------------------------------
def _growth(who: str, values: Sequence[float], step: float, power: int) -> str:
    """``"naive attention's peak grew 3.98 times, close to the 4 times of a cost growing like $t^2$"``."""
    grew = values[-1] / values[-2]
    law = "$t$" if power == 1 else f"$t^{power}$"
    if round(grew, 2) <= 1:
        return f"{who} did not grow ({_mib(values[-2])}, then {_mib(values[-1])})"
    expected = step**power
    side = relative_to(grew, expected, tol=GROWTH * expected)
    words = {"close to": "close to", "above": "more than", "below": "less than"}[side]
    return f"{who} grew {grew:.2f} times, {words} the {expected:g} times of a cost that grows like {law}"


def tiles_memory(peaks: Mapping[str, Sequence[float]], lengths: Sequence[int], head_dim: int) -> str:
    """16.5: our tiles' peak against naive attention's and the fused kernel's at the longest length, how
    each grew over the last step of ``lengths``, and how much of ours every method must hold.
    ``peaks``: bytes by name (``"naive"``, ``"fused kernel"``, ``"ours"``), one per length."""
    if len(lengths) < 2:
        raise ValueError(f"the growth of a peak needs two lengths or more, got {list(lengths)}.")
    t, before = lengths[-1], lengths[-2]
    naive, fused, ours = peaks[NAIVE][-1], peaks[FUSED][-1], peaks[OURS][-1]
    if abs(ours - fused) <= CLOSE * max(ours, fused):
        beside = f"close to PyTorch's fused kernel's {_mib(fused)} (within {CLOSE * 100:.0f} %)"
    else:
        beside = f"{_than(_times(ours / fused, 'larger', 'smaller'))} PyTorch's fused kernel's {_mib(fused)}"
    returned = _returned(t, head_dim)
    share = returned / ours
    if share > 0.95:
        much = "nearly all of it"
    elif share >= 0.5:
        much = f"most of it ({share * 100:.0f} %)"
    else:
        much = f"less than half of it ({share * 100:.0f} %)"
    step = t / before
    grew = f"{_growth(NAIVE_PEAK, peaks[NAIVE], step, 2)}, and {_growth('ours', peaks[OURS], step, 1)}"
    return (
        f"At $t$ = {t:,} our tiles peak at {_mib(ours)} against naive attention's {_mib(naive)}, "
        f"{_times(ours / naive, 'larger', 'smaller')}, and {beside}. From $t$ = {before:,} to {t:,} "
        f"{grew}. The output and the gradients of $q$, $k$ and $v$ "
        f"({_mib(returned)}, which every method returns) are {much}; the rest is tiles and running "
        "values."
    )


# --- 16.6 what a causal pass saves ----------------------------------------------------------------
def causal_time(seconds: Mapping[bool, float], size: FlashRun, *, device: str, load: float) -> str:
    """16.6: the causal pass's time as a share of the full pass's, against its share of the tiles.

    seconds: ``{False: full, True: causal}`` seconds of one forward and backward pass of ``size.heads``
    heads at ``size.timing_length`` with blocks of ``size.block``; device: ``device.type``; load: the
    machine's load average (said on a CPU only)."""
    t, d, block = size.timing_length, size.head_dim, size.block
    full = attention_cost(t, t, d, block_q=block, block_k=block)
    causal = attention_cost(t, t, d, causal=True, block_q=block, block_k=block)
    tiles = causal.tiles / full.tiles
    took = seconds[True] / seconds[False]
    side = relative_to(took, tiles, tol=TILE_SHARE)
    verdict = {
        "close to": f"close to the {tiles:.2f} of the tiles it computes (within {TILE_SHARE})",
        "above": (
            f"more than the {tiles:.2f} of the tiles it computes: the tiles on the diagonal also build "
            "and apply a mask, and the work outside the tiles (finishing each row, the backward pass's "
            "row sums) is the same in both passes"
        ),
        "below": f"less than the {tiles:.2f} of the tiles it computes",
    }[side]
    how = f"{plural(size.heads, 'head')}, blocks of {block}; {_timed(device, size.repeats, load)}"
    return f"At $t$ = {t:,} ({how}) the causal pass took {took:.2f} of the full pass's time, {verdict}."


# --- 16.7 the clock -------------------------------------------------------------------------------
def speeds(seconds: Mapping[str, float], flops: float, size: FlashRun, *, device: str, load: float) -> str:
    """16.7: our loops and naive attention against PyTorch's fused kernel, one forward and backward pass.

    seconds: by name (``"naive"``, ``"ours"``, ``"fused kernel"``); flops: the work of the pass (all
    heads); device: ``device.type``; load: the machine's load average (said on a CPU only)."""
    fused = seconds[FUSED]
    ours = _than(_times(fused / seconds[OURS], "faster", "slower"))
    naive = _than(_times(fused / seconds[NAIVE], "faster", "slower"))
    return (
        f"At $t$ = {size.timing_length:,} with {plural(size.heads, 'head')} "
        f"({_timed(device, size.repeats, load)}) our loops ran at {flops / seconds[OURS] / 1e9:,.1f} "
        f"GFLOP/s, {ours} PyTorch's fused kernel, and naive attention was {naive} it. Each of our tiles "
        "is a dozen small PyTorch calls with Python in between; a kernel does the whole row of tiles in "
        "one program, which is what section 16.8 writes."
    )
