"""Multi-head self-attention (chapter 04), the one ``SelfAttention`` of chapters 04-10.

Project ``x`` to queries, keys and values, split each into ``h`` heads of width ``s = e // h``,
attend in every head (chapter 03's :func:`~fromscratch.attention.dot_product.scaled_dot_product_attention`),
put the heads side by side and mix them back to ``e`` (``unify_heads``). The blog's other two forms,
wide and narrow heads, are :mod:`~fromscratch.attention.kinds`; later models keep their own attention
(Llama's grouped queries and RoPE, GPT-2's KV cache, chapter 11's position schemes).

Masks (:mod:`~fromscratch.attention.masks`): boolean, True = may attend; ``padding_mask (b, tk)``
and ``attn_mask`` broadcastable to ``(b, h, tq, tk)``. A query whose keys are all blocked gets
zero weights and a zero output, never NaN, in the forward and the backward pass.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``s = e // h``.
"""

from __future__ import annotations

from torch import Tensor, nn

from fromscratch.attention.dot_product import attend
from fromscratch.attention.masks import check_attn_mask, check_padding_mask

__all__ = ["SelfAttention"]


class SelfAttention(nn.Module):
    """Multi-head self-attention with ``h`` standard heads of width ``s = e // h`` (chapter 04).

    Queries, keys and values have no bias unless ``qkv_bias=True`` (GPT-2 and BERT use them);
    ``unify_heads`` has one. ``causal=True``: position ``i`` attends to positions ``<= i`` (ch. 07).
    """

    def __init__(self, emb: int, heads: int = 8, *, causal: bool = False, qkv_bias: bool = False) -> None:
        super().__init__()
        if emb % heads:
            raise ValueError(f"emb={emb} is not divisible by heads={heads}; pick heads dividing emb.")
        self.emb, self.heads, self.causal = emb, heads, causal
        self.to_queries = nn.Linear(emb, emb, bias=qkv_bias)
        self.to_keys = nn.Linear(emb, emb, bias=qkv_bias)
        self.to_values = nn.Linear(emb, emb, bias=qkv_bias)
        self.unify_heads = nn.Linear(emb, emb)

    def extra_repr(self) -> str:
        return f"emb={self.emb}, heads={self.heads}, causal={self.causal}"

    def mask(self, padding_mask: Tensor | None, attn_mask: Tensor | None, x: Tensor) -> Tensor | None:
        """Every mask given in one (the causal pattern is :func:`attend`'s): bool, ``(b|1, h|1, t, t)``."""
        (b, t, _), masks = x.shape, []
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, t)
            masks.append(padding_mask.to(x.device)[:, None, None, :])  # (b, 1, 1, t): for every query
        if attn_mask is not None:
            check_attn_mask(attn_mask, b, self.heads, t, t)
            masks.append(attn_mask.to(x.device))  # (t, t) or (b|1, h|1, t, t)
        mask = masks[0] if masks else None
        for more in masks[1:]:
            mask = mask & more  # (b|1, h|1, t, t)
        return mask

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``. ``padding_mask (b, t)``: True at real tokens; ``attn_mask``:
        a ``(t, t)`` or ``(b|1, h|1, t, t)`` pattern, True = may attend.

        With a list ``attention``, the weights are written out (chapter 03's function) and their
        ``(b, h, t, t)`` tensor is appended to it; otherwise PyTorch's fused kernel computes the same
        output without them (:func:`~fromscratch.attention.dot_product.attend` makes the choice).
        """
        b, t, e = x.shape
        assert e == self.emb, f"x must be (b, t, {self.emb}), got {tuple(x.shape)}"
        h = self.heads
        q = self.to_queries(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        k = self.to_keys(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        v = self.to_values(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        mask = self.mask(padding_mask, attn_mask, x)  # (b|1, h|1, t, t) or None
        out = attend(q, k, v, mask, causal=self.causal, weights=attention)  # (b, h, t, s)
        out = out.transpose(1, 2).reshape(b, t, -1)  # (b, t, h·s): the heads side by side
        return self.unify_heads(out)  # (b, t, e)
