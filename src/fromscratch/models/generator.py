"""A causal language model over bytes (chapter 07): predict every next byte of a sequence.

tokens ``(b, t)`` -> byte embeddings + learned positions -> ``depth`` blocks whose attention lets
position ``i`` see positions ``0..i`` only -> next-byte logits ``(b, t, V)``, where ``logits[:, i]``
scores the byte at position ``i + 1``. ``GeneratorConfig()``'s defaults are the blog's enwik8 model.
Chapter 11's variants (other positions, sparse attention, a KV cache) are
:mod:`fromscratch.models.long_context`.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.attention.positions import check_tokens
from fromscratch.blocks.transformer import StackConfig, TransformerStack
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
    norm: str = "post"  # "post": normalise after each residual sum (blog), "pre": before each sub-layer
    checkpoint: bool = False  # recompute each block in the backward pass: less memory, more time (ch. 12)


class Generator(nn.Module):
    """A causal language model over bytes (chapter 07): ``Generator(config, **fields)``.

    Keyword arguments replace fields of ``config`` (of ``GeneratorConfig()``, the blog's model, when
    none is given); ``model.config`` is the result. E.g. chapter 07's model without the mask:
    ``Generator(prof.ch07.model, context=16, causal=False)``.
    """

    def __init__(self, config: GeneratorConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(GeneratorConfig, config, fields)
        self.vocab_size, self.context = c.vocab_size, c.context
        self.stack = TransformerStack(StackConfig.of(c))
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def forward(self, tokens: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        """tokens int ``(b, t)``, ``t <= context`` -> logits ``(b, t, V)``. ``attention``: a list that
        gets one ``(b, h, t, t)`` weight tensor per block (zero above the diagonal when causal)."""
        check_tokens(tokens, self.context, self.vocab_size)
        return self.to_logits(self.stack(tokens, attention=attention))  # (b, t, V)
