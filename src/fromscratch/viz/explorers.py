"""The chapters' interactive figures, each precomputed for every setting of its sliders with
:func:`~fromscratch.viz.precomputed.frames` (issue 37), so they respond in the book, the decks and a notebook.

- ``attention_frames``: attention heatmaps per layer and head (chapters 04, 06, 09, 14);
- ``taste_frames``: the top movies of a made-up user whose taste two sliders set (chapter 01);
- ``distribution_bars``: a next-token distribution as bars, the frame of chapter 07's temperature, top-k
  and top-p sliders;
- ``distance_panels``: curves against the distance between query and key, one highlighted (chapter 11's
  RoPE and ALiBi);
- ``kv_cache_plot``: the KV cache's size against the length, one line per number of key/value heads
  (chapter 14).

Each takes what the chapter computed; nothing here runs a model.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.data.movielens import short_title
from fromscratch.models.recommender import MatrixFactorization, recommend, taste_vector
from fromscratch.viz.attention import attention_heatmap
from fromscratch.viz.precomputed import Frames, frames
from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = [
    "attention_frames",
    "taste_frames",
    "Bars",
    "distribution_bars",
    "distance_panels",
    "kv_cache_plot",
]

FAINT = "#bbbbbb"  # the curves that are not chosen


def attention_frames(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    example: int = 0,
    mean: bool = True,
    layer_name: str = "layer",
    title: str = "",
    annotate: bool | None = None,
    vmax: float | None = None,
) -> Frames:
    """Attention heatmaps with a slider for the layer and one for the head (chapters 04, 06, 09, 14).

    weights: a list with one ``(b, h, tq, tk)`` (or ``(h, tq, tk)``) tensor per layer, as models return
    them with ``return_attention=True``, or one such tensor; batch element ``example`` is shown.
    mean=True adds "mean" to the heads: their average. Every frame shares one colour scale, from 0 to
    ``vmax`` (default: the largest weight of any layer and head), so layers and heads compare and a
    spread-out pattern still shows. The layer slider is left out when there is one layer.
    """
    layers = [weights] if isinstance(weights, torch.Tensor) else list(weights)
    layers = [torch.as_tensor(w).detach().float().cpu() for w in layers]
    layers = [w[example] if w.dim() == 4 else w for w in layers]  # (h, tq, tk) each
    if any(w.dim() != 3 for w in layers):
        shapes = [tuple(w.shape) for w in layers]
        raise ValueError(f"each layer's weights must be (b, h, tq, tk) or (h, tq, tk), got {shapes}.")
    heads = layers[0].shape[0]
    top = vmax if vmax is not None else max(float(w.max()) for w in layers)
    choices: dict[str, object] = {str(n): n for n in range(heads)}
    if mean and heads > 1:
        choices["mean"] = "mean"

    def draw(head, **where):
        layer = where.get(layer_name, 0)
        w = layers[layer].mean(0) if head == "mean" else layers[layer][head]  # (tq, tk)
        where = f"{layer_name} {layer}, " if len(layers) > 1 else ""
        heading = f"{title}: " if title else ""
        return attention_heatmap(
            w, query_tokens, key_tokens, title=f"{heading}{where}head {head}", annotate=annotate, vmax=top
        )

    if len(layers) == 1:
        return frames(draw, head=choices)
    return frames(draw, **{layer_name: range(len(layers))}, head=choices)


def taste_frames(
    model: MatrixFactorization,
    titles: Sequence[str],
    directions: torch.Tensor,
    *,
    k: int,
    candidates: torch.Tensor | None = None,
    limit: float = 3.0,
    step: float = 0.5,
) -> Frames:
    """Chapter 01's made-up user: a slider per learned direction (``directions`` ``(2, f)``, as
    ``recommender.item_directions`` gives), in standard deviations of the real users along it, from
    ``-limit`` to ``limit``; each frame is the top-``k`` list with its predicted stars."""
    amounts = [round(float(a), 6) for a in np.arange(-limit, limit + step / 2, step)]

    def top(**taste):
        user = taste_vector(model, directions, list(taste.values()))  # (f,)
        items, stars = recommend(model, user, k, candidates=candidates)
        rows = "".join(
            f"<tr><td>{r + 1}</td><td>{html.escape(short_title(titles[i]))}</td><td>{s:.2f}</td></tr>"
            for r, (i, s) in enumerate(zip(items.tolist(), stars, strict=True))
        )
        head = "<tr><th>rank</th><th>movie</th><th>predicted stars</th></tr>"
        return f"<table class='fs-taste'><thead>{head}</thead><tbody>{rows}</tbody></table>"

    controls = {f"direction {j + 1}": amounts for j in range(directions.shape[0])}
    style = ".fs-taste td, .fs-taste th {text-align: left; padding: 0.2em 1.2em 0.2em 0}"
    return frames(top, start=dict.fromkeys(controls, 0.0), style=style, **controls)


class Bars:
    """Probabilities as horizontal bars, largest first: HTML in a page, aligned text in ``print``."""

    STYLE = (  # short rows: a figure holds a frame like this for every setting of its sliders
        ".fs-bars div {display: flex; align-items: center; height: 1.35em}"
        ".fs-bars code {width: 4em; text-align: right; margin-right: 0.5em; color: inherit; background: none}"
        f".fs-bars i {{display: inline-block; height: 0.9em; background: {PALETTE[0]}; margin-right: 0.4em}}"
    )

    def __init__(self, probs: Sequence[float], labels: Sequence[str], caption: str = "", note: str = ""):
        self.probs, self.labels, self.caption, self.note = list(probs), list(labels), caption, note

    def __repr__(self) -> str:
        lines = [self.caption] if self.caption else []
        pairs = zip(self.labels, self.probs, strict=True)
        lines += [f"{label:>8} {p:6.1%} {'#' * round(40 * p)}" for label, p in pairs]
        return "\n".join(lines + ([self.note] if self.note else []))

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<div><code>{html.escape(label)}</code><i style='width:{30 * p:.2f}em'></i>{p:.1%}</div>"
            for label, p in zip(self.labels, self.probs, strict=True)
        )
        caption = f"<b>{html.escape(self.caption)}</b>" if self.caption else ""
        note = f"<p style='margin:0.3em 0'>{html.escape(self.note)}</p>" if self.note else ""
        return f"<div class='fs-bars'><style>{self.STYLE}</style>{caption}{rows}{note}</div>"


def distribution_bars(
    probs: torch.Tensor,
    labels: Sequence[str],
    *,
    order: Sequence[int] | None = None,
    caption: str = "",
    note: str = "",
) -> Bars:
    """The probabilities ``probs`` ``(V,)`` of the tokens ``order`` (indices; default: all, largest first),
    labelled by ``labels`` (one per token of the vocabulary): chapter 07's sampling sliders."""
    probs = torch.as_tensor(probs).detach().float().cpu()
    order = probs.argsort(descending=True).tolist() if order is None else list(order)
    return Bars([float(probs[i]) for i in order], [labels[i] for i in order], caption, note)


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


def kv_cache_plot(
    lengths: Sequence[int],
    sizes: Mapping[int, Sequence[float]],
    *,
    kv_heads: int,
    length: int,
    heads: int,
    title: str = "",
):
    """The KV cache's size against the number of cached positions, one line per number of key/value heads
    ``hk`` (``sizes``: hk -> bytes at each of ``lengths``), on logarithmic axes; the line of ``kv_heads``
    in colour with its size at ``length`` marked and written out (chapter 14). Returns the Figure."""
    most = max(sizes)  # the most key/value heads: multi-head attention when it is h
    largest = max(max(values) for values in sizes.values())
    unit, scale = ("MiB", 2**20) if largest >= 2**20 else ("KiB", 2**10)  # one unit for every frame
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 6.4), 3.6), layout="constrained")
    for hk, values in sorted(sizes.items(), reverse=True):
        chosen = hk == kv_heads
        colour = PALETTE[0] if chosen else FAINT
        ax.plot(
            lengths,
            np.asarray(values, dtype=float) / scale,
            marker="o",
            ms=3,
            color=colour,
            lw=2 if chosen else 1,
        )
    at = list(lengths).index(length)
    value = sizes[kv_heads][at] / scale
    ax.plot([length], [value], "o", ms=9, color=PALETTE[3], zorder=4)
    ratio = sizes[most][at] / sizes[kv_heads][at]
    share = "" if kv_heads == most else f", 1/{ratio:g} of hk = {most}"
    ax.text(
        0.02,
        0.97,
        f"hk = {kv_heads}, t = {length:,}: {value:,.3g} {unit}{share}",
        transform=ax.transAxes,
        va="top",
        color=PALETTE[3],
        fontweight="bold",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(list(lengths), [f"{t:,}" for t in lengths])
    ax.set(xlabel="cached positions t", ylabel=f"KV cache ({unit})")
    ax.set_title(
        title or f"{heads} query heads; lines: hk = {', '.join(map(str, sorted(sizes, reverse=True)))}"
    )
    return fig
