"""A causal language model over bytes (chapter 07): predict every next byte of a sequence.

tokens ``(b, t)`` -> byte embeddings + learned positions -> ``depth`` blocks whose attention lets
position ``i`` see positions ``0..i`` only -> next-byte logits ``(b, t, V)``, where ``logits[:, i]``
scores the byte at position ``i + 1``. ``GeneratorConfig()``'s defaults are the blog's enwik8 model.

Chapter 11 adds options, all off by default: ``positions`` ("sinusoidal", "rope", "alibi" besides
the blog's "learned"), a sparse attention pattern (``sparsity``), and a key-value cache for
generation (``forward(..., cache=model.new_cache())``, used by :mod:`fromscratch.generate`).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from fromscratch.attention import KVCache
from fromscratch.attention.sparse import PATTERNS, sparse_mask
from fromscratch.blocks import POSITIONS, TransformerStack
from fromscratch.models.config import resolve_config


@dataclass(frozen=True)
class GeneratorConfig:
    """Sizes and options of a :class:`Generator`; the defaults are the blog's enwik8 model."""

    vocab_size: int = 256  # V: one token per byte value
    emb: int = 256  # e: embedding width (blog: 256)
    heads: int = 8  # h: attention heads per block (blog: 8)
    depth: int = 12  # transformer blocks (blog: 12)
    context: int = 256  # longest input in bytes, and the number of learned positions (blog: 256)
    causal: bool = True  # hide later positions; False only for chapter 07's "no mask" experiment
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e (blog: 4)
    dropout: float = 0.0  # after the embeddings and each sub-layer (blog: 0.0)
    norm: str = (
        "post"  # "post": normalise after each residual sum (blog), "pre": before each sub-layer (GPT-2)
    )
    kind: str = "standard"  # multi-head attention form: "standard", "wide" or "narrow" (chapter 04)
    positions: str = "learned"  # "learned" (blog), "sinusoidal"; "rope", "alibi", "t5", "none" (ch. 11)
    sparsity: str | None = None  # None: dense attention; "strided" or "fixed": a sparse pattern (chapter 11)
    sparse_block: int = 16  # block (stride) l of the sparse pattern; only used with sparsity
    checkpoint: bool = False  # recompute each block in the backward pass: less memory, more time (chapter 12)


class Generator(nn.Module):
    """A causal language model over bytes (chapter 07), built from a :class:`GeneratorConfig`.

    ``Generator(config, **fields)``: keyword arguments replace fields of ``config`` (of
    ``GeneratorConfig()``, the blog's model, when no config is given); ``model.config`` is the result.
    E.g. chapter 07's experiment without the mask: ``Generator(prof.enwik8.model, context=16, causal=False)``:
    the model can then read the byte it is asked to predict, and learns to copy it.

    ``context`` is the longest input; longer inputs raise a ValueError (crop them to their last
    ``context`` bytes, as :mod:`fromscratch.generate` does).
    """

    def __init__(self, config: GeneratorConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(GeneratorConfig, config, fields)
        self.vocab_size, self.context, self.causal = c.vocab_size, c.context, c.causal
        if c.positions is None:  # the stack would take it for "none"; say so explicitly
            raise ValueError(
                f'positions must be one of {", ".join(p for p in POSITIONS if p)} ("none": NoPE); got None.'
            )
        if c.sparsity is not None and c.sparsity not in PATTERNS:
            raise ValueError(
                f"sparsity must be None (dense) or one of {', '.join(PATTERNS)}; got {c.sparsity!r}."
            )
        self.stack = TransformerStack(
            vocab_size=c.vocab_size,
            emb=c.emb,
            heads=c.heads,
            depth=c.depth,
            max_len=c.context,
            positions=c.positions,
            ff_mult=c.ff_mult,
            dropout=c.dropout,
            norm=c.norm,
            causal=c.causal,
            kind=c.kind,
            checkpoint=c.checkpoint,
        )
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def forward(
        self, tokens: torch.Tensor, *, return_attention: bool = False, cache: list[KVCache] | None = None
    ):
        """tokens: int ``(b, t)`` with ``t <= context``. Returns logits ``(b, t, V)``, or
        ``(logits, weights)`` with a list of ``depth`` tensors ``(b, h, t, t)`` when
        ``return_attention=True`` (zero above the diagonal when causal).

        ``cache`` (chapter 11): the list :meth:`new_cache` made, filled by earlier calls; ``tokens``
        are then the positions that follow the cached ones (``len(cache[0]) + t <= context``), and
        the logits are those of these positions, as if the whole sequence had been given at once."""
        if tokens.dim() != 2:
            raise ValueError(
                f"tokens must have shape (b, t), got {tuple(tokens.shape)}; "
                "add a batch dimension with tokens[None]."
            )
        past = len(cache[0]) if cache else 0  # positions already in the cache
        if past + tokens.size(1) > self.context:
            raise ValueError(
                f"The input has {past} cached + {tokens.size(1)} new tokens but this generator's context is "
                f"{self.context}. Crop it to its last {self.context} tokens (tokens[:, -{self.context}:]), "
                f"with a fresh cache."
            )
        attn_mask = None
        if self.config.sparsity is not None:  # the teaching form: a boolean pattern over all t² pairs
            tk = past + tokens.size(1)
            pattern = sparse_mask(self.config.sparsity, tk, self.config.sparse_block)  # (tk, tk)
            attn_mask = pattern[past:].to(tokens.device)  # (t, tk): the rows of the new positions
        out = self.stack(tokens, return_attention=return_attention, cache=cache, attn_mask=attn_mask)
        x, weights = out if return_attention else (out, None)  # x: (b, t, e)
        logits = self.to_logits(x)  # (b, t, V)
        return (logits, weights) if return_attention else logits

    def new_cache(self) -> list[KVCache]:
        """An empty key-value cache, one :class:`~fromscratch.attention.KVCache` per block (chapter 11)."""
        return self.stack.new_cache()
