"""Diagrams of the architecture, drawn by code (chapters 03-05, 07, 09 and the slide decks).

- ``block_diagram``: one transformer block, post-norm (the tutorial's) or pre-norm (GPT-2's);
- ``multi_head_diagram``: multi-head attention as the package computes it, heads folded into the batch;
- ``mask_diagram``: the causal and padding masks of ``fromscratch.attention.masks`` and their combination;
- ``encoder_decoder_diagram``: the encoder-decoder of the original transformer, with cross-attention.

Every diagram is a matplotlib figure on an opaque white card with dark text (readable on the light and
the dark book theme) at most ``BOOK_WIDTH`` wide, in the course's colour-blind safe palette. The masks
are computed by ``fromscratch.attention.masks``, so the picture cannot drift from the code: True (may
attend) is drawn filled.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from fromscratch.attention.masks import causal_mask, padding_mask
from fromscratch.viz.style import BOOK_WIDTH, FONT, MIN_FONT, PALETTE

__all__ = ["block_diagram", "multi_head_diagram", "mask_diagram", "encoder_decoder_diagram"]

INK = "#222222"  # text and arrows: dark on the white card
CARD = "white"
# one colour per kind of part, the same in every diagram
COLOURS = {
    "attention": PALETTE[0],
    "cross": PALETTE[4],
    "norm": PALETTE[1],
    "ff": PALETTE[2],
    "linear": PALETTE[5],
    "io": "#DDDDDD",
}


def _card(width: float, height: float) -> tuple[Figure, plt.Axes]:
    """A white figure ``width`` x ``height`` inches with one axes in data units = inches, no frame."""
    fig = plt.figure(figsize=(width, height), facecolor=CARD)
    ax = fig.add_axes((0, 0, 1, 1), facecolor=CARD)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def _box(ax, x: float, y: float, w: float, h: float, label: str, kind: str, fontsize: float = FONT) -> None:
    """A rounded box centred on (x, y), filled with the colour of ``kind``, its label in dark text."""
    colour = COLOURS[kind]
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=colour,
            alpha=0.35 if kind != "io" else 1.0,
            edgecolor=colour if kind != "io" else "#888888",
            linewidth=1.5,
        )
    )
    ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, color=INK)


def _arrow(
    ax, start: tuple[float, float], end: tuple[float, float], rad: float = 0.0, style: str = "-|>"
) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle=style,
            mutation_scale=12,
            color=INK,
            linewidth=1.2,
            connectionstyle=f"arc3,rad={rad}",
        )
    )


def _add(ax, x: float, y: float) -> None:
    """The residual add: a circled plus on the main path."""
    ax.add_patch(plt.Circle((x, y), 0.14, facecolor=CARD, edgecolor=INK, linewidth=1.2))
    ax.text(x, y, "+", ha="center", va="center", fontsize=FONT, color=INK)


BLOCK_WIDTH = 3.55  # inches: one block column; two fit the book's column side by side


def _draw_block(ax, x0: float, norm: str) -> float:
    """Draw one ``norm``-norm block in the column starting at ``x0`` (inches); return the top of its
    output.
    """
    # the main path, bottom to top: "<" opens a skip connection, "+" closes it
    attn, ff, ln = ("self-attention", "attention"), ("feed-forward", "ff"), ("layer norm", "norm")
    path = {"post": ["<", attn, "+", ln, "<", ff, "+", ln], "pre": ["<", ln, attn, "+", "<", ln, ff, "+"]}[
        norm
    ]
    x, w, gap = x0 + 1.55, 2.1, 0.32
    _box(ax, x, 0.35, w, 0.4, "x  (b, t, e)", "io")
    top, opened = 0.55, []  # the top of the last thing drawn; where the open skips left the path
    for node in path:
        if node == "<":  # a skip leaves the main path here
            opened.append(top + gap / 2)
            continue
        half = 0.14 if node == "+" else 0.2
        centre = top + gap + half
        _arrow(ax, (x, top), (x, centre - half))
        if node == "+":
            _add(ax, x, centre)
            start, side = opened.pop(), x + w / 2 + 0.35
            ax.plot([x, side, side], [start, start, centre], color=INK, linewidth=1.2)
            ax.plot([x], [start], marker="o", markersize=3.5, color=INK)
            _arrow(ax, (side, centre), (x + 0.15, centre))
        else:
            _box(ax, x, centre, w, 0.4, *node)
        top = centre + half
    out = top + gap + 0.2
    _arrow(ax, (x, top), (x, out - 0.2))
    _box(ax, x, out, w, 0.4, "out  (b, t, e)", "io")
    ax.text(x0 + 0.1, out + 0.42, f"{norm}-norm block", fontsize=FONT, color=INK, va="top", weight="bold")
    return out + 0.2


def block_diagram(*, norm: str = "post") -> Figure:
    """One transformer block (chapter 05): self-attention and a feed-forward layer, each with a residual.

    ``norm="post"`` normalises after each residual add (the original transformer and the tutorial);
    ``norm="pre"`` normalises each sub-layer's input and keeps the residual path clean (GPT-2, chapter 07);
    ``norm="both"`` draws the two side by side, post-norm on the left. The shapes in and out are
    ``(b, t, e)``.
    """
    if norm not in ("post", "pre", "both"):
        raise ValueError(f"norm must be 'post', 'pre' or 'both', got {norm!r}")
    norms = ["post", "pre"] if norm == "both" else [norm]
    fig, ax = _card(BLOCK_WIDTH * len(norms), 5.6)
    top = max(_draw_block(ax, i * BLOCK_WIDTH, n) for i, n in enumerate(norms))
    ax.set_ylim(0, top + 0.3)
    fig.set_size_inches(BLOCK_WIDTH * len(norms), top + 0.3)
    return fig


def multi_head_diagram(*, heads: int = 4) -> Figure:
    """Multi-head attention (chapter 04) as the package computes it: project, fold heads into the batch,
    attend once over ``(b*h, t, s)``, unfold, concatenate and unify with one linear layer.

    Each stage is labelled with its shape in the legend's letters (b, t, e, h, s = e // h).
    """
    if not 1 <= heads <= 8:
        raise ValueError(f"heads must be between 1 and 8 to stay readable, got {heads}")
    fig, ax = _card(BOOK_WIDTH, 4.0)
    small = max(MIN_FONT, FONT - 1)
    _box(ax, 0.65, 1.8, 1.0, 0.5, "x\n(b, t, e)", "io", small)
    for name, y in (("Q", 2.9), ("K", 1.8), ("V", 0.7)):
        _arrow(ax, (1.15, 1.8), (1.6, y), rad=0.0)
        _box(ax, 2.0, y, 0.8, 0.45, f"W{name.lower()}\n→ {name}", "linear", small)
        _arrow(ax, (2.4, y), (2.75, y))
    ax.text(3.15, 3.25, "split & fold\n(b*h, t, s)", ha="center", va="bottom", fontsize=small, color=INK)
    colours = [PALETTE[i % 6] for i in range(heads)]
    for y in (2.9, 1.8, 0.7):  # Q, K, V
        for i in range(heads):  # one thin slab per head: the e features cut into h slices of s
            ax.add_patch(
                FancyBboxPatch(
                    (2.8 + i * 0.18, y - 0.22),
                    0.14,
                    0.44,
                    boxstyle="square,pad=0",
                    facecolor=colours[i],
                    alpha=0.6,
                    edgecolor=INK,
                    linewidth=0.6,
                )
            )
    right = 2.8 + heads * 0.18
    for y in (2.9, 1.8, 0.7):
        _arrow(ax, (right + 0.05, y), (4.15, 1.8 + (y - 1.8) * 0.25))
    _box(ax, 4.92, 1.8, 1.5, 0.8, "softmax(QKᵀ/√s)V\nall heads at once", "attention", small)
    _arrow(ax, (5.67, 1.8), (5.95, 1.8))
    _box(ax, 6.5, 1.8, 0.95, 0.55, "unfold &\nconcat", "io", small)
    _arrow(ax, (6.5, 2.08), (6.5, 2.5))
    _box(ax, 6.5, 2.8, 0.95, 0.5, "unify\nheads", "linear", small)
    _arrow(ax, (6.5, 3.05), (6.5, 3.35))
    _box(ax, 6.5, 3.6, 0.95, 0.4, "(b, t, e)", "io", small)
    ax.text(
        0.15, 3.9, f"multi-head attention, h = {heads}", fontsize=FONT, color=INK, weight="bold", va="top"
    )
    return fig


def mask_diagram(lengths: Sequence[int] = (6, 4), *, t: int | None = None) -> Figure:
    """The masks of chapters 03 and 07, computed by ``fromscratch.attention.masks``: causal ``(t, t)``,
    padding for the last of ``lengths`` (keys ``(t,)``, broadcast over queries) and the two combined with
    "and".

    Filled cells are True, "may attend": rows are queries, columns keys. ``t`` defaults to max(lengths).
    """
    if not lengths or min(lengths) < 1:
        raise ValueError(f"lengths must be one or more positive sequence lengths, got {list(lengths)}")
    t = t or max(lengths)
    if not 2 <= t <= 16:
        raise ValueError(f"t must lie in 2..16 for a readable grid, got {t}")
    causal = causal_mask(t)  # (t, t)
    padding = padding_mask(torch.tensor(list(lengths)), t)[-1]  # (t,): the shortest-looking, last sequence
    combined = causal & padding[None, :]  # (t, t)
    panels = [
        ("causal", causal),
        (f"padding (length {lengths[-1]})", padding[None, :].expand(t, t)),
        ("both", combined),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(BOOK_WIDTH, 2.9), facecolor=CARD)
    for ax, (title, mask) in zip(axes, panels, strict=True):
        ax.set_facecolor(CARD)
        ax.imshow(
            mask.numpy(), cmap=plt.matplotlib.colors.ListedColormap(["#F2F2F2", PALETTE[0]]), vmin=0, vmax=1
        )
        ax.set_xticks(range(t))
        ax.set_yticks(range(t))
        ax.tick_params(which="both", labelsize=MIN_FONT, colors=INK, length=0)
        ax.set_xticks(np.arange(-0.5, t), minor=True)
        ax.set_yticks(np.arange(-0.5, t), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.grid(which="major", visible=False)
        ax.set_title(title, fontsize=FONT, color=INK)
        ax.set_xlabel("key", fontsize=MIN_FONT, color=INK)
        for side in ax.spines.values():
            side.set_visible(False)
    axes[0].set_ylabel("query", fontsize=MIN_FONT, color=INK)
    fig.text(
        0.5,
        0.02,
        "filled = True = may attend (PyTorch's convention)",
        ha="center",
        fontsize=MIN_FONT,
        color=INK,
    )
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.2, top=0.88, wspace=0.25)
    return fig


def encoder_decoder_diagram(*, layers: int = 6) -> Figure:
    """The encoder-decoder (chapter 09): ``layers`` unmasked encoder blocks over the source, ``layers``
    decoder blocks (masked self-attention, cross-attention to the encoder's output, feed-forward) over
    the target so far, and a linear layer to the next-token logits ``(b, tq, V)``.
    """
    if layers < 1:
        raise ValueError(f"layers must be at least 1, got {layers}")
    fig, ax = _card(BOOK_WIDTH, 4.6)
    small = max(MIN_FONT, FONT - 1)
    ex, dx, w = 1.7, 5.1, 2.3
    # encoder column
    _box(ax, ex, 0.4, w, 0.45, "source tokens (b, tk)", "io", small)
    _arrow(ax, (ex, 0.62), (ex, 0.95))
    ax.add_patch(
        FancyBboxPatch((ex - 1.3, 0.95), 2.6, 2.1, boxstyle="round,pad=0.03", fill=False, edgecolor=INK)
    )
    _box(ax, ex, 1.45, w - 0.3, 0.45, "self-attention", "attention", small)
    _box(ax, ex, 2.45, w - 0.3, 0.45, "feed-forward", "ff", small)
    _arrow(ax, (ex, 1.68), (ex, 2.22))
    ax.text(ex - 1.25, 3.0, f"encoder × {layers}", fontsize=small, color=INK, va="top")
    _arrow(ax, (ex, 3.08), (ex, 3.55))
    _box(ax, ex, 3.8, w, 0.45, "memory (b, tk, e)", "io", small)
    # decoder column
    _box(ax, dx, 0.4, w, 0.45, "target so far (b, tq)", "io", small)
    _arrow(ax, (dx, 0.62), (dx, 0.95))
    ax.add_patch(
        FancyBboxPatch((dx - 1.3, 0.95), 2.6, 2.75, boxstyle="round,pad=0.03", fill=False, edgecolor=INK)
    )
    _box(ax, dx, 1.35, w - 0.3, 0.45, "masked self-attention", "attention", small)
    _box(ax, dx, 2.2, w - 0.3, 0.45, "cross-attention", "cross", small)
    _box(ax, dx, 3.05, w - 0.3, 0.45, "feed-forward", "ff", small)
    _arrow(ax, (dx, 1.58), (dx, 1.97))
    _arrow(ax, (dx, 2.43), (dx, 2.82))
    ax.text(dx + 1.25, 3.66, f"decoder × {layers}", fontsize=small, color=INK, va="top", ha="right")
    _arrow(ax, (dx, 3.73), (dx, 3.95))
    _box(ax, dx, 4.2, w, 0.45, "linear → logits (b, tq, V)", "linear", small)
    # cross-attention: keys and values from the memory, queries from the decoder
    _arrow(ax, (ex + w / 2, 3.8), (dx - (w - 0.3) / 2, 2.2), rad=-0.25)
    ax.text(
        (ex + dx) / 2 - 0.1, 3.3, "keys and values\nfrom the encoder", ha="center", fontsize=small, color=INK
    )
    return fig
