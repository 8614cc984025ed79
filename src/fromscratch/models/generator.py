"""A causal language model over bytes (chapter 07): predict every next byte of a sequence.

tokens ``(b, t)`` -> byte embeddings + learned positions -> ``depth`` blocks whose attention lets
position ``i`` see positions ``0..i`` only -> next-byte logits ``(b, t, V)``, where ``logits[:, i]``
scores the byte at position ``i + 1``. ``GeneratorConfig()``'s defaults are the blog's enwik8 model.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from fromscratch.blocks import TransformerStack
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
    norm: str = "post"  # "post": normalise after each residual sum (blog), "pre": before each sub-layer (GPT-2)
    kind: str = "standard"  # multi-head attention form: "standard", "wide" or "narrow" (chapter 04)


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
        self.stack = TransformerStack(
            vocab_size=c.vocab_size,
            emb=c.emb,
            heads=c.heads,
            depth=c.depth,
            max_len=c.context,
            positions="embedding",
            ff_mult=c.ff_mult,
            dropout=c.dropout,
            norm=c.norm,
            causal=c.causal,
            kind=c.kind,
        )
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def forward(self, tokens: torch.Tensor, *, return_attention: bool = False):
        """tokens: int ``(b, t)`` with ``t <= context``. Returns logits ``(b, t, V)``, or
        ``(logits, weights)`` with a list of ``depth`` tensors ``(b, h, t, t)`` when
        ``return_attention=True`` (zero above the diagonal when causal)."""
        if tokens.dim() != 2:
            raise ValueError(
                f"tokens must have shape (b, t), got {tuple(tokens.shape)}; add a batch dimension with tokens[None]."
            )
        if tokens.size(1) > self.context:
            raise ValueError(
                f"The input has {tokens.size(1)} tokens but this generator's context is {self.context}. "
                f"Crop it to its last {self.context} tokens (tokens[:, -{self.context}:])."
            )
        out = self.stack(tokens, return_attention=return_attention)
        x, weights = out if return_attention else (out, None)  # x: (b, t, e)
        logits = self.to_logits(x)  # (b, t, V)
        return (logits, weights) if return_attention else logits
