"""Checkers for chapter 16's exercises (FlashAttention: merging partials, a tile's backward, causal tiles).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers.

>>> def my_causal_tiles(t, block):
...     n = -(-t // block)  # blocks along each side
...     return n * (n + 1) // 2
>>> check_causal_tiles(my_causal_tiles)
✓ my_causal_tiles matches the reference on 5 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.attention.flash import Partial, merge, tile_partial
from fromscratch.attention.flash_cost import attention_cost
from fromscratch.chapters import checking

__all__ = ["check_causal_tiles", "check_merge", "check_tile_backward", "tile_backward"]


def _partials(seed: int, tq: int, tk: int, dv: int) -> Partial:
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(tq, tk, generator=g, dtype=torch.float64) * 3  # (tq, tk)
    return tile_partial(scores, torch.randn(tk, dv, generator=g, dtype=torch.float64))


def check_merge(candidate: Callable[[tuple, tuple], tuple]) -> bool | None:
    """Exercise 16.1. Expects ``(a, b) -> (m, denom, acc)`` where ``a`` and ``b`` are partial results
    ``(m (tq,), denom (tq,), acc (tq, dv))`` of the same queries over two disjoint sets of keys, and the
    answer is the partial result over both, as ``flash.merge``; checked on three pairs."""

    def reference(a: tuple, b: tuple) -> tuple:
        return tuple(merge(Partial(*a), Partial(*b)))

    inputs = [
        (tuple(_partials(160 + i, tq, tk, dv)), tuple(_partials(170 + i, tq, 2 * tk, dv)))
        for i, (tq, tk, dv) in enumerate([(1, 3, 2), (4, 5, 3), (6, 8, 4)])
    ]
    return checking.check_function(candidate, reference, inputs=inputs, atol=1e-10, rtol=1e-10)


def tile_backward(
    q: Tensor, k: Tensor, v: Tensor, dout: Tensor, lse: Tensor, delta: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """One tile's share of the gradients (chapter 16, exercise 16.2's reference): q ``(bq, d)``,
    k ``(bk, d)``, v ``(bk, dv)``, dout ``(bq, dv)``, lse and delta ``(bq,)`` of the whole rows.
    Returns what the tile adds to ``dq (bq, d)``, ``dk (bk, d)`` and ``dv (bk, dv)``."""
    scale = q.shape[-1] ** -0.5
    p = torch.exp(q @ k.T * scale - lse[:, None])  # (bq, bk): the weights, recomputed
    dp = dout @ v.T  # (bq, bk)
    ds = p * (dp - delta[:, None])  # (bq, bk)
    return ds @ k * scale, ds.T @ q * scale, p.T @ dout  # (bq, d), (bk, d), (bk, dv)


def _tile_inputs(seed: int, bq: int, bk: int, d: int, dv: int) -> tuple[Tensor, ...]:
    """A tile (the first ``bk`` of ``3 bk`` keys) with the ``lse`` and ``delta`` of the whole rows."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(bq, d, generator=g, dtype=torch.float64)
    k = torch.randn(3 * bk, d, generator=g, dtype=torch.float64)
    v = torch.randn(3 * bk, dv, generator=g, dtype=torch.float64)
    dout = torch.randn(bq, dv, generator=g, dtype=torch.float64)
    scores = q @ k.T * d**-0.5  # (bq, 3 bk)
    lse = torch.logsumexp(scores, dim=-1)  # (bq,)
    delta = (dout * (torch.softmax(scores, dim=-1) @ v)).sum(dim=-1)  # (bq,): rowsum(dout * out)
    return q, k[:bk], v[:bk], dout, lse, delta


def check_tile_backward(candidate: Callable[..., tuple[Tensor, Tensor, Tensor]]) -> bool | None:
    """Exercise 16.2. Expects ``(q, k, v, dout, lse, delta) -> (dq, dk, dv)``: one tile's share of the
    gradients, recomputing the tile's weights from ``lse`` (see :func:`tile_backward`); three tiles."""
    inputs = [
        _tile_inputs(161 + i, *sizes) for i, sizes in enumerate([(2, 3, 4, 2), (5, 4, 8, 3), (8, 8, 16, 16)])
    ]
    return checking.check_function(candidate, tile_backward, inputs=inputs, atol=1e-10, rtol=1e-8)


def _causal_tiles(t: int, block: int) -> int:
    return attention_cost(t, t, 1, causal=True, block_q=block, block_k=block).tiles


def check_causal_tiles(candidate: Callable[[int, int], int]) -> bool | None:
    """Exercise 16.3. Expects ``(t, block) -> int``: the tiles a causal pass over ``t`` queries and ``t`` keys
    computes with ``block_q = block_k = block`` (tiles above the diagonal skipped); five sizes."""
    inputs = [(256, 64), (100, 32), (64, 64), (1000, 128), (10, 1)]
    return checking.check_function(candidate, _causal_tiles, inputs=inputs, atol=0, rtol=0)
