"""Figures of chapter 13 (beyond text): sets of digits, patches, attention over an image, graphs, curves.

- ``digit_sets``: a few sets of digits in rows, the odd one framed;
- ``patch_view``: an image cut into its patches, numbered in the order the model reads them;
- ``image_attention``: images with the class token's attention to each patch laid over them;
- ``accuracy_curves``: test accuracy against training time (or steps), one line per model;
- ``data_size_plot``: test accuracy against the number of training images, one line per model;
- ``graph_panels``: a graph drawn once per panel, its nodes coloured by a value or a label.

Every function takes plain numbers or tensors and returns the matplotlib ``Figure``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["accuracy_curves", "data_size_plot", "digit_sets", "graph_panels", "image_attention", "patch_view"]


def _grey(ax, image) -> None:
    """An image ``(h, w)`` or ``(1, h, w)``, white digits on black, without axes."""
    ax.imshow(torch.as_tensor(image).detach().float().squeeze().cpu().numpy(), cmap="gray")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)


def digit_sets(sets, odd: Sequence[int] | None = None, *, titles: Sequence[str] | None = None):
    """``sets``: ``(m, k, h, w)`` images, one set per row; ``odd``: the index of a digit to frame in each
    row (e.g. the odd one out); ``titles``: one per row, shown at its left. Returns the figure."""
    m, k = sets.shape[:2]
    side = min(BOOK_WIDTH / k, 0.8)
    fig, axes = plt.subplots(m, k, figsize=(side * k + 1.2, side * m + 0.2), squeeze=False)
    for row in range(m):
        for col in range(k):
            ax = axes[row, col]
            _grey(ax, sets[row, col])
            if odd is not None and col == int(odd[row]):
                for spine in ax.spines.values():
                    spine.set(visible=True, color=PALETTE[1], linewidth=3)
        if titles is not None:
            axes[row, 0].set_ylabel(titles[row], rotation=0, ha="right", va="center", fontsize=10)
    fig.subplots_adjust(wspace=0.05, hspace=0.1, left=0.15, right=0.99, top=0.98, bottom=0.02)
    return fig


def patch_view(image, patch: int, *, per_line: int = 16):
    """One image with the ``patch x patch`` grid drawn on it and every patch numbered row by row (left),
    and the same patches as the sequence of tokens the transformer reads, ``per_line`` to a line (right)."""
    img = torch.as_tensor(image).detach().float().squeeze().cpu()
    h, w = img.shape
    rows, cols = h // patch, w // patch
    n = rows * cols
    lines = -(-n // per_line)
    fig = plt.figure(figsize=(BOOK_WIDTH, max(2.4, 0.55 * lines + 1.2)), layout="constrained")
    left, right = fig.subfigures(1, 2, width_ratios=[1, 2.6])
    ax = left.subplots()
    _grey(ax, img)
    for r in range(1, rows):
        ax.axhline(r * patch - 0.5, color=PALETTE[1], linewidth=1)
    for c in range(1, cols):
        ax.axvline(c * patch - 0.5, color=PALETTE[1], linewidth=1)
    if n <= 64:  # numbers fit in the patches
        for k in range(n):
            r, c = divmod(k, cols)
            ax.text(c * patch + 0.5, r * patch + 0.5, str(k), color=PALETTE[5], fontsize=8, va="top")
    ax.set_title(f"{rows} x {cols} patches of {patch} x {patch}", fontsize=10)
    tokens = img.reshape(rows, patch, cols, patch).permute(0, 2, 1, 3).reshape(n, patch, patch)
    strip = right.subplots(lines, per_line, squeeze=False)
    for k, ax in enumerate(strip.flat):
        if k < n:
            _grey(ax, tokens[k])
            ax.set_title(str(k), fontsize=8, pad=1)
        else:
            ax.axis("off")
    right.suptitle(f"the same image as a sequence of {n} tokens (numbers: positions)", fontsize=10)
    return fig


def image_attention(images, attention, *, titles: Sequence[str] | None = None, ncols: int = 6):
    """Images ``(m, h, w)`` with a weight per patch ``(m, rows, cols)`` laid over each (bright = much
    attention), e.g. the class token's attention to the patches averaged over the heads."""
    m = len(images)
    ncols = min(ncols, m)
    nrows = -(-m // ncols)
    side = BOOK_WIDTH / ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(BOOK_WIDTH, side * nrows + 0.3), squeeze=False)
    for ax in axes.flat[m:]:
        ax.axis("off")
    for n, ax in enumerate(axes.flat[:m]):
        img = torch.as_tensor(images[n]).detach().float().squeeze().cpu().numpy()
        weights = torch.as_tensor(attention[n]).detach().float().cpu().numpy()
        _grey(ax, img)
        h, w = img.shape
        ax.imshow(
            weights, cmap="magma", alpha=0.6, extent=(-0.5, w - 0.5, h - 0.5, -0.5), interpolation="nearest"
        )
        if titles is not None:
            ax.set_title(titles[n], fontsize=9)
    fig.tight_layout()
    return fig


def accuracy_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    xlabel: str = "training time (minutes, evaluations left out)",
    title: str = "",
    ylim: tuple[float, float] | None = None,
):
    """Test accuracy against training time (or steps): ``curves = {model: (xs, accuracies)}``."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.4), 3.8), layout="constrained")
    for n, (name, (xs, ys)) in enumerate(curves.items()):
        ax.plot(
            xs, [100 * y for y in ys], marker="o", markersize=3, color=PALETTE[n % len(PALETTE)], label=name
        )
    ax.set(xlabel=xlabel, ylabel="test accuracy (%)", title=title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.legend()
    return fig


def data_size_plot(
    sizes: Sequence[int],
    accuracy: Mapping[str, Sequence[float]],
    *,
    ranges: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    title: str = "",
):
    """Test accuracy against the number of training images (log scale), one line per model; ``ranges``
    (``{model: (lowest, highest)}``, one value per size, e.g. over seeds) draws each point's spread."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.0), 3.6), layout="constrained")
    for n, (name, values) in enumerate(accuracy.items()):
        color = PALETTE[n % len(PALETTE)]
        ax.plot(sizes, [100 * v for v in values], marker="o", color=color, label=name)
        if ranges and name in ranges:
            low, high = ranges[name]
            ax.vlines(sizes, [100 * v for v in low], [100 * v for v in high], color=color, alpha=0.6)
    ax.set_xscale("log")
    ax.set_xticks(list(sizes), [f"{s:,}" for s in sizes])
    ax.minorticks_off()
    ax.set(xlabel="training images", ylabel="test accuracy (%)", title=title)
    ax.legend()
    return fig


def graph_panels(
    graph,
    values: Mapping[str, Sequence[float]],
    *,
    marked: Sequence[int] = (),
    categorical: bool = False,
    seed: int = 0,
    ncols: int = 3,
):
    """A ``networkx`` graph drawn once per entry of ``values`` (panel title -> one value per node).

    ``categorical=True``: values are labels (0, 1, ...) in the palette's colours; otherwise 0 is light
    grey and larger values are darker. ``marked`` nodes get a thick black ring (e.g. the
    labelled ones). The layout is the same in every panel (a spring layout seeded with ``seed``).
    """
    import networkx  # only chapter 13 draws graphs

    nodes = sorted(graph.nodes)
    layout = networkx.spring_layout(graph, seed=seed)
    ncols = min(ncols, len(values))
    nrows = -(-len(values) // ncols)
    side = min(BOOK_WIDTH / ncols, 3.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols, side * nrows), squeeze=False)
    for ax in axes.flat[len(values) :]:
        ax.axis("off")
    for ax, (title, node_values) in zip(axes.flat, values.items(), strict=False):
        v = np.asarray(torch.as_tensor(node_values).detach().float().cpu())
        if categorical:
            colours = [PALETTE[int(x) % len(PALETTE)] for x in v]
        else:  # 0: light grey; above it, darker with the value
            scaled = plt.get_cmap("viridis_r")(0.3 + 0.7 * v / max(float(v.max()), 1e-12))
            colours = [c if x > 0 else "#DDDDDD" for x, c in zip(v, scaled, strict=True)]
        networkx.draw_networkx_edges(graph, layout, ax=ax, alpha=0.3, width=0.8)
        networkx.draw_networkx_nodes(graph, layout, nodelist=nodes, node_color=colours, node_size=90, ax=ax)
        ring = [node for node in nodes if node in set(marked)]
        networkx.draw_networkx_nodes(
            graph,
            layout,
            nodelist=ring,
            node_color="none",
            edgecolors="black",
            linewidths=2,
            node_size=150,
            ax=ax,
        )
        ax.set_title(title, fontsize=10)
        ax.axis("off")
    fig.tight_layout()
    return fig
