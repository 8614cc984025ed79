"""Multi-head self-attention (chapter 04): ``SelfAttention`` in the three forms the blog went through
("standard", "wide", "narrow"), for self and cross attention, with grouped-query heads (chapter 14)
and a caller-owned KV cache (chapter 11). It is built on chapter 03's
:func:`~fromscratch.attention.dot_product.scaled_dot_product_attention`.

Shape legend (the blog's letters): ``b`` batch, ``t`` length (``tq``/``tk`` when they differ),
``e`` embedding, ``h`` heads, ``s = e // h`` the width of one head, ``d`` any head width.

The mask convention, once for the whole course: a mask is a **boolean** tensor and **True means
"may attend"** (PyTorch's meaning for a boolean ``attn_mask``; ``nn.MultiheadAttention``'s boolean
masks mean the opposite). ``SelfAttention`` and everything built on it take two separate keyword
arguments, never one mask whose meaning depends on its shape: ``padding_mask`` ``(b, tk)`` (True
at real tokens) and ``attn_mask`` broadcastable to ``(b, h, tq, tk)``. Blocked scores become ``-inf``
before the softmax; a query whose keys are *all* blocked gets all-zero weights and a zero output,
never NaN, in the forward and the backward pass.

References: Bloem, "Transformers from scratch" (2019); Vaswani et al., "Attention is all you
need" (2017).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.dot_product import scaled_dot_product_attention
from fromscratch.attention.grouped import FUSED_GQA, check_kv_heads, expand_kv_heads
from fromscratch.attention.masks import (
    causal_mask,
    check_attn_mask,
    check_padding_mask,
)

__all__ = ["ChunkedLinear", "KINDS", "SelfAttention"]

KINDS = ("standard", "wide", "narrow")


# --- chapter 04: multi-head self-attention ---------------------------------------------------------
class ChunkedLinear(nn.Module):
    """``h`` independent linear maps, map ``j`` applied to chunk ``j`` of the input (chapter 04).

    The "narrow" heads' projections: a block-diagonal ``(e, e)`` matrix stored as its ``h`` blocks.
    ``weight``: ``(h, s, s)``, ``(out, in)`` per head as in ``nn.Linear``. x: ``(..., e)`` -> ``(..., e)``.
    """

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        self.heads, s = heads, emb // heads
        bound = 1 / math.sqrt(s)  # nn.Linear's default initialisation for an s -> s map
        self.weight = nn.Parameter(torch.empty(heads, s, s).uniform_(-bound, bound))

    def forward(self, x: Tensor) -> Tensor:
        chunks = x.unflatten(-1, (self.heads, -1))  # (..., h, s)
        return torch.einsum("...hi,hoi->...ho", chunks, self.weight).flatten(-2)  # (..., e)


class SelfAttention(nn.Module):
    """Multi-head self-attention (chapter 04) in the blog's three forms.

    - ``kind="standard"``: project ``e -> e`` for queries, keys and values, then split each into
      ``h`` heads of width ``s = e // h`` (the form of ``nn.MultiheadAttention`` and modern models).
    - ``kind="wide"``: every head gets full-width queries, keys and values (``e -> e·h``).
    - ``kind="narrow"``: cut the *input* into ``h`` chunks of ``s``; head ``j`` sees chunk ``j``
      only, through its own ``(s, s)`` projections.

    The heads' outputs are concatenated and mixed back to ``e`` by ``unify_heads``. Scores are
    scaled by ``1/sqrt(head width)``: ``s`` for standard and narrow, ``e`` for wide. Query, key and
    value projections have no bias unless ``qkv_bias=True`` (the blog's choice; GPT-2 and BERT
    use biases); ``unify_heads`` has one.

    ``causal=True`` lets position ``i`` attend to positions ``<= i`` only (chapter 07).
    Chapter 14: ``kv_heads`` (dividing ``heads``; standard heads only) key/value heads shared by groups
    of query heads (grouped-query attention, :mod:`~fromscratch.attention.grouped`), and
    ``out_bias=False`` drops ``unify_heads``' bias (Llama has no biases).
    """

    def __init__(
        self,
        emb: int,
        heads: int = 8,
        kind: str = "standard",
        *,
        causal: bool = False,
        qkv_bias: bool = False,
        kv_heads: int | None = None,
        out_bias: bool = True,
    ) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}.")
        if emb <= 0 or heads <= 0:
            raise ValueError(f"emb and heads must be positive; got emb={emb}, heads={heads}.")
        if kind != "wide" and emb % heads != 0:
            raise ValueError(
                f"emb={emb} is not divisible by heads={heads}; {kind!r} heads have width emb // heads. "
                f"Pick heads dividing emb, or kind='wide'."
            )
        self.emb, self.heads, self.kind, self.causal = emb, heads, kind, causal
        self.kv_heads = heads if kv_heads is None else kv_heads  # hk: key/value heads (chapter 14)
        check_kv_heads(heads, self.kv_heads)
        if self.kv_heads != heads and kind != "standard":
            raise ValueError(f"kv_heads={self.kv_heads} < heads={heads} needs kind='standard', got {kind!r}.")
        self.head_dim = emb if kind == "wide" else emb // heads  # d: the width of one head
        inner = self.head_dim * heads  # e·h for wide, e otherwise
        if kind == "narrow":
            if qkv_bias:
                raise ValueError("kind='narrow' has no query/key/value biases; use qkv_bias=False.")
            self.to_queries, self.to_keys, self.to_values = (ChunkedLinear(emb, heads) for _ in range(3))
        else:
            self.to_queries = nn.Linear(emb, inner, bias=qkv_bias)
            self.to_keys = nn.Linear(emb, self.head_dim * self.kv_heads, bias=qkv_bias)
            self.to_values = nn.Linear(emb, self.head_dim * self.kv_heads, bias=qkv_bias)
        self.unify_heads = nn.Linear(inner, emb, bias=out_bias)

    def extra_repr(self) -> str:
        grouped = f", kv_heads={self.kv_heads}" if self.kv_heads != self.heads else ""
        return f"emb={self.emb}, heads={self.heads}{grouped}, kind={self.kind!r}, causal={self.causal}"

    def _mask(
        self,
        padding_mask: Tensor | None,
        attn_mask: Tensor | None,
        b: int,
        t: int,
        device: torch.device,
        *,
        tk: int | None = None,
    ) -> Tensor | None:
        """Combine the padding mask, the pattern and the causal pattern: bool, broadcastable to
        ``(b, h, t, tk)``.

        ``t`` is the number of queries, ``tk`` the number of keys (``t`` unless cross-attending)."""
        tk = t if tk is None else tk
        mask = None
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, tk)
            mask = padding_mask.to(device)[:, None, None, :]  # (b, 1, 1, tk): the same for every query
        if attn_mask is not None:
            check_attn_mask(attn_mask, b, self.heads, t, tk)
            pattern = attn_mask.to(device)  # (tq, tk) or (b|1, h|1, tq, tk)
            mask = pattern if mask is None else mask & pattern  # (b|1, h|1, t, tk)
        if self.causal:
            pattern = causal_mask(tk, device)[tk - t :]  # (t, tk): the queries are the last t positions
            mask = pattern if mask is None else mask & pattern  # (b|1, h|1, t, tk)
        return mask

    def forward(
        self,
        x: Tensor,
        *,
        context: Tensor | None = None,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: KVCache | None = None,
        rotary: nn.Module | None = None,
        bias: Tensor | None = None,
    ):
        """x: ``(b, t, e)``. Returns ``(b, t, e)``; with ``return_attention=True`` returns
        ``(out, weights)`` with weights ``(b, h, t, t)`` (the explicit teaching path).

        **Cross-attention** (chapter 09): with ``context`` ``(b, tk, e)``, the queries come from ``x``
        ``(b, tq, e)`` and the keys and values from ``context`` (an encoder's output), through the same
        projections; self-attention is the case ``context = x``. ``padding_mask`` ``(b, tk)`` and the
        last axis of ``attn_mask`` then refer to the context's positions, and the weights are
        ``(b, h, tq, tk)``. A causal module cannot cross-attend (its pattern needs ``tq == tk``).

        Two masks, both boolean with True = may attend, both optional:

        - ``padding_mask`` ``(b, t)``: True at real tokens, False at padding; a padded key is hidden
          from every query (:func:`padding_mask` builds it from lengths);
        - ``attn_mask``: a ``(query, key)`` pattern, ``(t, t)`` for the whole batch or
          ``(b|1, h|1, t, t)`` per sequence and/or head (write a per-sequence ``(b, t, t)`` pattern as
          ``mask[:, None]``).

        A key is visible to a query only where every mask given (and the causal pattern, with
        ``causal=True``) allows it. Without weights requested, ``F.scaled_dot_product_attention``
        runs (the fast path); the output is the same. A query that may attend to no key gets a zero
        attention output, so its final output is ``unify_heads``' bias; its gradients are zero, never NaN.

        Chapter 11's hooks, all keyword-only and off by default:

        - ``cache``: a :class:`KVCache`; ``x`` holds only the *new* positions, which attend to the
          cached ones and themselves (masks then cover ``tk = len(cache) + t`` keys). With ``context``
          (chapter 09's decoding), an empty cache stores the context's keys and values and a filled
          one supplies them, so the encoder's output is projected once per sentence, not per step;
        - ``rotary``: a :class:`~fromscratch.attention.positions.RotaryEmbedding`, applied to queries and keys
          at their absolute positions (``len(cache)`` onwards);
        - ``bias``: a float tensor broadcastable to ``(b, h, t, tk)`` added to the scores (ALiBi).
        """
        if x.dim() != 3 or x.size(-1) != self.emb:
            raise ValueError(f"x must have shape (b, t, e) with e={self.emb}, got {tuple(x.shape)}.")
        b, t, e = x.shape
        h, d, hk = self.heads, self.head_dim, self.kv_heads
        source = x if context is None else context  # where keys and values come from: (b, tk, e)
        if context is not None:
            if context.dim() != 3 or context.size(0) != b or context.size(-1) != self.emb:
                raise ValueError(
                    f"context must have shape (b, tk, e) = ({b}, tk, {self.emb}) "
                    f"to match x {tuple(x.shape)}, "
                    f"got {tuple(context.shape)}."
                )
            if self.causal:
                raise ValueError("a causal SelfAttention cannot cross-attend; build it with causal=False.")
        tk = source.size(1)
        past = 0 if cache is None or context is not None else len(cache)  # positions already in the KV cache
        only_causal = (
            self.causal and padding_mask is None and attn_mask is None and past == 0 and bias is None
        )
        mask = self._mask(padding_mask, attn_mask, b, t, x.device, tk=tk + past)  # (b|1, h|1, t, tk) or None

        q = self.to_queries(x).view(b, t, h, d).transpose(1, 2)  # (b, h, t, d)
        if context is not None and cache is not None and len(cache):
            k, v = cache.keys, cache.values  # the context's (b, h, tk, d), projected on the first step
        else:
            k = self.to_keys(source).view(b, tk, hk, d).transpose(1, 2)  # (b, hk, tk, d)
            v = self.to_values(source).view(b, tk, hk, d).transpose(1, 2)  # (b, hk, tk, d)
            if rotary is not None:
                q, k = rotary(q, offset=past), rotary(k, offset=past)  # (b, h, t, d), (b, h, tk, d)
            if cache is not None:
                k, v = cache.append(k, v)  # (b, hk, past + t, d): the whole prefix (or the context)
        tk = k.size(2)
        gqa = {}  # grouped-query attention: each key/value head serves h / hk query heads
        if hk != h and (return_attention or not FUSED_GQA):
            k, v = expand_kv_heads(k, h // hk), expand_kv_heads(v, h // hk)  # (b, h, tk, d)
        elif hk != h:
            gqa = {"enable_gqa": True}  # the fused kernel shares the hk heads itself, without copies

        if return_attention:
            out, weights = scaled_dot_product_attention(
                q, k, v, mask, bias=bias
            )  # (b, h, t, d), (b, h, t, tk)
            assert weights.shape == (b, h, t, tk)
        elif bias is None and (mask is None or only_causal):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=only_causal, **gqa)  # (b, h, t, d)
        elif mask is None:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype), **gqa)  # (b, h, t, d)
        else:
            # Depending on version and backend, the fused kernel may return NaN for a query with no
            # allowed key: let such rows see every key, then zero their output (and its gradient).
            has_key = mask.any(dim=-1, keepdim=True)  # (b|1, h|1, t, 1)
            allowed = mask | ~has_key  # (b|1, h|1, t, tk)
            if bias is not None:  # one float mask: the bias where allowed, -inf elsewhere
                allowed = torch.where(allowed, bias.to(q.dtype), float("-inf"))  # (b|h|1.., t, tk)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, **gqa)  # (b, h, t, d)
            out = out.masked_fill(~has_key, 0.0)

        out = out.transpose(1, 2).reshape(b, t, h * d)  # (b, t, h·d): heads side by side
        out = self.unify_heads(out)  # (b, t, e)
        return (out, weights) if return_attention else out
