"""GPT-2 (Radford et al. 2019): a decoder-only language model, in our own blocks (chapter 10).

Chapter 07's generator with GPT-2's choices: **pre-norm** blocks (``x + attention(norm(x))``) and
a final LayerNorm, query/key/value biases, GELU in its tanh approximation (GPT-2's ``gelu_new``),
learned positions, and an output layer **tied** to the token embedding (no bias): the logit of
token ``v`` is the dot product of the last hidden state with ``v``'s input embedding.
ids ``(b, t)`` -> logits ``(b, t, V)``, where ``logits[:, i]`` scores the token at ``i + 1``.

Module layout (the chapter 11 KV cache works on it as on any causal :class:`TransformerBlock`):
``token_embedding``, ``position_embedding``, ``blocks`` (a ``ModuleList`` of pre-norm, causal
``TransformerBlock``), ``final_norm``, ``to_logits`` (weight tied to ``token_embedding.weight``).
Generate with :func:`fromscratch.generate.generate_tokens` (``context=model.context``), which uses
the chapter 11 key-value cache through :meth:`GPT2.new_cache` and ``forward(..., cache=...)``.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from fromscratch.attention import KVCache, check_length
from fromscratch.attention.masks import check_padding_mask
from fromscratch.blocks import TransformerBlock
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
    """GPT-2's initialisation (Llama's too): normal(0, 0.02) weights, zero biases; norms keep gain 1.
    ``model.apply(gpt2_init)`` visits every module."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)


class GPT2(nn.Module):
    """GPT-2 in our blocks; ``GPT2(config, **fields)``. ``forward(input_ids)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: GPT2Config | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(GPT2Config, config, fields)
        self.context, self.vocab_size = c.context, c.vocab_size
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.position_embedding = nn.Embedding(c.context, c.emb)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.emb,
                c.heads,
                ff_mult=c.ff_mult,
                dropout=c.dropout,
                norm="pre",
                causal=True,
                qkv_bias=True,
                activation="gelu_tanh",  # GPT-2's "gelu_new"; differs from exact GELU by ~1e-3
                norm_eps=c.norm_eps,
            )
            for _ in range(c.depth)
        )
        self.final_norm = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.to_logits = nn.Linear(c.emb, c.vocab_size, bias=False)
        self.to_logits.weight = self.token_embedding.weight  # tied: one (V, e) matrix
        self.apply(gpt2_init)

    def new_cache(self) -> list[KVCache]:
        """An empty key-value cache, one :class:`~fromscratch.attention.KVCache` per block (chapter 11)."""
        return [KVCache() for _ in self.blocks]

    def forward(
        self,
        input_ids: Tensor,
        *,
        padding_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: list[KVCache] | None = None,
    ):
        """input_ids: int ``(b, t)``, ``t <= context``; padding_mask: bool ``(b, t)`` (True at real tokens;
        pad at the end, so real tokens keep their positions). Returns logits ``(b, t, V)``, or
        ``(logits, weights)`` with one ``(b, h, t, t)`` tensor per block when ``return_attention=True``.

        ``cache`` (chapter 11): the list :meth:`new_cache` made, filled by earlier calls; ``input_ids``
        are then the positions that follow the cached ones, and their positions are counted from there.
        """
        if input_ids.dim() != 2:
            raise ValueError(
                f"input_ids must have shape (b, t), got {tuple(input_ids.shape)}; "
                "add a batch dimension with ids[None]."
            )
        b, t = input_ids.shape
        past = len(cache[0]) if cache else 0  # positions already in the cache
        check_length(past + t, self.context)
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, t)
        positions = torch.arange(past, past + t, device=input_ids.device)  # (t,)
        x = self.dropout(self.token_embedding(input_ids) + self.position_embedding(positions))  # (b, t, e)
        weights = []
        for i, block in enumerate(self.blocks):
            extra = {} if cache is None else {"cache": cache[i]}
            if return_attention:
                x, w = block(
                    x, padding_mask=padding_mask, return_attention=True, **extra
                )  # (b, t, e), (b, h, t, t)
                weights.append(w)
            else:
                x = block(x, padding_mask=padding_mask, **extra)  # (b, t, e)
        logits = self.to_logits(self.final_norm(x))  # (b, t, V)
        return (logits, weights) if return_attention else logits


__all__ = ["GPT2", "GPT2Config"]
