"""Plots of chapter 12: memory against length, checkpointing against depth.

- :func:`memory_plot`: bytes saved for the backward pass against ``t``, estimated (lines) and
  measured (markers), teaching path and fused kernel, with the t² scores on their own (12.1);
- :func:`checkpointing_plot`: saved bytes and seconds per step against depth, with and without
  gradient checkpointing (12.4).

Every function takes plain numbers and returns the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["checkpointing_plot", "memory_plot"]

MIB = 2**20


def memory_plot(
    lengths: Sequence[int],
    estimated: Mapping[str, Sequence[float]],
    measured: Mapping[str, Sequence[float]],
    *,
    title: str = "saved for the backward pass, one training step",
):
    """Bytes against sequence length ``t`` (log-log). ``estimated``/``measured``: ``{name: bytes at
    each t}``; estimates are drawn as lines, measurements as markers in the same colour."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.4), 4.0), layout="constrained")
    for i, (name, values) in enumerate(estimated.items()):
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(lengths, [v / MIB for v in values], color=colour, label=f"{name} (estimate)")
        if name in measured:
            ax.plot(lengths, [v / MIB for v in measured[name]], "o", color=colour, label=f"{name} (measured)")
    ax.set(xscale="log", yscale="log", xlabel="sequence length t", ylabel="MiB", title=title)
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.minorticks_off()
    ax.legend(fontsize="small")
    return fig


def checkpointing_plot(
    depths: Sequence[int],
    saved: Mapping[str, Sequence[float]],
    seconds: Mapping[str, Sequence[float]],
):
    """Two panels against depth: MiB saved for the backward pass, and seconds per training step.
    ``saved``/``seconds``: ``{"plain": [...], "checkpointed": [...]}``, one value per depth."""
    fig, axes = plt.subplots(1, 2, figsize=(min(BOOK_WIDTH, 9.0), 3.6), layout="constrained")
    for i, name in enumerate(saved):
        style = dict(color=PALETTE[i % len(PALETTE)], marker="os"[i % 2], label=name)
        axes[0].plot(depths, [v / MIB for v in saved[name]], **style)
        axes[1].plot(depths, seconds[name], **style)
    axes[0].set(xlabel="blocks (depth)", ylabel="MiB", title="activations kept for backward")
    axes[1].set(xlabel="blocks (depth)", ylabel="seconds", title="one training step")
    for ax in axes:
        ax.set_xticks(list(depths))
        ax.set_ylim(bottom=0)
        ax.legend()
    return fig
