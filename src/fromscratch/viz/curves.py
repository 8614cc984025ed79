"""Training curves several chapters draw (chapters 14, 15): one smoothed line per run.

:func:`ablation_curves` takes plain numbers (``{name: (x, losses)}``) and returns the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["ablation_curves"]


def ablation_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    smooth: int = 25,
    xlabel: str = "seconds of training",
    ylabel: str = "training loss (bits per byte)",
    title: str = "the same clock for every rung",
):
    """``curves``: ``{rung: (x, losses)}``, one point per step, ``x`` the steps or the seconds of training
    (evaluations not counted): the budget every rung had. Each line is the mean of ``smooth``
    consecutive steps (fewer for short runs), so the rungs can be told apart."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 7.0), 3.8), layout="constrained")
    for n, (name, (seconds, losses)) in enumerate(curves.items()):
        values = np.asarray(losses, dtype=float)
        k = max(1, min(smooth, len(values) // 5 or 1))
        smoothed = np.convolve(values, np.ones(k) / k, mode="valid") if len(values) >= k else values
        ax.plot(
            list(seconds)[len(values) - len(smoothed) :],
            smoothed,
            color=PALETTE[n % len(PALETTE)],
            label=name,
        )
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize="small")
    return fig
