"""How a cost grows with the length (chapters 11 and 16): measured series against ``t``, optionally on
log-log axes with each line's fitted exponent in the legend (``utils.loglog_slope``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

from fromscratch.utils import loglog_slope
from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["scaling_curves"]


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
