"""Plots of chapter 18. Every function takes plain numbers (tensors or lists) and returns the figure.

- :func:`phase_change`: the in-context losses and every head's two scores over training (18.2);
- :func:`training_frame`: one measurement of the run, for the interactive figure (18.2);
- :func:`head_maps`: every head's previous-token and induction score as two heat maps (18.2, 18.3);
- :func:`patching_maps`: the logit difference restored by patching, per block and position, per head (18.4);
- :func:`probe_accuracy`: a sentiment probe's test accuracy after every block, with its interval (18.5);
- :func:`steering`: the sentiment of steered text against the strength of the push (18.5);
- :func:`phase_diagram`: what a toy model of two features in one dimension stores (18.6);
- :func:`gram_panels`: the toy model's ``WᵀW`` and each feature's length (18.6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import BOOK_WIDTH, FAINT, HEATMAP_CMAP, PALETTE

__all__ = [
    "gram_panels",
    "head_maps",
    "patching_maps",
    "phase_change",
    "phase_diagram",
    "probe_accuracy",
    "steering",
    "training_frame",
]


def phase_change(steps: Sequence[int], first, repeat, previous, induction):
    """Left: the loss on the first pass and on the repeat against the step. Middle and right: every head's
    previous-token and induction score (``previous``, ``induction``: ``(n, L, h)``), a colour per layer."""
    previous, induction = np.asarray(previous), np.asarray(induction)
    fig, axes = plt.subplots(1, 3, figsize=(BOOK_WIDTH, 2.8), layout="constrained")
    axes[0].plot(steps, first, label="first pass", color=FAINT)
    axes[0].plot(steps, repeat, label="repeat", color=PALETTE[0])
    axes[0].set(xlabel="step", ylabel="loss (nats)", title="next-token loss")
    axes[0].legend(fontsize="small")
    for ax, scores, title in (
        (axes[1], previous, "previous-token score"),
        (axes[2], induction, "induction score"),
    ):
        for layer in range(scores.shape[1]):
            for head in range(scores.shape[2]):
                label = f"layer {layer}" if head == 0 else None
                ax.plot(steps, scores[:, layer, head], color=PALETTE[layer % len(PALETTE)], label=label)
        ax.set(xlabel="step", title=title, ylim=(0, 1))
    axes[2].legend(fontsize="small")
    return fig


def training_frame(step: int, pattern, previous, induction, head: tuple[int, int]):
    """One measurement: the scores of every head (bars) and ``head``'s attention ``pattern (t, t)`` on a
    repeated sequence, where an induction head draws a line one period below the diagonal."""
    previous, induction = np.asarray(previous), np.asarray(induction)
    fig, axes = plt.subplots(1, 2, figsize=(BOOK_WIDTH, 3.0), layout="constrained")
    labels = [f"{layer}.{h}" for layer in range(previous.shape[0]) for h in range(previous.shape[1])]
    x = np.arange(len(labels))
    axes[0].bar(x - 0.2, previous.flatten(), 0.4, label="previous token", color=PALETTE[1])
    axes[0].bar(x + 0.2, induction.flatten(), 0.4, label="induction", color=PALETTE[0])
    axes[0].set_xticks(x, labels)
    axes[0].set(ylim=(0, 1), xlabel="head (layer.head)", title=f"step {step}")
    axes[0].legend(fontsize="small", loc="upper left")
    axes[1].imshow(np.asarray(pattern), cmap=HEATMAP_CMAP, vmin=0, vmax=1)
    axes[1].set(title=f"head {head[0]}.{head[1]}'s attention", xlabel="key", ylabel="query")
    return fig


def _heat(ax, values, title: str, *, vmin=0.0, vmax=1.0, cmap=HEATMAP_CMAP, xlabel="head"):
    values = np.asarray(values)
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set(title=title, xlabel=xlabel, ylabel="layer")
    if values.shape[1] <= 12:
        ax.set_xticks(range(values.shape[1]))
    return image


def head_maps(previous, induction, *, title: str = ""):
    """Two heat maps, layers down and heads across: ``previous`` and ``induction`` ``(L, h)``."""
    depth = np.asarray(previous).shape[0]
    fig, axes = plt.subplots(1, 2, figsize=(BOOK_WIDTH, min(1.2 + 0.25 * depth, 7.0)), layout="constrained")
    _heat(axes[0], previous, "previous-token score")
    image = _heat(axes[1], induction, "induction score")
    fig.colorbar(image, ax=axes, shrink=0.8)
    if title:
        fig.suptitle(title)
    return fig


def patching_maps(residual, heads, tokens: Sequence[str], *, title: str = ""):
    """Left: the share restored by patching block ``l``'s output at position ``p`` (``residual (L, t)``,
    tokens along the bottom); right: by patching head ``(l, j)`` (``heads (L, h)``). Red restores, blue
    pushes further toward the corrupted answer."""
    residual, heads = np.asarray(residual), np.asarray(heads)
    depth = residual.shape[0]
    fig, axes = plt.subplots(
        1, 2, figsize=(BOOK_WIDTH, min(1.8 + 0.22 * depth, 7.5)), layout="constrained", width_ratios=(3, 2)
    )
    bound = max(1.0, float(np.abs(heads).max()))
    _heat(axes[0], residual, "a block's output, one position", vmin=-1, vmax=1, cmap="RdBu_r", xlabel="")
    axes[0].set_xticks(range(len(tokens)), tokens, rotation=90, fontsize="small")
    image = _heat(axes[1], heads, "one head, every position", vmin=-bound, vmax=bound, cmap="RdBu_r")
    fig.colorbar(image, ax=axes[1], shrink=0.8, label="share of the logit difference restored")
    if title:
        fig.suptitle(title)
    return fig


def probe_accuracy(accuracy: Sequence, references: Mapping[str, float], *, title: str = ""):
    """Test accuracy of the probe on the stream after each block (``accuracy``: one
    :class:`~fromscratch.metrics.intervals.Proportion` per block, its Wilson interval shaded), with other
    accuracies as labelled horizontal lines (``references``: name -> accuracy) and chance at 50 %."""
    blocks = np.arange(len(accuracy))
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH * 0.75, 3.0), layout="constrained")
    ax.fill_between(
        blocks, [a.low for a in accuracy], [a.high for a in accuracy], color=PALETTE[0], alpha=0.2
    )
    ax.plot(blocks, [a.value for a in accuracy], "o-", color=PALETTE[0], ms=3, label="probe on the stream")
    for colour, (name, value) in zip(PALETTE[1:], references.items(), strict=False):
        ax.axhline(value, color=colour, ls="--", lw=1, label=name)
    ax.axhline(0.5, color=FAINT, lw=1, label="chance")
    ax.set(xlabel="block", ylabel="test accuracy", ylim=(0.3, 1.0), title=title)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def steering(strengths: Sequence[float], readers: Mapping[str, Sequence], *, title: str = ""):
    """The share of steered continuations each reader reads as positive (``readers``: name -> one
    :class:`~fromscratch.metrics.intervals.Proportion` per strength, with its interval), against the
    strength of the push along the probe's direction (0: no push)."""
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH * 0.6, 2.8), layout="constrained")
    offset = 0.02 * (max(strengths) - min(strengths))  # side by side, so the intervals do not hide each other
    for i, (name, positive) in enumerate(readers.items()):
        values = [p.value for p in positive]
        errors = [[p.value - p.low for p in positive], [p.high - p.value for p in positive]]
        at = [s + (i - (len(readers) - 1) / 2) * offset for s in strengths]
        ax.errorbar(at, values, yerr=errors, fmt="o-", color=PALETTE[i], capsize=3, label=name)
    ax.axhline(0.5, color=FAINT, lw=1)
    ax.legend(frameon=False, fontsize=8)
    ax.set(
        xlabel="strength (standard deviations along the direction)",
        ylabel="read as positive",
        ylim=(0, 1),
        title=title,
    )
    return fig


CATEGORIES = ("only feature 1", "both, in superposition", "only feature 2", "neither")


def phase_diagram(sparsities: Sequence[float], importances: Sequence[float], cells: Sequence[Sequence[str]]):
    """What two features in one dimension become, per sparsity (rows) and the second feature's relative
    importance (columns): ``cells[i][j]`` one of :data:`CATEGORIES`."""
    codes = np.array([[CATEGORIES.index(c) for c in row] for row in cells])
    colours = plt.matplotlib.colors.ListedColormap([PALETTE[1], PALETTE[0], PALETTE[2], FAINT])
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH * 0.6, 2.8), layout="constrained")
    ax.imshow(codes, cmap=colours, vmin=-0.5, vmax=3.5, aspect="auto")
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            ax.text(j, i, cell.replace(", ", ",\n"), ha="center", va="center", fontsize=9, color="white")
    ax.set_xticks(range(len(importances)), [f"{v:g}" for v in importances])
    ax.set_yticks(range(len(sparsities)), [f"{v:g}" for v in sparsities])
    ax.set(xlabel="importance of feature 2 (feature 1: 1)", ylabel="sparsity (P[feature off])")
    return fig


def gram_panels(models: Mapping[str, torch.Tensor]):
    """For each toy model's ``W (m, n)`` (name -> tensor): ``WᵀW (n, n)`` (a feature's length on the
    diagonal, the interference between two off it), signed."""
    fig, axes = plt.subplots(1, len(models), figsize=(BOOK_WIDTH, 3.1), layout="constrained", squeeze=False)
    for ax, (name, W) in zip(axes[0], models.items(), strict=True):
        gram = (W.T @ W).detach().numpy()
        image = ax.imshow(gram, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set(title=name, xlabel="feature", ylabel="feature")
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="WᵀW")
    return fig
