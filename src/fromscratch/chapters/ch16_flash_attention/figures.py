"""Figures of chapter 16 (FlashAttention): the tiles of one pass, step by step, and which tiles a causal pass
computes.

- ``tile_walk``: one step of the forward pass of one query block (its running max, sum and output after
  some key blocks), or of the backward pass of one key block (its ``dk`` and ``dv`` after some query
  blocks), beside the grid of tiles;
- ``tile_frames``: every step of ``tile_walk``, with and without the causal mask, as precomputed frames
  (``viz.frames``: sliders that work in the book, the decks and a notebook);
- ``tile_map``: the grid of tiles of a causal pass: computed whole, computed with a mask, skipped.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Rectangle
from torch import Tensor

from fromscratch.attention.flash import Partial, flash_backward, flash_forward, merge, tile_partial
from fromscratch.viz.precomputed import Frames, frames
from fromscratch.viz.style import BOOK_WIDTH, HEATMAP_CMAP, PALETTE

__all__ = ["tile_frames", "tile_map", "tile_walk"]

SKIPPED, MASKED, WHOLE = 0, 1, 2  # the three kinds of tile of a causal pass
EDGE = "#999999"  # the lines between tiles
MERGED = "#9ecae1"  # a tile already merged into the running result


def _kinds(tq: int, tk: int, block: int, causal: bool) -> Tensor:
    """``(n_q, n_k)``: each tile's kind (WHOLE where not causal); causal aligned to the end."""
    offset = tk - tq
    n_q, n_k = -(-tq // block), -(-tk // block)
    kinds = torch.full((n_q, n_k), WHOLE)
    if causal:
        for i in range(n_q):  # query r sees the keys <= r + offset
            first = i * block + offset  # the last key the block's first query sees
            last = min((i + 1) * block, tq) - 1 + offset  # ... and its last query
            for j in range(n_k):
                j0, j1 = j * block, min((j + 1) * block, tk) - 1
                kinds[i, j] = SKIPPED if j0 > last else (WHOLE if j1 <= first else MASKED)
    return kinds


def _grid(ax, kinds: Tensor, block: int, tq: int, tk: int, done, current, band, title: str) -> None:
    """The tiles: blue = merged so far, red frame = this step, hatched = masked inside, grey = still to
    come, white with a cross = skipped; ``band = ("row" | "col", index)``: the block the pass walks along."""
    ax.set(xlim=(0, tk), ylim=(tq, 0), xlabel="keys", ylabel="queries")
    ax.set_title(title, fontsize="small")
    ax.set_aspect("equal")
    ax.set_xticks(range(0, tk + 1, block))
    ax.set_yticks(range(0, tq + 1, block))
    ax.tick_params(labelsize="small")
    axis, index = band
    for i in range(kinds.shape[0]):
        for j in range(kinds.shape[1]):
            x, y = j * block, i * block
            w, h = min(block, tk - x), min(block, tq - y)
            kind = int(kinds[i, j])
            if kind == SKIPPED:  # never computed: a cross
                ax.add_patch(Rectangle((x, y), w, h, facecolor="white", edgecolor=EDGE))
                ax.plot([x + w * 0.3, x + w * 0.7], [y + h * 0.3, y + h * 0.7], color=EDGE, lw=1)
                ax.plot([x + w * 0.3, x + w * 0.7], [y + h * 0.7, y + h * 0.3], color=EDGE, lw=1)
                continue
            on_band = (i if axis == "row" else j) == index
            colour = MERGED if (i, j) in done else ("#d9d9d9" if on_band else "#f0f0f0")
            hatch = "//" if kind == MASKED else None
            ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor=EDGE, hatch=hatch))
    if current is not None:
        i, j = current
        x, y = j * block, i * block
        w, h = min(block, tk - x), min(block, tq - y)
        ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor=PALETTE[3], lw=2.5))


def _heat(ax, values: Tensor, title: str, limit: float) -> None:
    ax.imshow(values.numpy(), cmap=HEATMAP_CMAP, vmin=-limit, vmax=limit, aspect="auto")
    ax.set_title(title, fontsize="small")
    ax.set_xticks([])
    ax.set_yticks([])


def tile_walk(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    block: int,
    index: int,
    step: int,
    causal: bool = False,
    backward: bool = False,
):
    """One step of one pass over the tiles (chapter 16). q ``(tq, d)``, k ``(tk, d)``, v ``(tk, dv)``.

    Forward (``backward=False``): query block ``index`` after merging ``step`` key blocks: the running max
    ``m`` and sum of each of its queries (dashed: their final values), and its output ``acc / sum`` above
    the exact output. Backward: key block ``index`` after ``step`` query blocks: its ``dk`` and ``dv`` so
    far above their final values (for a fixed random upstream gradient). Returns the ``Figure``.
    """
    tq, tk = q.shape[0], k.shape[0]
    kinds = _kinds(tq, tk, block, causal)
    scores = _scores(q, k, causal)  # (tq, tk): the picture's tensors are tiny
    fig = plt.figure(figsize=(BOOK_WIDTH, 3.4), layout="constrained")
    if not backward:
        layout = fig.add_gridspec(2, 3, width_ratios=[1.1, 1.2, 0.9])
        rows = slice(index * block, min((index + 1) * block, tq))
        visited = [j for j in range(kinds.shape[1]) if kinds[index, j] != SKIPPED]
        running = Partial.empty(torch.zeros(rows.stop - rows.start, dtype=q.dtype), v.shape[1])
        for j in visited[:step]:  # the forward loop of flash.flash_forward, for this query block
            keys = slice(j * block, min((j + 1) * block, tk))
            running = merge(running, tile_partial(scores[rows, keys], v[keys]))
        final = tile_partial(scores[rows], v)  # every key at once: where the running values end
        exact, _ = final.finish()
        current = (index, visited[step - 1]) if 0 < step <= len(visited) else None
        title = f"query block {index}: {min(step, len(visited))} of {len(visited)} key blocks"
        done = {(index, j) for j in visited[:step]}
        _grid(fig.add_subplot(layout[:, 0]), kinds, block, tq, tk, done, current, ("row", index), title)
        stats = fig.add_subplot(layout[:, 1])
        queries = range(rows.start, rows.stop)
        for name, now, end, colour in (
            ("max m", running.m, final.m, PALETTE[0]),
            ("sum", running.denom, final.denom, PALETTE[1]),
        ):
            stats.plot(queries, now.numpy(), "o-", color=colour, label=name)
            stats.plot(queries, end.numpy(), "--", color=colour, alpha=0.6)
        stats.set(xlabel="query")
        stats.set_title("running max and sum (dashed: final)", fontsize="small")
        stats.legend(fontsize="small")
        out, _ = running.finish()
        limit = float(exact.abs().max())
        error = float((out - exact).abs().max())
        _heat(fig.add_subplot(layout[0, 2]), out, "output so far", limit)
        _heat(fig.add_subplot(layout[1, 2]), exact, f"exact output (off by {error:.2g})", limit)
        return fig
    layout = fig.add_gridspec(2, 3, width_ratios=[1.1, 1.0, 1.0])
    keys = slice(index * block, min((index + 1) * block, tk))
    visited = [i for i in range(kinds.shape[0]) if kinds[i, index] != SKIPPED]
    g = torch.Generator().manual_seed(16)
    dout = torch.randn(tq, v.shape[1], generator=g, dtype=q.dtype)  # an upstream gradient, fixed
    out, lse = flash_forward(q, k, v, causal=causal, block_q=block, block_k=block)
    _, dk_end, dv_end = flash_backward(q, k, v, out, lse, dout, causal=causal, block_q=block, block_k=block)
    dk, dv = torch.zeros_like(dk_end[keys]), torch.zeros_like(dv_end[keys])
    delta = (dout * out).sum(-1)  # (tq,)
    for i in visited[:step]:  # the inner loop of flash.flash_backward, for this key block
        rows = slice(i * block, min((i + 1) * block, tq))
        p = torch.exp(scores[rows, keys] - lse[rows, None])  # the weights, recomputed from lse
        ds = p * (dout[rows] @ v[keys].T - delta[rows, None])
        dv += p.T @ dout[rows]
        dk += ds.T @ q[rows] * q.shape[1] ** -0.5
    current = (visited[step - 1], index) if 0 < step <= len(visited) else None
    title = f"key block {index}: {min(step, len(visited))} of {len(visited)} query blocks"
    done = {(i, index) for i in visited[:step]}
    _grid(fig.add_subplot(layout[:, 0]), kinds, block, tq, tk, done, current, ("col", index), title)
    for n, (name, now, end) in enumerate((("dk", dk, dk_end[keys]), ("dv", dv, dv_end[keys]))):
        limit = float(end.abs().max()) or 1.0
        _heat(fig.add_subplot(layout[0, 1 + n]), now, f"{name} so far", limit)
        _heat(fig.add_subplot(layout[1, 1 + n]), end, f"{name}, final", limit)
    return fig


def _scores(q: Tensor, k: Tensor, causal: bool) -> Tensor:
    """The whole ``(tq, tk)`` score matrix (the pictures are tiny), ``-inf`` where masked."""
    tq, tk = q.shape[0], k.shape[0]
    scores = q @ k.T * q.shape[1] ** -0.5
    if causal:
        visible = torch.ones(tq, tk, dtype=torch.bool).tril(tk - tq)
        scores = scores.masked_fill(~visible, float("-inf"))
    return scores


def tile_frames(q: Tensor, k: Tensor, v: Tensor, *, block: int, index: int, backward: bool = False) -> Frames:
    """:func:`tile_walk` at every step, with and without the causal mask: a slider for each (chapter 16)."""
    n = -(-(k.shape[0] if not backward else q.shape[0]) // block)

    def render(causal: bool, step: int):
        return tile_walk(q, k, v, block=block, index=index, step=step, causal=causal, backward=backward)

    what = "key" if backward else "query"
    return frames(
        render,
        causal={"no": False, "yes": True},
        step=range(n + 1),
        start={"step": n},
        caption=f"the {'backward' if backward else 'forward'} pass of {what} block {index}, tile by tile",
    )


def tile_map(tq: int, tk: int, block: int):
    """The tiles of a causal pass over ``tq`` queries and ``tk`` keys (aligned to the end): computed whole,
    computed with a mask (hatched), or skipped (white). Returns the ``Figure``."""
    kinds = _kinds(tq, tk, block, causal=True)
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 3.6), 3.6), layout="constrained")
    whole, masked = int((kinds == WHOLE).sum()), int((kinds == MASKED).sum())
    title = f"{whole} whole + {masked} masked of {kinds.numel()} tiles"
    computed = {(i, j) for i, j in torch.nonzero(kinds != SKIPPED).tolist()}
    _grid(ax, kinds, block, tq, tk, computed, None, ("row", -1), title)
    return fig
