"""GPT-2 (Radford et al. 2019): a decoder-only language model, top to bottom in one file (chapter 10).

Chapter 07's generator with GPT-2's choices: **pre-norm** blocks (``x + attention(norm(x))``) and a
final LayerNorm, query/key/value biases, GELU in its tanh approximation (GPT-2's ``gelu_new``),
learned positions, and an output layer **tied** to the token embedding. Its attention keeps a
caller-owned KV cache (chapter 11): generating, each step feeds only the new token.
ids ``(b, t)`` -> logits ``(b, t, V)``, where ``logits[:, i]`` scores the token at ``i + 1``.

Module names (``interop.huggingface.gpt2_table`` maps them to Hugging Face's): ``token_embedding``,
``position_embedding``, ``blocks.i`` (``norm1``, ``attention.{to_queries, to_keys, to_values,
unify_heads}``, ``norm2``, ``ff.net.{0, 3}``), ``final_norm``, ``to_logits``.

Shape legend: ``b`` batch, ``t`` new positions, ``tk`` all positions (cached + new), ``e`` embedding,
``h`` heads, ``s = e // h``, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.dot_product import attend
from fromscratch.attention.masks import check_padding_mask
from fromscratch.attention.positions import check_tokens
from fromscratch.blocks.feedforward import FeedForward
from fromscratch.models.config import resolve_config


@dataclass(frozen=True)
class GPT2Config:
    """Sizes of a GPT-2; the defaults are GPT-2 124M (the smallest of the four)."""

    vocab_size: int = 50_257  # V: byte-level BPE, 50,000 merges + 256 bytes + <|endoftext|>
    context: int = 1_024  # n_positions: learned positions, the longest input
    emb: int = 768  # e: n_embd (124M: 768, 1.5B: 1,600)
    heads: int = 12  # h: n_head (124M: 12)
    depth: int = 12  # n_layer (124M: 12, 1.5B: 48)
    ff_mult: int = 4  # feed-forward width = ff_mult * e (GPT-2: 4)
    dropout: float = 0.1  # after the embeddings and each sub-layer (GPT-2: 0.1)
    norm_eps: float = 1e-5  # LayerNorm epsilon (GPT-2: 1e-5)


def gpt2_init(module: nn.Module) -> None:
    """GPT-2's initialisation: normal(0, 0.02) weights, zero biases; norms keep gain 1.
    ``model.apply(gpt2_init)`` visits every module."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)


class CausalSelfAttention(nn.Module):
    """Causal multi-head attention with biases everywhere and a KV cache: ``(b, t, e) -> (b, t, e)``."""

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.to_queries = nn.Linear(emb, emb)
        self.to_keys = nn.Linear(emb, emb)
        self.to_values = nn.Linear(emb, emb)
        self.unify_heads = nn.Linear(emb, emb)

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        cache: KVCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x: the new positions ``(b, t, e)``; ``padding_mask (b, tk)``; ``cache``: the earlier
        positions' keys and values, extended here. Appends ``(b, h, t, tk)`` weights to ``attention``."""
        b, t, e = x.shape
        h = self.heads
        q = self.to_queries(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        k = self.to_keys(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        v = self.to_values(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        if cache is not None:
            k, v = cache.append(k, v)  # (b, h, tk, s): the cached positions, then these
        keys = padding_mask[:, None, None, :] if padding_mask is not None else None  # (b, 1, 1, tk)
        out = attend(q, k, v, keys, causal=True, weights=attention)  # (b, h, t, s)
        return self.unify_heads(out.transpose(1, 2).reshape(b, t, e))  # (b, t, e)


# Same as models.llama.LlamaBlock in chapter 14's GPT-2 rung: tests/test_llama.py loads GPT2 into that rung
class Block(nn.Module):
    """A pre-norm block: ``x + attention(norm1(x))``, then ``x + ff(norm2(x))`` (GELU, tanh form)."""

    def __init__(self, c: GPT2Config) -> None:
        super().__init__()
        self.attention = CausalSelfAttention(c.emb, c.heads)
        self.norm1 = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.norm2 = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.ff = FeedForward(c.emb, c.ff_mult, c.dropout, activation="gelu_tanh")
        self.dropout = nn.Dropout(c.dropout)

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        cache: KVCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``; the keywords go to :class:`CausalSelfAttention`."""
        a = self.attention(self.norm1(x), padding_mask=padding_mask, cache=cache, attention=attention)
        x = x + self.dropout(a)  # (b, t, e)
        return x + self.dropout(self.ff(self.norm2(x)))  # (b, t, e)


class GPT2(nn.Module):
    """GPT-2: ``GPT2(config, **fields)``; ``forward(tokens)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: GPT2Config | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(GPT2Config, config, fields)
        self.context, self.vocab_size = c.context, c.vocab_size
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.position_embedding = nn.Embedding(c.context, c.emb)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.depth))
        self.final_norm = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.to_logits = nn.Linear(c.emb, c.vocab_size, bias=False)
        self.to_logits.weight = self.token_embedding.weight  # tied: one (V, e) matrix
        self.apply(gpt2_init)

    def new_cache(self) -> list[KVCache]:
        """An empty KV cache for :meth:`forward`: one :class:`KVCache` per block (chapter 11)."""
        return [KVCache() for _ in self.blocks]

    def forward(
        self,
        tokens: Tensor,
        *,
        padding_mask: Tensor | None = None,
        cache: list[KVCache] | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tokens int ``(b, t)`` -> logits ``(b, t, V)``. ``padding_mask`` bool ``(b, tk)``, True at
        real tokens (padding at the end). ``cache`` (:meth:`new_cache`, filled by earlier calls):
        ``tokens`` are the positions after the cached ones. ``attention`` gets one
        ``(b, h, t, tk)`` tensor per block."""
        past = len(cache[0]) if cache else 0  # positions already in the cache
        check_tokens(tokens, self.context, self.vocab_size, past)
        b, t = tokens.shape
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, past + t)
        positions = torch.arange(past, past + t, device=tokens.device)  # (t,)
        x = self.dropout(self.token_embedding(tokens) + self.position_embedding(positions))  # (b, t, e)
        for i, block in enumerate(self.blocks):
            layer_cache = cache[i] if cache is not None else None
            x = block(x, padding_mask=padding_mask, cache=layer_cache, attention=attention)  # (b, t, e)
        return self.to_logits(self.final_norm(x))  # (b, t, V)


__all__ = ["GPT2", "GPT2Config", "gpt2_init"]
