"""Attention as a weighted average (chapters 02-03): ``basic_self_attention``, then queries, keys and
values with the scale ``1/sqrt(d)`` and masks: ``scaled_dot_product_attention`` (the teaching path,
returning the weights) and ``fused_attention`` (the fast path, PyTorch's fused kernel, the same output);
``attend``, the one choice between them that every attention layer of the course makes.

The mask convention, once for the whole course: a mask is a **boolean** tensor and **True means
"may attend"**. Blocked scores become ``-inf`` before the softmax; a query whose keys are *all*
blocked gets all-zero weights and a zero output, never NaN.

Shape legend: ``b`` batch, ``t`` length (``tq``/``tk`` when they differ), ``e`` embedding,
``d`` any head width.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from fromscratch.attention.masks import causal_mask, check_mask

__all__ = ["FUSED_GQA", "attend", "basic_self_attention", "fused_attention", "scaled_dot_product_attention"]

# F.scaled_dot_product_attention shares key/value heads itself (enable_gqa) from PyTorch 2.5 on
FUSED_GQA = torch.torch_version.TorchVersion(torch.__version__) >= (2, 5)


# --- chapter 02: attention without parameters ------------------------------------------------------
def basic_self_attention(x: Tensor) -> Tensor:
    """Basic self-attention (chapter 02): every output is a weighted average of all inputs.

    ``y_i = sum_j w_ij x_j`` with ``w_ij = softmax_j(x_i . x_j)``, i.e. ``softmax(x xᵀ) x``.
    No parameters. x: ``(b, t, e)``. Returns ``(b, t, e)``.
    """
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (b, t, e), got {tuple(x.shape)}; add a batch dimension with x[None]."
        )
    raw = x @ x.transpose(1, 2)  # (b, t, t): raw[b, i, j] = x_i . x_j
    weights = torch.softmax(raw, dim=2)  # (b, t, t), each row sums to 1
    return weights @ x  # (b, t, e)


# --- chapter 03: queries, keys, values, scaling and masks ------------------------------------------
def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None = None, *, bias: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention, written out (chapter 03): ``softmax(q kᵀ / sqrt(d)) v``.

    q: ``(..., tq, d)``; k: ``(..., tk, d)``; v: ``(..., tk, dv)``, with the same leading dims.
    attn_mask: bool, True = may attend, broadcastable to ``(..., tq, tk)``; None lets every query see
    every key. Returns ``out (..., tq, dv)`` and ``weights (..., tq, tk)`` (rows sum to 1, or are
    all zero where a query may attend to no key). bias: float, broadcastable to ``(..., tq, tk)``,
    added to the scaled scores before the mask (ALiBi, chapter 11).
    """
    if q.dim() < 2 or k.dim() != q.dim() or v.dim() != q.dim():
        raise ValueError(
            f"q, k, v must have the same number of dims (>= 2): (..., tq, d), (..., tk, d), "
            f"(..., tk, dv); got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}."
        )
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-1] != v.shape[:-1] or q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"expected q (..., tq, d), k (..., tk, d), v (..., tk, dv) with equal leading dims, "
            f"equal d and equal tk; got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}."
        )
    d = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (..., tq, tk)
    if bias is not None:
        scores = scores + bias  # (..., tq, tk)
    if attn_mask is not None:
        check_mask(attn_mask, tuple(scores.shape), "a bool attn_mask broadcastable to (..., tq, tk)")
        scores = scores.masked_fill(~attn_mask, float("-inf"))
        # A row with no allowed key would be softmax(-inf, ..., -inf) = NaN. Give it finite
        # placeholder scores, then zero its weights: no NaN anywhere, forward or backward.
        has_key = attn_mask.any(dim=-1, keepdim=True)  # (..., tq, 1)
        scores = scores.masked_fill(~has_key, 0.0)
    weights = torch.softmax(scores, dim=-1)  # (..., tq, tk)
    if attn_mask is not None:
        weights = weights.masked_fill(~has_key, 0.0)
    return weights @ v, weights  # (..., tq, dv), (..., tq, tk)


def fused_attention(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None = None, *, bias: Tensor | None = None, **kernel
) -> Tensor:
    """:func:`scaled_dot_product_attention`'s output on ``F.scaled_dot_product_attention`` (the fast path).

    Shapes, mask and ``bias`` as there; ``kernel``: more of its options (``enable_gqa=True``).
    Returns ``(..., tq, dv)``, zero where a query may attend to no key (the kernel may give NaN).
    """
    if attn_mask is None:
        scores = None if bias is None else bias.to(q.dtype)  # (..., tq, tk) or None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=scores, **kernel)  # (..., tq, dv)
    has_key = attn_mask.any(dim=-1, keepdim=True)  # (..., tq, 1)
    allowed = attn_mask | ~has_key  # a query without keys sees them all; its output is zeroed below
    if bias is not None:  # one float mask: the bias where allowed, -inf elsewhere
        allowed = torch.where(allowed, bias.to(q.dtype), float("-inf"))  # (..., tq, tk)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, **kernel)  # (..., tq, dv)
    return out.masked_fill(~has_key, 0.0)


# --- every attention layer's one dispatch ----------------------------------------------------------
def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    bias: Tensor | None = None,
    weights: list[Tensor] | None = None,
) -> Tensor:
    """Attention of ``h`` query heads over ``hk`` key/value heads: q ``(b, h, tq, d)``, k ``(b, hk, tk, d)``,
    v ``(b, hk, tk, dv)`` -> ``(b, h, tq, dv)``, with ``h`` a multiple of ``hk`` (grouped queries, ch. 14).

    ``mask``: bool, True = may attend, broadcastable to ``(b, h, tq, tk)``; ``causal=True`` adds the causal
    pattern, aligned at the end (the ``tq`` queries are the last ``tq`` of the ``tk`` positions, as after a
    KV cache); ``bias``: float, added to the scores (ALiBi). With a list ``weights``, the weights are written
    out (:func:`scaled_dot_product_attention`) and their ``(b, h, tq, tk)`` tensor is appended to it; else
    PyTorch's fused kernel gives the same output, building the causal pattern itself when that is all.
    """
    tq, tk, groups = q.size(-2), k.size(-2), q.size(-3) // k.size(-3)
    if causal and mask is None and bias is None and tq == tk and weights is None:
        shared = {"enable_gqa": True} if groups > 1 and FUSED_GQA else {}
        if groups > 1 and not FUSED_GQA:
            k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)  # (b, h, tk, .)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, **shared)  # (b, h, tq, dv)
    if causal:
        pattern = causal_mask(tk, q.device)[tk - tq :]  # (tq, tk): the queries are the last tq positions
        mask = pattern if mask is None else mask & pattern  # (b|1, h|1, tq, tk)
    if groups > 1 and (weights is not None or not FUSED_GQA):  # each key/value head, once per query head
        k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)  # (b, h, tk, .)
    if weights is not None:  # the teaching path: softmax(q kᵀ / √d) written out
        out, w = scaled_dot_product_attention(q, k, v, mask, bias=bias)  # (b, h, tq, dv), (b, h, tq, tk)
        weights.append(w)
        return out
    shared = {"enable_gqa": True} if groups > 1 else {}  # the kernel shares the hk heads, without copies
    return fused_attention(q, k, v, mask, bias=bias, **shared)  # (b, h, tq, dv)
