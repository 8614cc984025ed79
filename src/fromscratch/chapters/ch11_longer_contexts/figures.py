"""Figures of chapter 11 (longer contexts): curves with fitted slopes, masks and matrices side by side,
how far back a prediction's gradient reaches, and curves against the query-key distance.

- ``scaling_curves``: measured series against a length, optionally log-log with fitted slopes;
- ``matrix_panels``: several ``(tq, tk)`` matrices (masks, score terms) in one row;
- ``reach_plot``: gradient norms per input position, with segment boundaries;
- ``distance_panels``: curves against the distance between query and key, one highlighted (RoPE and
  ALiBi).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.utils import loglog_slope
from fromscratch.viz.style import BOOK_WIDTH, FAINT, HEATMAP_CMAP, PALETTE

__all__ = ["distance_panels", "matrix_panels", "reach_plot", "scaling_curves"]


def scaling_curves(
    lengths: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    loglog: bool = False,
):
    """One line per entry of ``series`` (name -> values at ``lengths``). With ``loglog=True`` both axes
    are logarithmic and each legend entry gives the fitted exponent ``∝ x^p``. Returns the ``Figure``."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.0), 3.6), layout="constrained")
    for n, (name, values) in enumerate(series.items()):
        label = f"{name} ($\\propto t^{{{loglog_slope(lengths, values):.2f}}}$)" if loglog else name
        ax.plot(lengths, values, marker="o", color=PALETTE[n % len(PALETTE)], label=label)
    if loglog:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ax.set_xticks(list(lengths), [f"{x:,}" for x in lengths])
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend()
    return fig


def matrix_panels(
    matrices: Mapping[str, torch.Tensor], *, title: str = "", signed: bool = False, ncols: int = 4
):
    """Each ``(tq, tk)`` matrix of ``matrices`` (name -> tensor) as a heatmap, queries down the rows.

    Boolean masks are drawn in two colours (True = may attend). ``signed=True`` centres a red-blue
    scale on 0 (score terms), each panel with its own range. Returns the ``Figure``.
    """
    names = list(matrices)
    ncols = min(ncols, len(names))
    nrows = math.ceil(len(names) / ncols)
    side = min(BOOK_WIDTH / ncols, 2.6)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(BOOK_WIDTH, side * nrows + 0.5), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[len(names) :]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names, strict=False):
        matrix = torch.as_tensor(matrices[name]).detach().cpu()
        if matrix.dtype == torch.bool:
            ax.imshow(
                matrix.numpy(),
                cmap=plt.matplotlib.colors.ListedColormap(["#F2F2F2", PALETTE[0]]),
                vmin=0,
                vmax=1,
            )
        elif signed:
            top = float(matrix.abs().max()) or 1.0
            ax.imshow(matrix.float().numpy(), cmap="RdBu_r", vmin=-top, vmax=top)
        else:
            ax.imshow(matrix.float().numpy(), cmap=HEATMAP_CMAP)
        ax.set_title(name, fontsize=10)
        ax.set(xlabel="key", ylabel="query")
        ax.grid(False)
    if title:
        fig.suptitle(title)
    return fig


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
