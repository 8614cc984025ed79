"""The work of attention, counted (chapter 16): FLOPs and the bytes moved to and from main memory.

:func:`attention_cost` sums :func:`tile_cost` over the tiles that the loops of
:mod:`~fromscratch.attention.flash` visit, or counts naive attention, which writes and reads its
``(tq, tk)`` matrices in main memory. Counts only: nothing is run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Cost", "attention_cost", "tile_cost"]


@dataclass(frozen=True)
class Cost:
    """The work of an attention pass: FLOPs, and bytes moved between main memory and the compute units."""

    flops: int  # of the matrix products; a multiply-add counts 2
    bytes: int  # reads + writes of main memory
    tiles: int  # (query block, key block) tiles computed; naive attention is one tile


def tile_cost(rows: int, cols: int, d: int, *, backward: bool = False, element: int = 4) -> Cost:
    """One tile of ``rows`` queries and ``cols`` keys (chapter 16). Forward: ``s = q kᵀ`` and ``p v``
    (4·rows·cols·d FLOPs); it reads its key and value block (the query block stays in fast memory).
    Backward: ``s`` again, ``dv``, ``dp``, ``dq``, ``dk`` (10·rows·cols·d); it reads the query block,
    ``dout``, ``lse`` and ``delta``, and reads and writes ``dq`` (its key block's ``dk``, ``dv`` stay)."""
    if backward:
        return Cost(10 * rows * cols * d, (4 * d + 2) * rows * element, 1)
    return Cost(4 * rows * cols * d, 2 * cols * d * element, 1)


def attention_cost(
    tq: int,
    tk: int,
    d: int,
    *,
    causal: bool = False,
    block_q: int | None = 64,
    block_k: int = 64,
    backward: bool = False,
    element: int = 4,
) -> Cost:
    """The work of one head's attention pass (chapter 16): tiled, or naive with ``block_q=None``.

    Tiled: the sum of :func:`tile_cost` over the tiles computed (causal: those not above the diagonal),
    plus reading ``q`` and writing ``out`` and ``lse`` once (backward: reading ``out``, ``dout`` for
    ``delta``, and reading ``k``, ``v`` and writing ``dk``, ``dv`` once per key block). Naive computes
    every score, masked or not; its ``(tq, tk)`` tensors live in main memory: the forward writes ``s``,
    reads it, writes ``p`` and reads it (4 passes); the backward reads ``p`` twice, writes and reads
    ``dp``, writes ``ds`` and reads it twice (7 passes). ``element``: bytes per number.
    """
    if block_q is None:
        square = tq * tk
        if backward:
            return Cost(8 * square * d, (7 * square + 4 * tq * d + 4 * tk * d) * element, 1)
        return Cost(4 * square * d, (4 * square + 2 * tq * d + 2 * tk * d) * element, 1)
    total = Cost(0, (tq * (2 * d + 1) if not backward else 2 * tq * d + tq + 4 * tk * d) * element, 0)
    for i0 in range(0, tq, block_q):
        i1 = min(i0 + block_q, tq)
        last_key = min(tk, i1 + tk - tq) if causal else tk  # the tiles the loops visit
        for j0 in range(0, max(last_key, 0), block_k):
            one = tile_cost(i1 - i0, min(block_k, tk - j0), d, backward=backward, element=element)
            total = Cost(total.flops + one.flops, total.bytes + one.bytes, total.tiles + 1)
    return total
