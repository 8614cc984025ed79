"""Figures of chapter 11 (longer contexts): how far back a prediction's gradient reaches, and curves
against the query-key distance (the chapter's curves with fitted slopes and its matrices side by side are
shared: ``viz.scaling_curves``, ``viz.matrix_panels``).

- ``reach_plot``: gradient norms per input position, with segment boundaries;
- ``distance_panels``: curves against the distance between query and key, one highlighted (RoPE and
  ALiBi).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import BOOK_WIDTH, FAINT, PALETTE

__all__ = ["distance_panels", "reach_plot"]


def reach_plot(norms: Mapping[str, torch.Tensor], segment: int, *, title: str = ""):
    """Gradient norms per input position (name -> ``(n·L,)``), one panel per entry, on a log scale (a
    gradient of exactly 0, no dependence at all, leaves its bar empty), with dashed lines at segment
    boundaries every ``segment`` positions: which inputs the last prediction depends on."""
    fig, axes = plt.subplots(
        len(norms), 1, figsize=(BOOK_WIDTH, 1.9 * len(norms) + 0.4), sharex=True, squeeze=False
    )
    for n, (ax, (name, values)) in enumerate(zip(axes[:, 0], norms.items(), strict=True)):
        values = torch.as_tensor(values).detach().float().cpu()
        ax.bar(range(len(values)), values.numpy(), width=1.0, color=PALETTE[n % len(PALETTE)])
        positive = values[values > 0]
        if len(positive):
            ax.set_yscale("log")
            ax.set_ylim(float(positive.min()) / 2, float(positive.max()) * 2)
        for boundary in range(segment, len(values), segment):
            ax.axvline(boundary - 0.5, color="#444444", linestyle="--", linewidth=1)
        ax.set(ylabel="|gradient|", title=name)
    axes[-1, 0].set_xlabel("input position (dashed lines: segment boundaries)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def distance_panels(
    distance: Sequence[float],
    panels: Mapping[str, Mapping[str, Sequence[float]]],
    highlight: str,
    *,
    xlabel: str = "distance i - j between query and key",
    title: str = "",
):
    """One panel per entry of ``panels`` (title -> {curve name -> values at ``distance``}): the curve
    named ``highlight`` in colour and labelled, the others faint (chapter 11's RoPE and ALiBi).

    Returns the Figure."""
    fig, axes = plt.subplots(1, len(panels), figsize=(BOOK_WIDTH, 3.2), squeeze=False, layout="constrained")
    x = np.asarray(distance, dtype=float)
    for ax, (heading, curves) in zip(axes[0], panels.items(), strict=True):
        for name, values in curves.items():
            chosen = name == highlight or len(curves) == 1
            ax.plot(
                x,
                np.asarray(torch.as_tensor(values).float()),
                color=PALETTE[0] if chosen else FAINT,
                lw=2 if chosen else 1,
                zorder=3 if chosen else 2,
                label=name if chosen else None,
            )
        ax.set(xlabel=xlabel, title=heading)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", loc="best")
    if title:
        fig.suptitle(title)
    return fig
