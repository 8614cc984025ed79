"""Plots of chapter 14: grouped-query attention (the ablation's curves are ``viz.ablation_curves``).

- :func:`gqa_plot`: KV-cache size and decoding speed against the number of key/value heads (14.2);
- :func:`kv_cache_plot`: the KV cache's size against the length, one line per number of key/value
  heads (14.2).

Every function takes plain numbers and returns the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from fromscratch.viz.style import BOOK_WIDTH, FAINT, PALETTE

__all__ = ["gqa_plot", "kv_cache_plot"]


def gqa_plot(
    kv_heads: Sequence[int],
    cache_mib: Sequence[float],
    tokens_per_second: Sequence[float],
    *,
    heads: int,
    title: str = "",
):
    """Two panels against the key/value heads ``hk`` (1 = multi-query, ``heads`` = multi-head): the KV
    cache in MiB (bars, with ``heads / hk`` over each) and tokens decoded per second in the cached
    one-token steps, the prefill not counted (line)."""
    fig, axes = plt.subplots(1, 2, figsize=(min(BOOK_WIDTH, 8.0), 3.4), layout="constrained")
    where = np.arange(len(kv_heads))
    bars = axes[0].bar(where, cache_mib, color=PALETTE[0])
    for bar, k in zip(bars, kv_heads, strict=True):
        top = (bar.get_x() + bar.get_width() / 2, bar.get_height())
        label = f"1/{heads // k}" if k < heads else "1"  # the fraction of multi-head attention's cache
        axes[0].annotate(label, top, ha="center", va="bottom", fontsize="small")
    axes[0].set(ylabel="MiB", title="KV cache")
    axes[1].plot(where, tokens_per_second, marker="o", color=PALETTE[1])
    axes[1].set(ylabel="tokens per second", title="decoding steps (prefill not counted)")
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xticks(where, [str(k) for k in kv_heads])
        ax.set_xlabel(f"key/value heads hk (of h = {heads} query heads)")
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
