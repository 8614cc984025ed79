"""Chapter 11's generator: chapter 07's byte model with a KV cache, five more position schemes and
sparse attention, top to bottom in one file.

- **KV cache** (11.1): each attention layer keeps its keys and values in a caller-owned
  :class:`~fromscratch.attention.cache.KVCache` (``model.new_cache()``); generating, a step feeds only
  the new token.
- **Positions** (11.5), ``config.positions``: added to the embeddings (``"learned"``, the blog's;
  ``"sinusoidal"``), rotating queries and keys (``"rope"``), a bias on every layer's scores
  (``"alibi"``: fixed, growing with distance; ``"t5"``: learned per bucket of distance), or nothing
  (``"nope"``, NoPE: a causal model still tells positions apart by what it may see).
- **Sparse attention** (11.4), ``config.sparsity``: Child et al.'s ``"strided"`` or ``"fixed"``
  pattern (:mod:`~fromscratch.attention.sparse`) as a mask on top of the causal one.

Blocks are pre-norm (GPT-2's order). ids ``(b, t)`` -> logits ``(b, t, V)``.

Shape legend: ``b`` batch, ``t`` new positions, ``tk`` all positions (cached + new), ``e`` embedding,
``h`` heads, ``s = e // h``, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.dot_product import attend
from fromscratch.attention.positions import (
    ALiBi,
    PositionEmbedding,
    PositionEncoding,
    RotaryEmbedding,
    check_tokens,
)
from fromscratch.attention.relative_bias import RelativeBias
from fromscratch.attention.sparse import PATTERNS, sparse_mask
from fromscratch.blocks.feedforward import FeedForward
from fromscratch.models.config import resolve_config

POSITIONS = ("learned", "sinusoidal", "rope", "alibi", "t5", "nope")  # every scheme of 11.5; nope: NoPE


@dataclass(frozen=True)
class LongContextConfig:
    """Sizes and options of a :class:`LongContextGenerator`; the defaults are the blog's enwik8 model."""

    vocab_size: int = 256  # V: one token per byte value
    emb: int = 256  # e: embedding width (blog: 256)
    heads: int = 8  # h: attention heads per block (blog: 8)
    depth: int = 12  # transformer blocks (blog: 12)
    context: int = 256  # longest input in bytes (and the learned or sinusoidal positions' table)
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e (blog: 4)
    dropout: float = 0.0  # after the embeddings and each sub-layer
    positions: str = "learned"  # a scheme of POSITIONS: "learned" (blog), "sinusoidal", "rope", "alibi", ...
    sparsity: str | None = None  # None: dense attention; "strided" or "fixed": a sparse pattern (11.4)
    sparse_block: int = 16  # block (stride) l of the sparse pattern; only used with sparsity

    def __post_init__(self) -> None:
        c = self
        if c.positions not in POSITIONS:
            raise ValueError(
                f"positions must be one of {', '.join(map(repr, POSITIONS))}; got {c.positions!r}."
            )
        if c.sparsity is not None and c.sparsity not in PATTERNS:
            raise ValueError(
                f"sparsity must be None (dense) or one of {', '.join(PATTERNS)}; got {c.sparsity!r}."
            )


class CachedSelfAttention(nn.Module):
    """Causal multi-head attention with a KV cache, RoPE and a bias on the scores (chapter 11)."""

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.to_queries = nn.Linear(emb, emb, bias=False)
        self.to_keys = nn.Linear(emb, emb, bias=False)
        self.to_values = nn.Linear(emb, emb, bias=False)
        self.unify_heads = nn.Linear(emb, emb)

    def forward(
        self,
        x: Tensor,
        *,
        attn_mask: Tensor | None = None,
        cache: KVCache | None = None,
        rotary: RotaryEmbedding | None = None,
        bias: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x: the new positions ``(b, t, e)`` -> ``(b, t, e)``. ``attn_mask (t, tk)``: a pattern on top
        of the causal one; ``cache`` gets these keys and values; ``rotary`` turns queries and keys at
        their absolute positions; ``bias`` ``(h, t, tk)`` is added to the scores. Appends
        ``(b, h, t, tk)`` weights to ``attention``."""
        b, t, e = x.shape
        past = len(cache) if cache is not None else 0  # positions already cached
        q = self.to_queries(x).view(b, t, self.heads, -1).transpose(1, 2)  # (b, h, t, s)
        k = self.to_keys(x).view(b, t, self.heads, -1).transpose(1, 2)  # (b, h, t, s)
        v = self.to_values(x).view(b, t, self.heads, -1).transpose(1, 2)  # (b, h, t, s)
        if rotary is not None:
            q, k = rotary(q, offset=past), rotary(k, offset=past)  # positions past .. past + t - 1
        if cache is not None:
            k, v = cache.append(k, v)  # (b, h, tk, s)
        out = attend(q, k, v, attn_mask, causal=True, bias=bias, weights=attention)  # (b, h, t, s)
        return self.unify_heads(out.transpose(1, 2).reshape(b, t, e))  # (b, t, e)


class Block(nn.Module):
    """A pre-norm block: ``x + attention(norm1(x))``, then ``x + ff(norm2(x))``."""

    def __init__(self, c: LongContextConfig) -> None:
        super().__init__()
        self.attention = CachedSelfAttention(c.emb, c.heads)
        self.norm1 = nn.LayerNorm(c.emb)
        self.norm2 = nn.LayerNorm(c.emb)
        self.ff = FeedForward(c.emb, c.ff_mult, c.dropout)
        self.dropout = nn.Dropout(c.dropout)

    def forward(
        self,
        x: Tensor,
        *,
        attn_mask: Tensor | None = None,
        cache: KVCache | None = None,
        rotary: RotaryEmbedding | None = None,
        bias: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``; the keywords go to :class:`CachedSelfAttention`."""
        a = self.attention(
            self.norm1(x), attn_mask=attn_mask, cache=cache, rotary=rotary, bias=bias, attention=attention
        )
        x = x + self.dropout(a)  # (b, t, e)
        return x + self.dropout(self.ff(self.norm2(x)))  # (b, t, e)


class LongContextGenerator(nn.Module):
    """Chapter 11's byte model, ``LongContextGenerator(config, **fields)``: ids ``(b, t)`` -> logits."""

    def __init__(self, config: LongContextConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(LongContextConfig, config, fields)
        self.context, self.vocab_size = c.context, c.vocab_size
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.position_embedding = self.rotary = self.position_bias = None
        if c.positions == "learned":  # added to the embeddings
            self.position_embedding = PositionEmbedding(c.context, c.emb)
        elif c.positions == "sinusoidal":
            self.position_embedding = PositionEncoding(c.context, c.emb)
        elif c.positions == "rope":  # inside every attention layer
            self.rotary = RotaryEmbedding(c.emb // c.heads)
        elif c.positions == "alibi":  # added to every layer's scores
            self.position_bias = ALiBi(c.heads)
        elif c.positions == "t5":
            self.position_bias = RelativeBias(c.heads)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.depth))
        self.final_norm = nn.LayerNorm(c.emb)
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def new_cache(self) -> list[KVCache]:
        """An empty KV cache for :meth:`forward`: one :class:`KVCache` per block (11.1)."""
        return [KVCache() for _ in self.blocks]

    def forward(
        self, tokens: Tensor, *, cache: list[KVCache] | None = None, attention: list[Tensor] | None = None
    ) -> Tensor:
        """tokens int ``(b, t)`` -> logits ``(b, t, V)``. ``cache`` (:meth:`new_cache`, filled by earlier
        calls): ``tokens`` are the positions after the cached ones, ``len(cache[0]) + t <= context``.
        ``attention`` gets one ``(b, h, t, tk)`` weight tensor per block."""
        past = len(cache[0]) if cache else 0  # positions already in the cache
        check_tokens(tokens, self.context, self.config.vocab_size, past)
        t, tk = tokens.size(1), past + tokens.size(1)
        x = self.token_embedding(tokens)  # (b, t, e)
        if self.position_embedding is not None:
            x = x + self.position_embedding.positions(tk)[past:]  # (b, t, e): positions past .. tk - 1
        x = self.dropout(x)
        c = self.config
        bias = self.position_bias(t, tk) if self.position_bias is not None else None  # (h, t, tk)
        pattern = None  # the teaching form of sparsity: a boolean pattern over all tk² pairs
        if c.sparsity is not None:
            pattern = sparse_mask(c.sparsity, tk, c.sparse_block)[past:].to(tokens.device)  # (t, tk)
        for i, block in enumerate(self.blocks):
            layer_cache = cache[i] if cache is not None else None
            x = block(  # (b, t, e)
                x, attn_mask=pattern, cache=layer_cache, rotary=self.rotary, bias=bias, attention=attention
            )
        return self.to_logits(self.final_norm(x))  # (b, t, V)


__all__ = ["POSITIONS", "CachedSelfAttention", "LongContextConfig", "LongContextGenerator"]
