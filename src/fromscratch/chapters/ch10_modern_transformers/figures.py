"""Chapter 10's figures: how tokenisers trade vocabulary for length, BPE pieces, sentence similarity,
and the label-efficiency curve (accuracy against the number of labels, per starting point)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import torch

from fromscratch.viz.style import BOOK_WIDTH, HEATMAP_CMAP, PALETTE
from fromscratch.viz.text import highlight_tokens, table

__all__ = [
    "bpe_pieces",
    "label_efficiency_plot",
    "label_efficiency_table",
    "similarity_heatmap",
    "tokeniser_tradeoff",
]


def tokeniser_tradeoff(rows: Sequence[tuple[str, int, float]], *, title: str | None = None):
    """Tokens per text against vocabulary size, one point per tokeniser (both axes logarithmic).

    rows: ``(name, vocabulary size, mean tokens per text)``. Returns the ``Axes``.
    """
    _, ax = plt.subplots(figsize=(BOOK_WIDTH, 3.6), layout="constrained")
    for (name, vocab, length), colour in zip(rows, PALETTE, strict=False):
        ax.scatter(vocab, length, s=70, color=colour, zorder=3)
        ax.annotate(f" {name}\n {length:,.0f} tokens", (vocab, length), fontsize=9, va="center")
    ax.set(xscale="log", yscale="log", xlabel="vocabulary size V", ylabel="mean tokens per review")
    ax.set_title(title or "a larger vocabulary buys shorter sequences")
    xs = [r[1] for r in rows]
    ax.set_xlim(min(xs) / 2, max(xs) * 6)
    ys = [r[2] for r in rows]
    ax.set_ylim(min(ys) / 1.6, max(ys) * 1.6)
    ax.grid(True, which="major", alpha=0.3)
    return ax


def bpe_pieces(tokens: Sequence[str], *, caption: str = ""):
    """A text's BPE tokens, side by side with alternating shades (hover shows the token's index).

    ``Ġ``-free: pass the tokens' own text (``BytePairEncoding.token_strings``); spaces show as ``·``.
    """
    shown = [t.replace(" ", "·").replace("\n", "⏎") for t in tokens]
    scores = [1.0 if i % 2 == 0 else 0.45 for i in range(len(tokens))]
    return highlight_tokens(shown, scores, caption=caption, signed=False)


def similarity_heatmap(embeddings: torch.Tensor, labels: Sequence[str], *, title: str = "cosine similarity"):
    """The cosine similarities of ``n`` normalised embeddings ``(n, e)`` as an ``(n, n)`` heatmap.

    labels: one short text per row. Returns the ``Axes``.
    """
    e = torch.as_tensor(embeddings).detach().float().cpu()
    sims = (e @ e.T).numpy()  # (n, n): cosines, since the rows have length 1
    n = len(labels)
    if sims.shape != (n, n):
        raise ValueError(f"got {sims.shape[0]} embeddings for {n} labels; pass one label per embedding.")
    size = min(BOOK_WIDTH, 2.5 + 0.42 * n)
    _, ax = plt.subplots(figsize=(BOOK_WIDTH, size), layout="constrained")
    image = ax.imshow(sims, cmap=HEATMAP_CMAP, vmin=min(0.0, float(sims.min())), vmax=1.0)
    ax.set_xticks(range(n), [str(i + 1) for i in range(n)])
    ax.set_yticks(range(n), [f"{label}  {i + 1}" for i, label in enumerate(labels)], fontsize=9)
    for i in range(n):
        for j in range(n):
            colour = "black" if sims[i, j] > 0.6 else "white"
            ax.text(j, i, f"{sims[i, j]:.2f}", ha="center", va="center", fontsize=7, color=colour)
    ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def label_efficiency_plot(
    results: Mapping[tuple[int, str], Sequence[float]],
    *,
    lines: Mapping[str, float] | None = None,
    title: str = "what pretraining buys when labels are few",
):
    """Test accuracy against the number of labelled reviews N (log axis), one line per starting point.

    results: ``{(N, init): [accuracy per seed]}``; each line is the mean over seeds, the band spans the
    lowest to the highest seed. lines: reference accuracies drawn as horizontal lines (e.g. chapter 06's
    models trained on all labels). The legend sits below the axes, clear of the lines. Returns the ``Figure``.
    """
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 4.6), layout="constrained")
    inits = list(dict.fromkeys(init for _, init in results))
    for init, colour in zip(inits, PALETTE, strict=False):
        ns = sorted(n for n, i in results if i == init)
        means = [statistics.mean(results[n, init]) for n in ns]
        ax.plot(ns, means, marker="o", color=colour, label=init)
        if any(len(results[n, init]) > 1 for n in ns):
            lows, highs = [min(results[n, init]) for n in ns], [max(results[n, init]) for n in ns]
            ax.fill_between(ns, lows, highs, color=colour, alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="chance")
    for (name, value), style in zip((lines or {}).items(), ("--", "-.", (0, (5, 1, 1, 1))), strict=False):
        ax.axhline(value, color="black", lw=0.8, ls=style, label=name)
    ticks = sorted({n for n, _ in results})
    ax.set(xscale="log", xlabel="labelled training reviews N", ylabel="test accuracy", title=title)
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks])
    ax.minorticks_off()
    fig.legend(fontsize="small", loc="outside lower center", ncol=3)
    return fig


def label_efficiency_table(results: Mapping[tuple[int, str], Sequence[float]], *, caption: str = ""):
    """The numbers of :func:`label_efficiency_plot` as a table: each N's test accuracy per starting point (the
    mean over its seeds) and each start's difference from random weights, in points (``viz.table``).

    results: ``{(N, init): [accuracy per seed]}`` with the inits ``random``, ``ours`` and ``minilm``.
    """
    inits = ("random", "ours", "minilm")
    rows = []
    for n in sorted({n for n, _ in results}):
        mean = {init: statistics.mean(results[n, init]) for init in inits}
        rows.append(
            (
                f"{n:,}",
                *(f"{mean[init]:.1%}" for init in inits),
                *(f"{(mean[init] - mean['random']) * 100:+.1f}" for init in inits[1:]),
            )
        )
    header = ["N", "random weights", "ours", "MiniLM", "ours - random", "MiniLM - random"]
    return table(rows, header=header, caption=caption)
