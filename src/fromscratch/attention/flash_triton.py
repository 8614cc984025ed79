"""FlashAttention as a Triton kernel (chapter 16): the loops of :mod:`~fromscratch.attention.flash`,
one program per tile row.

Triton (Tillet et al. 2019) writes a GPU kernel in Python: each *program* works on blocks of numbers
(``tl.arange``, ``tl.load``, ``tl.dot``) held in the chip's fast on-chip memory, and a grid of programs
covers the whole tensor. The three kernels below are the loops of ``flash.py``:

- ``_forward_kernel``: one program per (query block, batch x head); it walks the key blocks with a
  running max ``m``, sum ``denom`` and unnormalised output ``acc`` (``flash.merge``, inlined), then writes
  ``out`` and ``lse``;
- ``_backward_dkdv_kernel``: one program per (key block, batch x key/value head); it walks the query
  blocks (of every query head of its group), recomputes ``p = exp(s - lse)`` and adds up ``dk`` and
  ``dv``;
- ``_backward_dq_kernel``: one program per (query block, batch x head); it walks the key blocks again
  for ``dq``. FlashAttention-2 adds ``dq`` with atomic additions instead; a kernel of its own keeps
  each free of races (as labml's annotated kernels do; Triton's tutorial does both in one kernel,
  ``dk`` and ``dv`` first, then ``dq``, after the same ``delta`` pre-pass).

``TRITON_INTERPRET=1`` runs the kernels with NumPy on the CPU (the tests do). Set it before triton is
first imported in the process (the PyTorch profiler imports triton when it is installed). Triton is an
optional extra (``pip install fromscratch[triton]``): importing this module without it raises
``ImportError``. On a GPU, ``tl.dot`` needs blocks of at least 16, and by default it multiplies fp32
inputs in TF32 (10 bits of mantissa: errors near 1e-3). For fp32 inputs the kernels pass
``input_precision="ieee"``, so fp32 results are fp32-exact on a GPU as in the interpreter, and slower:
time the kernel in bf16 or fp16, whose products run on the tensor cores. Offsets are int64 (cast before
multiplying, as Triton's tutorial does), so tensors of 2³¹ numbers or more are addressed correctly.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import Tensor

__all__ = ["triton_flash_attention", "triton_flash_forward"]


@triton.jit
def _forward_kernel(
    Q,
    K,
    V,
    Out,
    LSE,  # pointers: q (b, h, tq, d), k (b, h_kv, tk, d), v (b, h_kv, tk, dv), o, lse (b, h, tq)
    H,
    G,
    TQ,
    TK,
    D,
    DV,
    scale,  # heads, query heads per key/value head, lengths, widths, 1/sqrt(d)
    CAUSAL: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    PRECISION: tl.constexpr,  # tl.dot's input_precision: "ieee" for fp32 inputs, else None (the default)
):
    block, bh = tl.program_id(0), tl.program_id(1)  # this program's query block and (batch, head)
    b, h = bh // H, bh % H
    kv = b * (H // G) + h // G  # the key/value head this query head reads (grouped-query heads)
    q0, kv0 = bh.to(tl.int64) * TQ, kv.to(tl.int64) * TK  # this head's first rows, int64: no overflow
    rows = block * BLOCK_Q + tl.arange(0, BLOCK_Q)  # (bq,): query positions
    dims, dims_v = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    q_at = Q + (q0 + rows[:, None]) * D + dims[None, :]  # (bq, d) addresses
    q = tl.load(q_at, mask=(rows[:, None] < TQ) & (dims[None, :] < D), other=0.0)
    m = tl.full([BLOCK_Q], float("-inf"), tl.float32)  # running max, sum, output: on-chip, fp32
    denom = tl.zeros([BLOCK_Q], tl.float32)
    acc = tl.zeros([BLOCK_Q, BLOCK_DV], tl.float32)
    offset = TK - TQ  # query i is position i + offset
    last_key = TK
    if CAUSAL:  # tiles above the diagonal are never visited
        last_key = tl.minimum(TK, (block + 1) * BLOCK_Q + offset)
    for j0 in range(0, last_key, BLOCK_K):
        cols = j0 + tl.arange(0, BLOCK_K)  # (bk,): key positions
        k = tl.load(
            K + (kv0 + cols[:, None]) * D + dims[None, :],
            mask=(cols[:, None] < TK) & (dims[None, :] < D),
            other=0.0,
        )  # (bk, d)
        v = tl.load(
            V + (kv0 + cols[:, None]) * DV + dims_v[None, :],
            mask=(cols[:, None] < TK) & (dims_v[None, :] < DV),
            other=0.0,
        )  # (bk, dv)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale  # (bq, bk), fp32
        keep = (rows[:, None] < TQ) & (cols[None, :] < TK)  # (bq, bk)
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None] + offset)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))  # flash.merge, inlined:
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # no key seen yet: exp(-inf) = 0
        p = tl.exp(s - m_safe[:, None])  # (bq, bk)
        rescale = tl.exp(m - m_safe)  # (bq,): the old sum and output, brought to the new max
        denom = denom * rescale + tl.sum(p, 1)
        pv = tl.dot(p.to(v.dtype), v, input_precision=PRECISION)  # (bq, dv)
        acc = acc * rescale[:, None] + pv
        m = m_new
    out = acc / tl.where(denom == 0.0, 1.0, denom)[:, None]  # a query that saw no key: zeros
    o_at = Out + (q0 + rows[:, None]) * DV + dims_v[None, :]
    tl.store(o_at, out.to(Out.dtype.element_ty), mask=(rows[:, None] < TQ) & (dims_v[None, :] < DV))
    seen = denom > 0.0  # False for a query that saw no key (and for rows past the end)
    lse = tl.where(seen, m + tl.log(tl.where(seen, denom, 1.0)), float("-inf"))
    tl.store(LSE + q0 + rows, lse, mask=rows < TQ)


@triton.jit
def _backward_dkdv_kernel(
    Q,
    K,
    V,
    DO,
    LSE,
    DELTA,
    DK,
    DV_,  # pointers; lse and delta (b, h, tq) in fp32
    H,
    G,
    TQ,
    TK,
    D,
    DV,
    scale,
    CAUSAL: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    PRECISION: tl.constexpr,
):
    block, bkv = tl.program_id(0), tl.program_id(1)  # this program's key block and (batch, kv head)
    b, hk = bkv // (H // G), bkv % (H // G)
    kv0 = bkv.to(tl.int64) * TK  # this head's first key row, int64: no overflow
    cols = block * BLOCK_K + tl.arange(0, BLOCK_K)  # (bk,)
    dims, dims_v = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    key_mask = (cols[:, None] < TK) & (dims[None, :] < D)
    value_mask = (cols[:, None] < TK) & (dims_v[None, :] < DV)
    k = tl.load(K + (kv0 + cols[:, None]) * D + dims[None, :], mask=key_mask, other=0.0)
    v = tl.load(V + (kv0 + cols[:, None]) * DV + dims_v[None, :], mask=value_mask, other=0.0)
    dk = tl.zeros([BLOCK_K, BLOCK_D], tl.float32)  # this key block's gradients stay on-chip
    dv = tl.zeros([BLOCK_K, BLOCK_DV], tl.float32)
    offset = TK - TQ
    first = 0
    if CAUSAL:  # query blocks entirely before this key block see none of it
        first = tl.maximum(block * BLOCK_K - offset, 0) // BLOCK_Q * BLOCK_Q
    for g in range(0, G):  # every query head that reads this key/value head
        q0 = (b * H + hk * G + g).to(tl.int64) * TQ  # the query head's first row
        for i0 in range(first, TQ, BLOCK_Q):
            rows = i0 + tl.arange(0, BLOCK_Q)  # (bq,)
            q_mask = (rows[:, None] < TQ) & (dims[None, :] < D)
            do_mask = (rows[:, None] < TQ) & (dims_v[None, :] < DV)
            q = tl.load(Q + (q0 + rows[:, None]) * D + dims[None, :], mask=q_mask, other=0.0)
            do = tl.load(DO + (q0 + rows[:, None]) * DV + dims_v[None, :], mask=do_mask, other=0.0)
            lse = tl.load(LSE + q0 + rows, mask=rows < TQ, other=float("inf"))  # (bq,)
            lse = tl.where(lse == float("-inf"), float("inf"), lse)  # no key seen: p = 0
            delta = tl.load(DELTA + q0 + rows, mask=rows < TQ, other=0.0)  # (bq,)
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale  # (bq, bk)
            keep = (rows[:, None] < TQ) & (cols[None, :] < TK)
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None] + offset)
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # the weights, recomputed
            dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)  # (bk, dv)
            dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)  # (bq, bk)
            ds = p * (dp - delta[:, None])  # (bq, bk)
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)  # (bk, d)
    dk_at = DK + (kv0 + cols[:, None]) * D + dims[None, :]
    tl.store(dk_at, (dk * scale).to(DK.dtype.element_ty), mask=key_mask)
    dv_at = DV_ + (kv0 + cols[:, None]) * DV + dims_v[None, :]
    tl.store(dv_at, dv.to(DV_.dtype.element_ty), mask=value_mask)


@triton.jit
def _backward_dq_kernel(
    Q,
    K,
    V,
    DO,
    LSE,
    DELTA,
    DQ,
    H,
    G,
    TQ,
    TK,
    D,
    DV,
    scale,
    CAUSAL: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    PRECISION: tl.constexpr,
):
    block, bh = tl.program_id(0), tl.program_id(1)
    b, h = bh // H, bh % H
    kv = b * (H // G) + h // G
    q0, kv0 = bh.to(tl.int64) * TQ, kv.to(tl.int64) * TK  # this head's first rows, int64: no overflow
    rows = block * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims, dims_v = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    q_mask = (rows[:, None] < TQ) & (dims[None, :] < D)
    q = tl.load(Q + (q0 + rows[:, None]) * D + dims[None, :], mask=q_mask, other=0.0)
    do_mask = (rows[:, None] < TQ) & (dims_v[None, :] < DV)
    do = tl.load(DO + (q0 + rows[:, None]) * DV + dims_v[None, :], mask=do_mask, other=0.0)
    lse = tl.load(LSE + q0 + rows, mask=rows < TQ, other=float("inf"))
    lse = tl.where(lse == float("-inf"), float("inf"), lse)
    delta = tl.load(DELTA + q0 + rows, mask=rows < TQ, other=0.0)
    dq = tl.zeros([BLOCK_Q, BLOCK_D], tl.float32)
    offset = TK - TQ
    last_key = TK
    if CAUSAL:
        last_key = tl.minimum(TK, (block + 1) * BLOCK_Q + offset)
    for j0 in range(0, last_key, BLOCK_K):
        cols = j0 + tl.arange(0, BLOCK_K)
        k_mask = (cols[:, None] < TK) & (dims[None, :] < D)
        k = tl.load(K + (kv0 + cols[:, None]) * D + dims[None, :], mask=k_mask, other=0.0)
        v_mask = (cols[:, None] < TK) & (dims_v[None, :] < DV)
        v = tl.load(V + (kv0 + cols[:, None]) * DV + dims_v[None, :], mask=v_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        keep = (rows[:, None] < TQ) & (cols[None, :] < TK)
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None] + offset)
        p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)  # (bq, d)
    dq_at = DQ + (q0 + rows[:, None]) * D + dims[None, :]
    tl.store(dq_at, (dq * scale).to(DQ.dtype.element_ty), mask=q_mask)


def _launch_sizes(q: Tensor, k: Tensor, v: Tensor, block_q: int, block_k: int) -> dict:
    """The kernels' shared arguments: sizes, the scale, the compile-time block sizes and dot precision."""
    (_, h, tq, d), (tk, dv) = q.shape, (k.shape[2], v.shape[-1])
    sizes = dict(H=h, G=h // k.shape[1], TQ=tq, TK=tk, D=d, DV=dv, scale=d**-0.5)
    blocks = dict(BLOCK_Q=block_q, BLOCK_K=block_k, BLOCK_D=max(16, triton.next_power_of_2(d)))
    precision = "ieee" if q.dtype == torch.float32 else None  # fp32: IEEE products, not the GPU's TF32
    return sizes | blocks | dict(BLOCK_DV=max(16, triton.next_power_of_2(dv)), PRECISION=precision)


def triton_flash_forward(
    q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False, block_q: int = 64, block_k: int = 64
) -> tuple[Tensor, Tensor]:
    """The forward kernel: ``out (b, h, tq, dv)`` and ``lse (b, h, tq)`` (fp32), as ``flash.flash_forward``.

    q: ``(b, h, tq, d)``; k: ``(b, h_kv, tk, d)``; v: ``(b, h_kv, tk, dv)``; ``h`` a multiple of ``h_kv``.
    """
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    b, h, tq, _ = q.shape
    out = q.new_empty(b, h, tq, v.shape[-1])  # (b, h, tq, dv)
    lse = torch.empty(b, h, tq, dtype=torch.float32, device=q.device)  # (b, h, tq)
    grid = (triton.cdiv(tq, block_q), b * h)  # one program per (query block, batch x head)
    _forward_kernel[grid](q, k, v, out, lse, CAUSAL=causal, **_launch_sizes(q, k, v, block_q, block_k))
    return out, lse


class TritonFlashAttention(torch.autograd.Function):
    """The three kernels as one autograd function: saves q, k, v, out and lse."""

    @staticmethod
    def forward(ctx, q: Tensor, k: Tensor, v: Tensor, causal: bool, block_q: int, block_k: int) -> Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out, lse = triton_flash_forward(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.block_q, ctx.block_k = causal, block_q, block_k
        return out

    @staticmethod
    def backward(ctx, dout: Tensor):
        q, k, v, out, lse = ctx.saved_tensors
        dout = dout.contiguous()
        delta = (dout.float() * out.float()).sum(dim=-1)  # (b, h, tq): rowsum(dout * out), fp32
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        sizes = _launch_sizes(q, k, v, ctx.block_q, ctx.block_k)
        b, h_kv, tk = k.shape[:3]
        grid = (triton.cdiv(tk, ctx.block_k), b * h_kv)  # one program per (key block, batch x kv head)
        _backward_dkdv_kernel[grid](q, k, v, dout, lse, delta, dk, dv, CAUSAL=ctx.causal, **sizes)
        grid = (triton.cdiv(q.shape[2], ctx.block_q), b * q.shape[1])
        _backward_dq_kernel[grid](q, k, v, dout, lse, delta, dq, CAUSAL=ctx.causal, **sizes)
        return dq, dk, dv, None, None, None


def triton_flash_attention(
    q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False, block_q: int = 64, block_k: int = 64
) -> Tensor:
    """``flash.flash_attention`` as Triton kernels, forward and backward (chapter 16).

    q: ``(b, h, tq, d)``; k: ``(b, h_kv, tk, d)``; v: ``(b, h_kv, tk, dv)``, ``h`` a multiple of ``h_kv``.
    ``causal``: aligned to the end (query ``i`` sees keys ``j <= i + tk - tq``). Returns
    ``(b, h, tq, dv)``. Block sizes are powers of two (at least 16 on a GPU).
    """
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4 or q.shape[1] % k.shape[1]:
        raise ValueError(
            f"expected q (b, h, tq, d), k (b, h_kv, tk, d), v (b, h_kv, tk, dv) with h a multiple of h_kv; "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}."
        )
    for name, size in (("block_q", block_q), ("block_k", block_k)):
        if size < 1 or size & (size - 1):
            raise ValueError(f"{name} must be a power of two (16 or more on a GPU), got {size}.")
    return TritonFlashAttention.apply(q, k, v, causal, block_q, block_k)
