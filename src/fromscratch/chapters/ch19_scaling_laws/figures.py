"""Plots of chapter 19. Every function takes plain numbers (the sweep's :class:`~.sweep.Run` records, the
fits of ``metrics.scaling``) and returns the figure.

- :func:`lr_plot`: the small learning-rate sweep (19.2);
- :func:`isoflop_plot`: loss against ``N`` at each budget, its parabola and its minimum (19.2);
- :func:`frontier_plot`: the minima's ``N_opt`` and ``D_opt`` against ``C``, their power laws carried to the
  verification budget (19.3);
- :func:`prediction_plot`: the loss of each budget's best run and of the verification run against the
  law's prediction with its interval (19.4);
- :func:`budget_frame`: one frame of the interactive figure, the law's IsoFLOP curve at one budget (19.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from fromscratch.metrics.scaling import IsoflopMinimum, LossLaw, PowerLaw
from fromscratch.viz.style import BOOK_WIDTH, FAINT, PALETTE

__all__ = ["budget_frame", "frontier_plot", "isoflop_plot", "lr_plot", "prediction_plot"]


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def lr_plot(lrs: Sequence[float], losses: Sequence[float], *, chosen: float, title: str = ""):
    """Held-out loss against the learning rate (log scale), the chosen one marked."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 5.0), 2.8), layout="constrained")
    ax.plot(lrs, losses, marker="o", color=_colour(0))
    ax.axvline(chosen, color=FAINT, lw=1)
    ax.set(xscale="log", xlabel="peak learning rate", ylabel="held-out bits per byte", title=title)
    ax.set_xticks(list(lrs), [f"{lr:g}" for lr in lrs])
    ax.minorticks_off()
    return fig


def isoflop_plot(runs: Mapping[float, Sequence], minima: Mapping[float, IsoflopMinimum], *, n: str = "N"):
    """One curve per budget: each run's held-out loss against its ``N`` (log), the parabola in ``log N``
    that :func:`~fromscratch.metrics.scaling.isoflop_minimum` fits, and its minimum (a hollow marker on
    the best run when the minimum lies outside the sizes measured: ``sweep.minimum``)."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.5), 3.6), layout="constrained")
    for i, (budget, rows) in enumerate(sorted(runs.items())):
        x = np.array([getattr(r, n) for r in rows], dtype=float)
        y = np.array([r.loss for r in rows])
        colour = _colour(i)
        ax.plot(x, y, "o", color=colour, markersize=4, label=f"C = {budget:.2g}")
        if len(x) >= 3:
            c2, c1, c0 = np.polyfit(np.log(x), y, 2)
            grid = np.geomspace(x.min(), x.max(), 60)
            ax.plot(grid, c2 * np.log(grid) ** 2 + c1 * np.log(grid) + c0, color=colour, lw=1)
        best = minima[budget]
        face = colour if best.bracketed else "none"
        ax.plot([best.size], [best.loss], "D", color=colour, markerfacecolor=face, markersize=7)
    ax.set(xscale="log", xlabel=f"parameters {n}", ylabel="held-out bits per byte")
    ax.set_title("IsoFLOP curves: each budget's runs and the minimum of its parabola")
    ax.legend(fontsize="small", ncols=2)
    return fig


def frontier_plot(
    budgets: Sequence[float],
    n_opt: Sequence[float],
    d_opt: Sequence[float],
    n_law: PowerLaw,
    d_law: PowerLaw,
    *,
    verify: float,
):
    """Two panels: ``N_opt`` and ``D_opt`` of each budget against ``C`` (log-log), their fitted power laws
    drawn out to the verification budget ``verify`` (dashed beyond the sweep)."""
    fig, axes = plt.subplots(1, 2, figsize=(BOOK_WIDTH, 3.2), layout="constrained")
    inside = np.geomspace(min(budgets), max(budgets), 40)
    beyond = np.geomspace(max(budgets), verify, 20)
    for ax, values, law, name in ((axes[0], n_opt, n_law, "N"), (axes[1], d_opt, d_law, "D")):
        ax.plot(budgets, values, "o", color=_colour(0), label="IsoFLOP minima")
        ax.plot(inside, law(inside), color=_colour(1), label=f"{name}_opt ∝ C^{law.exponent:.2f}")
        ax.plot(beyond, law(beyond), "--", color=_colour(1))
        ax.axvline(verify, color=FAINT, lw=1)
        ax.set(xscale="log", yscale="log", xlabel="compute C (FLOPs)", ylabel=f"{name}_opt")
        ax.legend(fontsize="small")
    axes[0].set_title("optimal parameters")
    axes[1].set_title("optimal tokens (bytes)")
    return fig


def prediction_plot(
    budgets: Sequence[float],
    best: Sequence[float],
    curve: tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]],
    *,
    verify: float,
    predicted: tuple[float, float, float],
    measured: float,
):
    """The loss of each budget's IsoFLOP minimum, the law's loss at the optimum of every budget
    (``curve = (C, loss, low, high)``, the band its bootstrap interval), the prediction for the verification
    run (``(value, low, high)``) and what it measured."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.0), 3.4), layout="constrained")
    c, loss, low, high = (np.asarray(v, dtype=float) for v in curve)
    ax.fill_between(c, low, high, color=_colour(1), alpha=0.2, lw=0)
    ax.plot(c, loss, color=_colour(1), label="the law at each budget's optimum")
    ax.plot(budgets, best, "o", color=_colour(0), label="IsoFLOP minima (the sweep)")
    value, lo, hi = predicted
    ax.errorbar(
        [verify],
        [value],
        yerr=[[value - lo], [hi - value]],
        fmt="s",
        color=_colour(1),
        capsize=3,
        label="predicted, before training",
    )
    ax.plot([verify], [measured], "*", color=_colour(2), markersize=12, label="measured")
    ax.set(xscale="log", xlabel="compute C (FLOPs)", ylabel="held-out bits per byte")
    ax.set_title("predict, then verify")
    ax.legend(fontsize="small")
    return fig


def budget_frame(
    law: LossLaw,
    budget: float,
    *,
    n: Sequence[float],
    d: Sequence[float],
    runs: Sequence = (),
    optimum: tuple[float, float] | None = None,
):
    """The law's loss along one budget: ``law(n, d)`` for model sizes ``n`` and the tokens ``d`` that the
    budget buys each of them; its optimum marked with its ``N`` and ``D``, and the sweep's runs at that
    budget, if any, as points."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.0), 3.2), layout="constrained")
    n, d = np.asarray(n, dtype=float), np.asarray(d, dtype=float)
    ax.plot(n, law(n, d), color=_colour(1))
    if runs:
        ax.plot(
            [r.N for r in runs], [r.loss for r in runs], "o", color=_colour(0), label="runs at this budget"
        )
        ax.legend(fontsize="small", loc="upper right")
    if optimum is not None:
        best_n, best_d = optimum
        ax.plot([best_n], [law(best_n, best_d)], "D", color=_colour(2))
        ax.annotate(
            f"N = {best_n:,.0f}\nD = {best_d:,.0f}",
            (best_n, law(best_n, best_d)),
            textcoords="offset points",
            xytext=(8, 10),
            fontsize="small",
        )
    ax.set(xscale="log", xlabel="parameters N", ylabel="bits per byte (the fitted law)")
    ax.set_title(f"C = {budget:.3g} FLOPs")
    return fig
