"""The blog's three forms of multi-head attention (chapter 04): standard, wide and narrow heads.

- **standard** (:class:`~fromscratch.attention.core.SelfAttention`): project ``e -> e``, then split
  into ``h`` heads of width ``s = e // h`` (``nn.MultiheadAttention``'s form, and every later model's);
- **wide** (:class:`WideSelfAttention`): every head gets full-width queries, keys and values,
  ``e -> e·h``; ``e·h -> e`` back (the blog's first version; any ``h`` fits any ``e``);
- **narrow** (:class:`NarrowSelfAttention`): cut the *input* into ``h`` chunks of ``s``; head ``j``
  sees chunk ``j`` only, through its own ``(s, s)`` projections (:class:`ChunkedLinear`).

All three share ``SelfAttention``'s forward: only the projections differ. Scores are scaled by
``1/sqrt(head width)``: ``s`` for standard and narrow, ``e`` for wide.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``s = e // h``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from fromscratch.attention.core import SelfAttention

__all__ = ["KINDS", "ChunkedLinear", "NarrowSelfAttention", "WideSelfAttention"]


class ChunkedLinear(nn.Module):
    """``h`` independent linear maps, map ``j`` applied to chunk ``j`` of the input (chapter 04).

    A block-diagonal ``(e, e)`` matrix stored as its ``h`` blocks: ``weight (h, s, s)``, ``(out, in)``
    per head as in ``nn.Linear``. x: ``(..., e)`` -> ``(..., e)``.
    """

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        self.heads, s = heads, emb // heads
        bound = 1 / math.sqrt(s)  # nn.Linear's default initialisation for an s -> s map
        self.weight = nn.Parameter(torch.empty(heads, s, s).uniform_(-bound, bound))

    def forward(self, x: Tensor) -> Tensor:
        chunks = x.unflatten(-1, (self.heads, -1))  # (..., h, s)
        return torch.einsum("...hi,hoi->...ho", chunks, self.weight).flatten(-2)  # (..., e)


class WideSelfAttention(SelfAttention):
    """Wide heads (chapter 04): ``h`` heads of width ``e`` each; ``emb`` need not divide by ``heads``."""

    def __init__(self, emb: int, heads: int = 8, *, causal: bool = False, qkv_bias: bool = False) -> None:
        nn.Module.__init__(self)  # SelfAttention's own e -> e projections would only be thrown away
        self.emb, self.heads, self.causal = emb, heads, causal
        self.to_queries = nn.Linear(emb, emb * heads, bias=qkv_bias)  # e -> e·h: h full-width heads
        self.to_keys = nn.Linear(emb, emb * heads, bias=qkv_bias)
        self.to_values = nn.Linear(emb, emb * heads, bias=qkv_bias)
        self.unify_heads = nn.Linear(emb * heads, emb)  # e·h -> e

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, wide"


class NarrowSelfAttention(SelfAttention):
    """Narrow heads (chapter 04): head ``j`` reads chunk ``j`` of the input; no query/key/value biases."""

    def __init__(self, emb: int, heads: int = 8, *, causal: bool = False) -> None:
        nn.Module.__init__(self)  # the projections are ChunkedLinear, not SelfAttention's nn.Linear
        if emb % heads:
            raise ValueError(
                f"emb={emb} is not divisible by heads={heads}; narrow heads cut e into h chunks."
            )
        self.emb, self.heads, self.causal = emb, heads, causal
        self.to_queries = ChunkedLinear(emb, heads)  # (h, s, s): head j sees chunk j only
        self.to_keys = ChunkedLinear(emb, heads)
        self.to_values = ChunkedLinear(emb, heads)
        self.unify_heads = nn.Linear(emb, emb)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, narrow"


KINDS = {"standard": SelfAttention, "wide": WideSelfAttention, "narrow": NarrowSelfAttention}
