"""FlashAttention from scratch (chapter 16): exact attention that never holds the ``t x t`` matrix.

Three ideas, smallest first:

1. **Online softmax** (Milakov & Gimelshein 2018): a running maximum ``m`` and a running sum
   ``denom = sum exp(x_j - m)`` can be updated one chunk at a time; when the maximum grows, the old sum
   is rescaled by ``exp(m_old - m_new)``. :func:`online_softmax`.
2. **Merging partial results**: a query that has seen two disjoint sets of keys holds, for each, a
   :class:`Partial` ``(m, denom, acc)`` with ``acc = sum exp(s_j - m) v_j``. :func:`merge` combines two
   of them exactly; attention over all keys is the merge of its tiles, and the output is
   ``acc / denom``. Every tile of FlashAttention (Dao et al. 2022; the loop order of FlashAttention-2,
   Dao 2023) is this one identity.
3. **Recomputation in the backward pass**: the forward keeps only the output and, per query, the
   log-sum-exp ``lse = m + log denom``; the backward recomputes each tile's weights as
   ``exp(s - lse)`` (Rabe & Staats 2021 make the same point in JAX).

:func:`flash_attention` puts them together as a ``torch.autograd.Function``; :func:`flash_forward`
and :func:`flash_backward` are its two loops over tiles, written plainly (Python loops: the lesson,
not the speed; the Triton kernel of the same loops is :mod:`~fromscratch.attention.flash_triton`).
:mod:`~fromscratch.attention.flash_cost` counts their FLOPs and bytes moved against naive attention.

Shapes: ``q (..., tq, d)``, ``k (..., tk, d)``, ``v (..., tk, dv)``; the leading dims broadcast (so
``(b, h, t, d)``, or grouped-query heads as ``(b, h_kv, g, t, d)`` against ``(b, h_kv, 1, t, d)``).
Causal attention is aligned to the end, as the course's causal mask and KV cache are: query ``i`` is
position ``i + tk - tq`` and sees keys ``j <= i + tk - tq``. A query that sees no key gets a zero
output and ``lse = -inf``, never NaN.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = [
    "Partial",
    "flash_attention",
    "flash_backward",
    "flash_forward",
    "merge",
    "online_softmax",
    "tile_partial",
]

NEG_INF = float("-inf")


def _safe(m: Tensor) -> Tensor:
    """``m`` with ``-inf`` replaced by 0, to subtract from scores: ``exp(-inf - 0) = 0``, never NaN."""
    return torch.where(m == NEG_INF, torch.zeros_like(m), m)


# --- 1. online softmax -------------------------------------------------------------------------------
def online_softmax(x: Tensor, *, block: int = 1) -> Tensor:
    """``torch.softmax(x, dim=-1)`` with its normaliser found in one pass over ``x``, ``block`` entries
    at a time (chapter 16): a running maximum ``m`` and sum ``denom``, rescaled whenever ``m`` grows.

    x: ``(..., n)``. Returns ``(..., n)``; rows of ``-inf`` give zeros.
    """
    m = torch.full(x.shape[:-1], NEG_INF, dtype=x.dtype, device=x.device)  # (...,): running max
    denom = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)  # (...,): running sum
    for start in range(0, x.shape[-1], block):
        chunk = x[..., start : start + block]  # (..., block)
        m_new = torch.maximum(m, chunk.amax(dim=-1))  # (...,)
        rescale = torch.exp(m - _safe(m_new))  # (...,): the old sum, brought to the new maximum
        denom = denom * rescale + torch.exp(chunk - _safe(m_new)[..., None]).sum(dim=-1)
        m = m_new
    weights = torch.exp(x - _safe(m)[..., None])  # (..., n): the second pass writes the weights
    return weights / torch.where(denom == 0, torch.ones_like(denom), denom)[..., None]  # (..., n)


# --- 2. partial results and their merge --------------------------------------------------------------
class Partial(NamedTuple):
    """What one query knows after some of the keys: running max, sum and unnormalised output."""

    m: Tensor  # (..., tq): the largest score seen so far (-inf: none)
    denom: Tensor  # (..., tq): sum of exp(s_j - m) over the keys seen
    acc: Tensor  # (..., tq, dv): sum of exp(s_j - m) v_j over the keys seen

    @classmethod
    def empty(cls, like: Tensor, dv: int) -> Partial:
        """The partial result of no keys at all, for queries shaped like ``like`` ``(..., tq)``."""
        zeros = torch.zeros_like(like)
        return cls(torch.full_like(like, NEG_INF), zeros, zeros[..., None].expand(*like.shape, dv))

    def finish(self) -> tuple[Tensor, Tensor]:
        """The attention output ``acc / denom`` ``(..., tq, dv)`` and the log-sum-exp ``m + log denom``
        ``(..., tq)``; a query that saw no key gives zeros and ``-inf``."""
        denom = torch.where(self.denom == 0, torch.ones_like(self.denom), self.denom)
        return self.acc / denom[..., None], self.m + torch.log(self.denom)


def tile_partial(scores: Tensor, v: Tensor) -> Partial:
    """The partial result of one tile: scores ``(..., tq, tk)`` (``-inf`` where masked) over values
    ``(..., tk, dv)``."""
    m = scores.amax(dim=-1)  # (..., tq)
    p = torch.exp(scores - _safe(m)[..., None])  # (..., tq, tk): in (0, 1], 1 at each row's max
    return Partial(m, p.sum(dim=-1), p @ v)  # (..., tq), (..., tq), (..., tq, dv)


def merge(a: Partial, b: Partial) -> Partial:
    """The partial result of the keys of ``a`` and of ``b`` together (disjoint sets of keys):

    ``m = max(m_a, m_b)``, ``denom = e^(m_a - m) denom_a + e^(m_b - m) denom_b``, and the same two
    weights for ``acc``. Exact: each side is brought to the common maximum, then added.
    """
    m = torch.maximum(a.m, b.m)  # (..., tq)
    scale_a, scale_b = torch.exp(a.m - _safe(m)), torch.exp(b.m - _safe(m))  # (..., tq): each <= 1
    denom = scale_a * a.denom + scale_b * b.denom  # (..., tq)
    acc = scale_a[..., None] * a.acc + scale_b[..., None] * b.acc  # (..., tq, dv)
    return Partial(m, denom, acc)


# --- 3. the tiles of the forward and backward passes --------------------------------------------------
def _visible(i0: int, i1: int, j0: int, j1: int, offset: int, device: torch.device) -> Tensor | None:
    """The causal pattern of the tile (queries i0:i1, keys j0:j1): query i sees key j when
    ``j <= i + offset``; None when it sees every key of the tile (no mask needed)."""
    if j1 - 1 <= i0 + offset:
        return None
    rows = torch.arange(i0, i1, device=device)[:, None]  # (bq, 1)
    cols = torch.arange(j0, j1, device=device)[None, :]  # (1, bk)
    return cols <= rows + offset  # (bq, bk)


def flash_forward(
    q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False, block_q: int = 64, block_k: int = 64
) -> tuple[Tensor, Tensor]:
    """The forward pass, tile by tile: returns ``out (..., tq, dv)`` and ``lse (..., tq)`` (chapter 16).

    For each block of ``block_q`` queries, the blocks of ``block_k`` keys are visited in order and
    merged into one running :class:`Partial`; only ``(block_q, block_k)`` scores exist at a time.
    With ``causal``, a query block stops at the last key its last query may see.
    """
    tq, tk, scale = q.shape[-2], k.shape[-2], q.shape[-1] ** -0.5
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])  # (b, h) or (b, h_kv, g)
    out = q.new_empty(*lead, tq, v.shape[-1])  # (..., tq, dv)
    lse = q.new_empty(*lead, tq)  # (..., tq)
    offset = tk - tq  # query i is position i + offset
    for i0 in range(0, tq, block_q):
        i1 = min(i0 + block_q, tq)
        qi = q[..., i0:i1, :]  # (..., bq, d)
        running = Partial.empty(lse[..., i0:i1], v.shape[-1])
        last_key = min(tk, i1 + offset) if causal else tk  # keys >= last_key: tiles above the diagonal
        for j0 in range(0, last_key, block_k):
            j1 = min(j0 + block_k, tk)
            scores = (qi @ k[..., j0:j1, :].transpose(-2, -1)) * scale  # (..., bq, bk)
            visible = _visible(i0, i1, j0, j1, offset, q.device) if causal else None
            if visible is not None:
                scores = scores.masked_fill(~visible, NEG_INF)
            running = merge(running, tile_partial(scores, v[..., j0:j1, :]))
        out[..., i0:i1, :], lse[..., i0:i1] = running.finish()
    return out, lse


def flash_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    dout: Tensor,
    *,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[Tensor, Tensor, Tensor]:
    """The backward pass, tile by tile, from the forward's ``out`` and ``lse`` (chapter 16).

    Each tile's weights are recomputed, ``p = exp(q kᵀ·scale - lse)``; then with
    ``delta = rowsum(dout * out)``: ``dv += pᵀ dout``, ``ds = p * (dout vᵀ - delta)``,
    ``dq += ds k·scale``, ``dk += dsᵀ q·scale``. Key blocks outside, as in both FlashAttention papers'
    backward passes (each key block's ``dk``, ``dv`` stay in fast memory; FlashAttention-2 changed the
    forward's outer loop to the query blocks, as :func:`flash_forward` does). Returns ``dq, dk, dv``
    shaped like ``q, k, v``.
    """
    tq, tk, scale = q.shape[-2], k.shape[-2], q.shape[-1] ** -0.5
    offset = tk - tq
    delta = (dout * out).sum(dim=-1)  # (..., tq): sum_j p_ij dp_ij, one number per query
    lse = torch.where(lse == NEG_INF, torch.full_like(lse, math.inf), lse)  # no key seen: p = 0
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for j0 in range(0, tk, block_k):
        j1 = min(j0 + block_k, tk)
        kj, vj = k[..., j0:j1, :], v[..., j0:j1, :]  # (..., bk, d), (..., bk, dv)
        first_query = max(0, j0 - offset) // block_q * block_q if causal else 0  # skip tiles above
        for i0 in range(first_query, tq, block_q):
            i1 = min(i0 + block_q, tq)
            qi, doi = q[..., i0:i1, :], dout[..., i0:i1, :]  # (..., bq, d), (..., bq, dv)
            scores = (qi @ kj.transpose(-2, -1)) * scale  # (..., bq, bk)
            p = torch.exp(scores - lse[..., i0:i1, None])  # (..., bq, bk): the weights, recomputed
            visible = _visible(i0, i1, j0, j1, offset, q.device) if causal else None
            if visible is not None:
                p = p.masked_fill(~visible, 0.0)
            dv[..., j0:j1, :] += (p.transpose(-2, -1) @ doi).sum_to_size(vj.shape)  # (..., bk, dv)
            dp = doi @ vj.transpose(-2, -1)  # (..., bq, bk)
            ds = p * (dp - delta[..., i0:i1, None])  # (..., bq, bk): the softmax's backward
            dq[..., i0:i1, :] += (ds @ kj * scale).sum_to_size(qi.shape)  # (..., bq, d)
            dk[..., j0:j1, :] += (ds.transpose(-2, -1) @ qi * scale).sum_to_size(kj.shape)  # (..., bk, d)
    return dq, dk, dv


class FlashAttention(torch.autograd.Function):
    """Autograd's view of :func:`flash_forward` and :func:`flash_backward`: saves q, k, v, out, lse."""

    @staticmethod
    def forward(ctx, q: Tensor, k: Tensor, v: Tensor, causal: bool, block_q: int, block_k: int) -> Tensor:
        out, lse = flash_forward(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
        ctx.save_for_backward(q, k, v, out, lse)  # O(t) numbers: no t x t tensor is kept
        ctx.options = {"causal": causal, "block_q": block_q, "block_k": block_k}
        return out

    @staticmethod
    def backward(ctx, dout: Tensor):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = flash_backward(q, k, v, out, lse, dout, **ctx.options)
        return dq, dk, dv, None, None, None


def flash_attention(
    q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False, block_q: int = 64, block_k: int = 64
) -> Tensor:
    """Exact attention ``softmax(q kᵀ / sqrt(d)) v`` in tiles, forward and backward (chapter 16).

    q: ``(b, h, tq, d)``; k: ``(b, h_kv, tk, d)``; v: ``(b, h_kv, tk, dv)``, with ``h`` a multiple of
    ``h_kv`` (grouped-query heads, chapter 14: each key/value head serves ``h // h_kv`` query heads).
    ``causal``: query ``i`` sees keys ``j <= i + tk - tq`` (aligned to the end). Returns
    ``(b, h, tq, dv)``. Equal to naive attention up to rounding (float64: about 1e-15); keeps only
    ``out`` and the per-query log-sum-exp for the backward pass, which recomputes every tile.
    """
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(
            f"q, k, v must be 4-D (b, h, t, d); got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}: "
            "add missing dims with x[None]."
        )
    b, h, tq, d = q.shape
    h_kv = k.shape[1]
    if k.shape[0] != b or k.shape[-1] != d or v.shape[:3] != k.shape[:3] or h % h_kv:
        raise ValueError(
            f"expected q (b, h, tq, d), k (b, h_kv, tk, d), v (b, h_kv, tk, dv) with h a multiple of h_kv; "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}."
        )
    if block_q < 1 or block_k < 1:
        raise ValueError(f"block sizes must be at least 1, got block_q={block_q}, block_k={block_k}.")
    g = h // h_kv  # query heads per key/value head
    q5 = q.view(b, h_kv, g, tq, d)  # (b, h_kv, g, tq, d): the group is a leading dim
    k5, v5 = k[:, :, None], v[:, :, None]  # (b, h_kv, 1, tk, d): broadcast, not copied
    out = FlashAttention.apply(q5, k5, v5, causal, block_q, block_k)  # (b, h_kv, g, tq, dv)
    return out.reshape(b, h, tq, v.shape[-1])  # (b, h, tq, dv)
