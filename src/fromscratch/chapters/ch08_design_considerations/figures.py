"""Plots of chapter 08: recurrence, convolution and attention measured side by side.

- :func:`step_time_plot`: seconds per training step against ``t`` on log-log axes, with each model's
  fitted slope in the legend (8.1);
- :func:`distance_plot`: accuracy on the match task against the distance ``d`` (8.2);
- :func:`reachability_maps`: which inputs can move which outputs, one heatmap per model (8.2);
- :func:`time_curves`: validation accuracy against training seconds, one line per model (8.4).

Every function takes plain numbers (lists or tensors) keyed by model name and returns the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import LogNorm

from fromscratch.utils import loglog_slope
from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["distance_plot", "reachability_maps", "step_time_plot", "time_curves"]

NAMES = {
    "bag": "bag of embeddings",
    "rnn": "GRU",
    "cnn": "CNN",
    "dilated cnn": "CNN, dilated",
    "transformer": "transformer",
}
COLOURS = {
    "bag": PALETTE[7],
    "rnn": PALETTE[0],
    "cnn": PALETTE[1],
    "dilated cnn": PALETTE[4],
    "transformer": PALETTE[2],
}
MARKERS = {"bag": "x", "rnn": "o", "cnn": "s", "dilated cnn": "D", "transformer": "^"}


def _style(name: str) -> dict:
    return {"color": COLOURS.get(name), "marker": MARKERS.get(name, "o"), "label": NAMES.get(name, name)}


def step_time_plot(
    lengths: Sequence[int], seconds: Mapping[str, Sequence[float]], *, title: str | None = None, last: int = 3
):
    """Seconds per training step against ``t``, both axes logarithmic: a straight line of slope ``k``
    is a time growing like ``t**k``. ``seconds``: ``{model: [seconds at each length]}``; the legend
    gives the slope fitted over the ``last`` longest lengths. Returns the figure."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.4), 4.0), layout="constrained")
    for name, values in seconds.items():
        slope = loglog_slope(lengths, values, last=last)
        style = _style(name)
        style["label"] += f" (slope {slope:.2f})"
        ax.plot(lengths, values, **style)
    ax.set(xscale="log", yscale="log", xlabel="sequence length t", ylabel="seconds per training step")
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.minorticks_off()
    ax.set_title(title or f"one training step (slopes over the longest {last} lengths)")
    ax.legend()
    return fig


def distance_plot(
    distances: Sequence[int],
    accuracy: Mapping[str, Sequence[float]],
    *,
    cnn_limit: float | None = None,
    dilated_limit: float | None = None,
    title: str = "match task: is the token at 0 the same as the token at d?",
):
    """Test accuracy against the distance ``d`` between the two compared tokens, one line per model;
    chance (0.5) is dashed. ``cnn_limit``: the largest ``d`` the CNN can see at once, drawn as a
    vertical line; ``dilated_limit`` the same for the dilated CNN. Returns the figure."""
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 4.0), layout="constrained")
    for name, values in accuracy.items():
        ax.plot(distances, values, **_style(name))
    ax.axhline(0.5, color="#666666", linestyle="--", linewidth=1, label="chance")
    if cnn_limit is not None:
        ax.axvline(
            cnn_limit, color=COLOURS["cnn"], linestyle=":", linewidth=1.5, label="CNN's reach (pooled)"
        )
    if dilated_limit is not None:
        ax.axvline(
            dilated_limit,
            color=COLOURS["dilated cnn"],
            linestyle=":",
            linewidth=1.5,
            label="dilated CNN's reach (pooled)",
        )
    ax.set(xscale="log", xlabel="distance d", ylabel="test accuracy", ylim=(0.4, 1.02), title=title)
    ax.set_xticks(list(distances), [str(d) for d in distances])
    ax.minorticks_off()
    ax.legend(fontsize=9, loc="center left", bbox_to_anchor=(1.0, 0.5))  # beside: curves fill the axes
    return fig


def reachability_maps(maps: Mapping[str, torch.Tensor], *, title: str | None = None):
    """One heatmap per model of a :func:`~fromscratch.metrics.paths.gradient_map`: row = output position,
    column = input position, colour = the gradient's size (log scale, each row divided by its
    largest value); white cells are exactly zero, inputs that cannot reach that output at all."""
    n = len(maps)
    fig, axes = plt.subplots(
        1, n, figsize=(BOOK_WIDTH, BOOK_WIDTH / n + 0.9), layout="constrained", squeeze=False
    )
    image = None
    for ax, (name, grad) in zip(axes[0], maps.items(), strict=True):
        g = grad.detach().double()
        g = g / g.amax(dim=1, keepdim=True).clamp_min(1e-300)  # each output's strongest input = 1
        shown = np.ma.masked_where(g.numpy() == 0, g.numpy().clip(1e-6, 1))
        cmap = plt.get_cmap("viridis").with_extremes(bad="white")  # masked cells (exact zeros): white
        image = ax.imshow(shown, cmap=cmap, norm=LogNorm(vmin=1e-6, vmax=1), interpolation="nearest")
        ax.set_title(NAMES.get(name, name), fontsize=10)
        ax.set_xlabel("input j", fontsize=9)
        ax.grid(False)
        ax.tick_params(labelsize=9)
    axes[0, 0].set_ylabel("output i", fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="|gradient| / row max")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def time_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, title: str | None = None):
    """Validation accuracy against training seconds (wall clock), one line per model.
    ``curves``: ``{model: (seconds, accuracy)}``. Returns the figure."""
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 4.0), layout="constrained")
    for name, (seconds, accuracy) in curves.items():
        ax.plot(seconds, accuracy, **_style(name))
    ax.axhline(0.5, color="#666666", linestyle="--", linewidth=1, label="chance")
    ax.set(xlabel="training time (seconds, evaluations not counted)", ylabel="validation accuracy")
    ax.set_title(title or "IMDb: the same parameters, the same clock")
    ax.legend(fontsize=9, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig
