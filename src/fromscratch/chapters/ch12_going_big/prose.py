"""Chapter 12's sentences about its own run: each takes the run's numbers and sizes and returns the text
the chapter shows under a result, ``viz.prose(prose.checkpoint_cost(ratios, gb, device.type, load))``.

The verdicts come from :mod:`fromscratch.viz.verdicts`; tests/test_prose_ch12.py renders every function
on both sides of each, with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch12_going_big.profile import GoingBigRun
from fromscratch.viz.verdicts import join_words, plural, relative_to, times

__all__ = ["THEORY", "checkpoint_cost", "half_precision", "how_timed", "on", "summary"]

THEORY = 4 / 3  # a checkpointed step: one more forward pass of every block; a backward costs about two


def on(device: str) -> str:
    """``"on the CPU"``, ``"on the GPU"`` (CUDA), ``"on mps"``."""
    return {"cpu": "on the CPU", "cuda": "on the GPU"}.get(device, f"on {device}")


def how_timed(device: str, repeats: int, per: str = "") -> str:
    """How the chapter's timings were taken, in words true on ``device`` ("cpu", "cuda", ...); ``per``:
    what each median is of (" per depth")."""
    steps = f"median of {plural(repeats, 'step')}{per}"
    if device == "cpu":
        return f"{steps}, torch on one CPU thread"
    return f"{steps}, timed {on(device)}"


def _times(ratio: float) -> str:  # two digits near 1 ("1.08 times"), one far from it ("250.0 times")
    return times(ratio, digits=2 if 0.5 < ratio < 2 else 1)


def _span(ratios: Sequence[float]) -> str:
    low, high = f"{min(ratios):.2f}", f"{max(ratios):.2f}"
    return f"$\\times {low}$" if low == high else f"$\\times {low}$ to $\\times {high}$"


def half_precision(results: Mapping[str, tuple[float, float]], *, steps: int, device: str) -> str:
    """12.2's comparison. ``results``: ``{name: (tokens per second, bits per byte)}``, fp32 first, then
    the 16-bit run; one run of each, from one seed."""
    (fp32_rate, fp32_bpb), (half_rate, half_bpb) = results.values()
    half = list(results)[1]
    gap = half_bpb - fp32_bpb
    if f"{gap:.3f}" in ("0.000", "-0.000"):
        ended = f"ended at fp32's {fp32_bpb:.3f} bits per byte"
    else:
        side = "above" if gap > 0 else "below"
        ended = f"ended {abs(gap):.3f} bits per byte {side} fp32 ({half_bpb:.3f} against {fp32_bpb:.3f})"
    speed = _times(half_rate / fp32_rate)
    than = "as fp32" if speed.startswith("about") else "than fp32"
    return (
        f"In this run ({on(device)}) {half} trained **{speed}** {than} "
        f"({half_rate:,.0f} against {fp32_rate:,.0f} tokens a second) and {ended} after the same "
        f"{plural(steps, 'step')}. That is one run of each, from one seed: it cannot separate what "
        "the precision did to the loss from the luck of a single run."
    )


def checkpoint_cost(ratios: Sequence[float], gb: GoingBigRun, device: str, load: float) -> str:
    """12.4's measured cost of checkpointing, read against the theory's 4/3 (within 10 % counts as
    "about"): ``ratios[i]`` = checkpointed / plain seconds per step at ``gb.checkpoint_depths[i]``, each
    the median of ``gb.repeats`` steps (gb: the chapter's sizes, ``prof.ch12``); device:
    ``device.type``; load: the load average when the timing began."""
    depths, repeats = gb.checkpoint_depths, gb.repeats
    low = relative_to(min(ratios), THEORY, tol=0.1 * THEORY)
    high = relative_to(max(ratios), THEORY, tol=0.1 * THEORY)
    if low == "above":
        than = "more than"
    elif high == "below":
        than = "less than"
    elif low == high == "close to":
        than = "about"
    else:
        than = "scattered around"
    at = f"depth{'s' * (len(depths) != 1)} {join_words(depths)}"
    return (
        f"Measured here ({how_timed(device, repeats, ' per depth')}, load average {load:.1f} when the "
        f"timing began), checkpointing cost {_span(ratios)} per step at {at}: {than} the $4/3$ of "
        "the theory below."
    )


def summary(results: Mapping[str, tuple[float, float]], ratios: Sequence[float], *, device: str) -> str:
    """The Summary's line about this run: the 16-bit run's speed and checkpointing's cost."""
    (fp32_rate, _), (half_rate, _) = results.values()
    half = list(results)[1]
    speed = _times(half_rate / fp32_rate)
    than = "as fp32" if speed.startswith("about") else "than fp32"
    return (
        f"- In this run ({on(device)}): {half} trained {speed} {than}; checkpointing cost "
        f"{_span(ratios)} per step."
    )
