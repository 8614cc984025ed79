"""Pictures of attention (chapters 02-04, used again in 06-07).

- ``attention_heatmap``: one ``(tq, tk)`` weight matrix as a labelled heatmap (the canonical view);
- ``attention_grid``: every head of one layer side by side;
- ``matrix_panels``: several ``(tq, tk)`` matrices (masks, score terms, sparse patterns) in a row
  (chapters 11, 13);
- ``scaling_plot``: chapter 03's curves of what the softmax sees as the head width ``d`` grows;
- ``bertviz_view``: our models' attention in bertviz's interactive head / model views.

Heatmaps read queries down the rows and keys along the columns, the layout of the weight matrix.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import BOOK_WIDTH, FONT, HEATMAP_CMAP, MIN_FONT, PALETTE, text_width, tick_layout

__all__ = ["attention_heatmap", "attention_grid", "matrix_panels", "scaling_plot"]

ANNOTATE_UP_TO = 12  # write the weights into the cells when both sides have at most this many tokens
MAX_CELL = 0.45  # inches: the widest heatmap cell (few tokens); with many, cells shrink to fit BOOK_WIDTH
AXIS_LABEL = 0.45  # inches beside the tick labels for an axis label and padding
COLORBAR = 0.9  # inches for a colour bar with its tick labels


def _as_numpy(weights) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    return np.asarray(weights, dtype=float)


def _fit_cell(tk: int, query_tokens: Sequence[str], columns: int, beside: float) -> float:
    """The cell size (inches) for ``columns`` heatmaps of ``tk`` keys side by side in BOOK_WIDTH.

    The query labels stand left of the first heatmap; ``beside`` inches go to colour bar and gaps.
    """

    def left(cell: float) -> float:  # the query labels' width depends on their font, set by the cell size
        font, step, _ = tick_layout(cell, query_tokens)
        return text_width(query_tokens[::step], font) + AXIS_LABEL

    fits = min(MAX_CELL, (BOOK_WIDTH - left(MAX_CELL) - beside) / (columns * tk))  # labels at their largest
    larger = min(MAX_CELL, (BOOK_WIDTH - left(fits) - beside) / (columns * tk))  # labels as small as they get
    return larger if left(larger) + larger * columns * tk + beside <= BOOK_WIDTH else fits


def _label_height(key_tokens: Sequence[str], cell: float) -> float:
    """Inches below a heatmap for its (rotated) key labels and the axis label."""
    font, step, rotation = tick_layout(cell, key_tokens)
    return text_width(key_tokens[::step], font) * math.sin(math.radians(rotation)) + font / 72 + AXIS_LABEL


def _draw_heatmap(
    ax, w: np.ndarray, query_tokens: list[str], key_tokens: list[str], cell: float, top: float, annotate: bool
):
    """Draw ``w`` ``(tq, tk)`` on ``ax`` with tick labels sized for cells ``cell`` inches wide."""
    image = ax.imshow(w, cmap=HEATMAP_CMAP, vmin=0.0, vmax=top, aspect="equal")
    ax.grid(False)
    font, step, rotation = tick_layout(cell, key_tokens)
    xlabels = {"rotation": rotation, "ha": "center" if rotation == 0 else "right", "rotation_mode": "anchor"}
    if rotation == 90:
        xlabels["va"] = "center"
    ax.set_xticks(range(0, len(key_tokens), step), key_tokens[::step], fontsize=font, **xlabels)
    ax.set_yticks(range(0, len(query_tokens), step), query_tokens[::step], fontsize=font)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.tick_params(length=0)
    if annotate:
        for (i, j), value in np.ndenumerate(w):
            # viridis is dark at the bottom of its scale and light at the top
            colour = "black" if value > 0.6 * top else "white"
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                color=colour,
                fontsize=min(MIN_FONT, 20 * cell),
            )
    return image


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    ax=None,
    *,
    title: str | None = None,
    vmax: float | None = 1.0,
    annotate: bool | None = None,
    colorbar: bool = True,
):
    """Draw one attention matrix as a heatmap (chapters 02-04): row ``i`` shows query ``i``'s weights.

    weights: ``(tq, tk)`` (a tensor or array; leading dims of size 1 are dropped); query_tokens:
    ``tq`` labels; key_tokens: ``tk`` labels (default: the query tokens, as in self-attention).
    ``vmax=1`` fixes the colour scale so heads and layers compare; ``None`` uses the largest weight.
    Cells carry their values when the matrix is small. The figure fits the book's text column, its
    labels at a readable size: with many tokens, every second (third, ...) one is labelled.
    Returns the matplotlib ``Axes``.
    """
    w = _as_numpy(weights)
    while w.ndim > 2 and w.shape[0] == 1:
        w = w[0]
    query_tokens = [str(token) for token in query_tokens]
    key_tokens = query_tokens if key_tokens is None else [str(token) for token in key_tokens]
    if w.ndim != 2 or w.shape != (len(query_tokens), len(key_tokens)):
        raise ValueError(
            f"weights must have shape (tq, tk) = ({len(query_tokens)}, {len(key_tokens)}) to match the "
            f"tokens, got {tuple(w.shape)}; pick one head and example, e.g. weights[0, head]."
        )
    tq, tk = w.shape
    if not tq or not tk:
        raise ValueError("nothing to draw: pass at least one query and one key token.")
    if ax is None:
        cell = _fit_cell(tk, query_tokens, 1, COLORBAR if colorbar else 0.1)
        font, step, _ = tick_layout(cell, query_tokens)
        width = (
            text_width(query_tokens[::step], font) + AXIS_LABEL + cell * tk + (COLORBAR if colorbar else 0.1)
        )
        height = cell * tq + _label_height(key_tokens, cell) + (0.4 if title else 0.1)
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    else:  # the cells of the axes given, as drawn with equal aspect
        box = ax.get_position()
        cell = min(box.width * ax.figure.get_figwidth() / tk, box.height * ax.figure.get_figheight() / tq)
    top = vmax if vmax is not None else max(float(w.max()), 1e-12)
    if annotate is None:
        annotate = max(w.shape) <= ANNOTATE_UP_TO
    image = _draw_heatmap(ax, w, query_tokens, key_tokens, cell, top, annotate)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def _grid_shape(heads: int, ncols: int, tk: int, tokens: Sequence[str]) -> tuple[int, float]:
    """Panels per row (at most ``ncols``) and their cell size (inches) for the book's width.

    As many columns as keep every token labelled, but two at least (a grid stays on one screen:
    with many tokens, every second or third one is labelled instead).
    """

    def cell(columns: int) -> float:
        return _fit_cell(tk, tokens, columns, COLORBAR + 0.15 * (columns - 1))

    most = min(ncols, heads)
    columns = next((c for c in range(most, 0, -1) if tick_layout(cell(c), tokens)[1] == 1), 1)
    columns = max(columns, min(2, most))
    return columns, cell(columns)


def attention_grid(
    weights,
    tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    example: int = 0,
    ncols: int = 4,
    title: str | None = None,
    vmax: float | None = 1.0,
):
    """All heads of one layer side by side (chapter 04), one shared colour scale.

    weights: ``(h, tq, tk)`` or ``(b, h, tq, tk)`` (then batch element ``example`` is shown).
    ncols: at most this many panels per row; fewer when the tokens need the width to stay readable
    in the book's text column. Returns the matplotlib ``Figure``.
    """
    w = _as_numpy(weights)
    if w.ndim == 4:
        w = w[example]
    if w.ndim != 3:
        raise ValueError(f"weights must have shape (h, tq, tk) or (b, h, tq, tk), got {tuple(w.shape)}.")
    tokens = [str(token) for token in tokens]
    key_tokens = tokens if key_tokens is None else [str(token) for token in key_tokens]
    heads, tq, tk = w.shape
    if (tq, tk) != (len(tokens), len(key_tokens)):
        raise ValueError(
            f"weights must have shape (h, tq, tk) with (tq, tk) = ({len(tokens)}, {len(key_tokens)}) to "
            f"match the tokens, got {tuple(w.shape)}."
        )
    ncols, cell = _grid_shape(heads, ncols, tk, tokens)
    nrows = -(-heads // ncols)
    font, step, _ = tick_layout(cell, tokens)
    width = text_width(tokens[::step], font) + AXIS_LABEL + ncols * cell * tk + COLORBAR + 0.15 * (ncols - 1)
    height = nrows * (cell * tq + 0.35) + _label_height(key_tokens, cell) + (0.4 if title else 0.1)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained")
    top = vmax if vmax is not None else float(w.max())
    for head, ax in enumerate(axes.flat):
        if head >= heads:
            ax.axis("off")
            continue
        _draw_heatmap(ax, w[head], tokens, key_tokens, cell, top, annotate=False)
        ax.set_title(f"head {head}")
        if head % ncols:  # label the outer axes only: rows share the queries, columns the keys
            ax.set_ylabel("")
            ax.tick_params(labelleft=False)
        if head < heads - ncols:
            ax.set_xlabel("")
            ax.tick_params(labelbottom=False)
    image = axes.flat[0].images[0]
    fig.colorbar(image, ax=axes, shrink=0.8)
    if title:
        fig.suptitle(title)
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


def scaling_plot(
    dims: Sequence[int],
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    logy=(),
    xlabel: str = "head width d",
):
    """Chapter 03: one panel per quantity (the mapping's keys), one line per variant, against ``d``.

    curves: ``{"quantity": {"unscaled": [...], "scaled by 1/sqrt(d)": [...]}, ...}``, each list as
    long as ``dims``. Quantities named in ``logy`` get a log y-axis. Returns the ``Figure``.
    """
    width = min(BOOK_WIDTH, max(6.0, 4.2 * len(curves)))  # no wider than the book's text column
    fig, axes = plt.subplots(1, len(curves), figsize=(width, 3.6), squeeze=False, layout="constrained")
    title_chars = int((width / len(curves) - 0.5) * 72 / (0.6 * FONT))  # titles wrap to their panel's width
    for ax, (quantity, lines) in zip(axes[0], curves.items(), strict=True):
        for label, values in lines.items():
            if len(values) != len(dims):
                raise ValueError(f"{quantity!r}/{label!r} has {len(values)} values for {len(dims)} dims.")
            ax.plot(dims, values, marker="o", label=label)
        ax.set_xscale("log", base=2)
        if quantity in logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_title(textwrap.fill(quantity, title_chars))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize="small")
    return fig
