"""The transformer block, and how a stack of blocks learns about word order (chapter 05).

A block wraps self-attention with a position-wise feed-forward network, residual connections and
layer normalisation (over the embedding dimension only). The blog's order is **post-norm**::

    x = norm1(x + attention(x))
    x = norm2(x + feedforward(x))

**Pre-norm** (GPT-2 and most models since) normalises the input of each sub-layer instead, so the
residual path from input to output is never normalised, and a final norm follows the last block::

    x = x + attention(norm1(x))
    x = x + feedforward(norm2(x))

Self-attention and the feed-forward are *permutation equivariant*: shuffling the tokens shuffles
the outputs the same way. To let a model see word order, a position vector is added to each token
embedding: learned (:class:`PositionEmbedding`, the blog's choice) or fixed sinusoids
(:class:`PositionEncoding`, Vaswani et al. 2017). :class:`TransformerStack` assembles token
embedding, positions and blocks; the classifier (ch. 06) and the generator (ch. 07) are built on it.

Chapter 14 makes the block's parts options, so one block is GPT-2's or Llama's by its arguments:
``norm_kind`` ("layer" or "rms", :mod:`~fromscratch.blocks.norms`), ``feedforward`` ("mlp" or
"swiglu", :mod:`~fromscratch.blocks.feedforward`), ``bias`` and ``kv_heads`` (grouped-query attention).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

import functools

import torch
import torch.utils.checkpoint
from torch import Tensor, nn

from fromscratch.attention import (
    SCHEMES,
    KVCache,
    SelfAttention,
    check_length,
    position_parts,
)
from fromscratch.blocks.feedforward import make_feedforward
from fromscratch.blocks.norms import make_norm

NORMS = ("post", "pre")
POSITIONS = (*SCHEMES, None)  # attention.schemes: added, inside attention (chapter 11), or "none"/None


# --- the block (its feed-forward and norms: blocks.feedforward, blocks.norms) ----------------------
class TransformerBlock(nn.Module):
    """Self-attention and a feed-forward, each with a residual connection and a LayerNorm (ch. 05).

    norm="post": ``x = norm(x + sublayer(x))`` as in the blog; norm="pre":
    ``x = x + sublayer(norm(x))``. Dropout (if any) is applied to each sub-layer's output before
    it is added to the residual stream. ``causal=True`` hides later positions (chapter 07).
    ``kind`` and ``qkv_bias`` go to :class:`~fromscratch.attention.SelfAttention`, ``activation``
    to :class:`FeedForward`; ``norm_eps`` is the LayerNorms' epsilon (BERT: 1e-12).

    Chapter 14's options (the defaults are the block above): ``norm_kind="rms"`` (RMSNorm instead of
    LayerNorm), ``feedforward="swiglu"`` (SwiGLU, ``hidden`` wide; the MLP is ``hidden`` wide too when
    given), ``bias=False`` (no bias in ``unify_heads`` and the feed-forward; the query/key/value biases
    follow ``qkv_bias``), ``kv_heads`` (grouped-query attention). GPT-2's block is
    ``norm="pre", qkv_bias=True, activation="gelu"``; Llama's adds ``norm_kind="rms",
    feedforward="swiglu", bias=False, kv_heads=...``.
    """

    def __init__(
        self,
        emb: int,
        heads: int,
        *,
        ff_mult: int = 4,
        dropout: float = 0.0,
        norm: str = "post",
        causal: bool = False,
        kind: str = "standard",
        qkv_bias: bool = False,
        activation: str = "relu",
        norm_eps: float = 1e-5,
        norm_kind: str = "layer",
        feedforward: str = "mlp",
        hidden: int | None = None,
        bias: bool = True,
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be 'post' (the blog's block) or 'pre' (GPT-2's); got {norm!r}.")
        self.norm = norm
        self.attention = SelfAttention(
            emb, heads, kind=kind, causal=causal, qkv_bias=qkv_bias, kv_heads=kv_heads, out_bias=bias
        )
        self.norm1 = make_norm(norm_kind, emb, norm_eps)
        self.norm2 = make_norm(norm_kind, emb, norm_eps)
        hidden = ff_mult * emb if hidden is None else hidden  # the feed-forward's inner width
        self.ff = make_feedforward(feedforward, emb, hidden, dropout, activation=activation, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: KVCache | None = None,
        rotary: nn.Module | None = None,
        bias: Tensor | None = None,
    ):
        """x: ``(b, t, e)``; ``padding_mask`` bool ``(b, t)``, True at real tokens; ``attn_mask`` bool
        ``(t, t)`` or ``(b|1, h|1, t, t)``, True = may attend (see :class:`SelfAttention`). Returns
        ``(b, t, e)``, or ``(out, weights)`` with weights ``(b, h, t, t)`` when ``return_attention=True``.
        ``cache``, ``rotary`` and ``bias`` go to the attention (chapter 11: KV cache, RoPE, ALiBi)."""
        weights = None
        inner = self.norm1(x) if self.norm == "pre" else x
        masks = dict(padding_mask=padding_mask, attn_mask=attn_mask, cache=cache, rotary=rotary, bias=bias)
        if return_attention:
            attended, weights = self.attention(
                inner, **masks, return_attention=True
            )  # (b, t, e), (b, h, t, t)
        else:
            attended = self.attention(inner, **masks)  # (b, t, e)
        if self.norm == "post":
            x = self.norm1(x + self.dropout(attended))  # (b, t, e)
            x = self.norm2(x + self.dropout(self.ff(x)))
        else:
            x = x + self.dropout(attended)  # (b, t, e)
            x = x + self.dropout(self.ff(self.norm2(x)))
        return (x, weights) if return_attention else x


# --- a whole stack ---------------------------------------------------------------------------------
class TransformerStack(nn.Module):
    """Token embedding + positions + ``depth`` transformer blocks: ids ``(b, t)`` -> vectors ``(b, t, e)``.

    The shared body of the classifier (chapter 06) and the generator (chapter 07).
    positions: a name of :data:`~fromscratch.attention.SCHEMES`: "learned" or "sinusoidal" (added to the
    embeddings), "rope", "alibi" or "t5" (inside every block's attention, chapter 11), "none" or None
    (nothing: a non-causal stack is then permutation equivariant).
    With norm="pre" a final LayerNorm follows the last block.

    ``checkpoint=True`` (chapter 12, gradient checkpointing): while training, each block keeps only
    its input for the backward pass and runs its forward again there (``torch.utils.checkpoint``,
    non-reentrant; dropout masks are replayed), trading about one extra forward pass for the
    activations inside the blocks. The gradients are the same. It works with ``return_attention=True``
    too, but the returned weights are then kept alive by the caller, so little memory is saved.
    """

    def __init__(
        self,
        *,
        vocab_size: int,
        emb: int,
        heads: int,
        depth: int,
        max_len: int,
        positions: str | None = "learned",
        ff_mult: int = 4,
        dropout: float = 0.0,
        norm: str = "post",
        causal: bool = False,
        kind: str = "standard",
        checkpoint: bool = False,
    ) -> None:
        super().__init__()
        self.checkpoint = checkpoint  # chapter 12: recompute each block in the backward pass (less memory)
        self.max_len = max_len
        self.token_embedding = nn.Embedding(vocab_size, emb)
        head_dim = emb if kind == "wide" else emb // heads
        parts = position_parts(positions, max_len=max_len, emb=emb, heads=heads, head_dim=head_dim)
        self.positions, self.rotary, self.position_bias = parts.added, parts.rotary, parts.bias
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                emb, heads, ff_mult=ff_mult, dropout=dropout, norm=norm, causal=causal, kind=kind
            )
            for _ in range(depth)
        )
        self.final_norm = nn.LayerNorm(emb) if norm == "pre" else nn.Identity()

    def forward(
        self,
        tokens: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: list[KVCache] | None = None,
    ):
        """tokens: int ``(b, t)``; ``padding_mask`` bool ``(b, t)`` (True at real tokens) and ``attn_mask``
        (True = may attend) go to every block (see :class:`TransformerBlock`). Returns ``(b, t, e)``, or
        ``(out, weights)`` with a list of ``depth`` tensors ``(b, h, t, t)`` when ``return_attention=True``.

        ``cache`` (chapter 11): one :class:`~fromscratch.attention.KVCache` per block
        (:meth:`new_cache`); ``tokens`` are then the positions after the cached ones, and masks and
        weights cover ``tk = len(cache[0]) + t`` keys."""
        if tokens.dim() != 2:
            raise ValueError(
                f"tokens must have shape (b, t), got {tuple(tokens.shape)}; "
                "add a batch dimension with tokens[None]."
            )
        if cache is not None and len(cache) != len(self.blocks):
            raise ValueError(f"cache must hold one KVCache per block ({len(self.blocks)}), got {len(cache)}.")
        past = len(cache[0]) if cache else 0  # positions already cached
        t = tokens.size(1)
        check_length(past + t, self.max_len)
        x = self.token_embedding(tokens)  # (b, t, e)
        if self.positions is not None:
            x = x + self.positions.positions(past + t)[past:]  # (b, t, e): positions past .. past + t - 1
        x = self.dropout(x)
        bias = self.position_bias(t, past + t) if self.position_bias is not None else None  # (h, t, tk)
        masks = dict(padding_mask=padding_mask, attn_mask=attn_mask, rotary=self.rotary, bias=bias)
        weights = []
        for n, block in enumerate(self.blocks):
            layer_cache = cache[n] if cache is not None else None
            run = block
            if self.checkpoint and self.training and torch.is_grad_enabled() and layer_cache is None:
                run = functools.partial(torch.utils.checkpoint.checkpoint, block, use_reentrant=False)
            if return_attention:
                x, w = run(x, **masks, cache=layer_cache, return_attention=True)  # (b, t, e), (b, h, t, tk)
                weights.append(w)
            else:
                x = run(x, **masks, cache=layer_cache)  # (b, t, e)
        x = self.final_norm(x)
        return (x, weights) if return_attention else x

    def new_cache(self) -> list[KVCache]:
        """One empty :class:`~fromscratch.attention.KVCache` per block, for ``forward(..., cache=...)``."""
        return [KVCache() for _ in self.blocks]


__all__ = ["TransformerBlock", "TransformerStack", "NORMS", "POSITIONS"]
