"""The transformer block, and a stack of blocks that knows word order (chapter 05).

A block wraps self-attention and a position-wise feed-forward, each with a residual connection and
a LayerNorm (over the embedding only). The blog's order is **post-norm**; **pre-norm** (GPT-2 and
most models since) normalises each sub-layer's input instead, and a final norm ends the stack::

    post:  x = norm1(x + attention(x));   x = norm2(x + feedforward(x))
    pre:   x = x + attention(norm1(x));   x = x + feedforward(norm2(x))

Attention and the feed-forward are *permutation equivariant*; a position vector added to each token
embedding lets a model see word order: learned (the blog's) or sinusoidal (Vaswani et al.).
:class:`TransformerStack` is the shared body of the classifier (ch. 06) and the generator (ch. 07).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch
import torch.utils.checkpoint
from torch import Tensor, nn

from fromscratch.attention.core import SelfAttention
from fromscratch.attention.positions import PositionEmbedding, PositionEncoding, check_length
from fromscratch.blocks.feedforward import FeedForward

__all__ = ["StackConfig", "TransformerBlock", "TransformerStack"]


class TransformerBlock(nn.Module):
    """Self-attention and a feed-forward, each with a residual connection and a LayerNorm (chapter 05).

    ``norm``: ``"post"`` (the blog) or ``"pre"``. Dropout, if any, hits each sub-layer's output before
    the residual sum. ``causal``, ``qkv_bias`` go to :class:`SelfAttention`, ``activation`` to
    :class:`FeedForward` (BERT: ``qkv_bias=True, activation="gelu"``).
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
        qkv_bias: bool = False,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if norm not in ("post", "pre"):
            raise ValueError(f"norm must be 'post' (the blog's block) or 'pre' (GPT-2's); got {norm!r}.")
        self.norm = norm
        self.attention = SelfAttention(emb, heads, causal=causal, qkv_bias=qkv_bias)
        self.norm1 = nn.LayerNorm(emb)
        self.norm2 = nn.LayerNorm(emb)
        self.ff = FeedForward(emb, ff_mult, dropout, activation=activation)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``; masks and ``attention`` (a list the ``(b, h, t, t)``
        weights are appended to) go to :class:`SelfAttention`."""
        masks = dict(padding_mask=padding_mask, attn_mask=attn_mask, attention=attention)
        if self.norm == "post":
            x = self.norm1(x + self.dropout(self.attention(x, **masks)))  # (b, t, e)
            return self.norm2(x + self.dropout(self.ff(x)))  # (b, t, e)
        x = x + self.dropout(self.attention(self.norm1(x), **masks))  # (b, t, e)
        return x + self.dropout(self.ff(self.norm2(x)))  # (b, t, e)


@dataclass(frozen=True)
class StackConfig:
    """Sizes and options of a :class:`TransformerStack`; the defaults are the blog's."""

    vocab_size: int  # V: token ids are 0..V-1
    emb: int  # e: embedding width
    heads: int  # h: attention heads per block
    depth: int  # number of blocks
    context: int  # longest input, and the number of position vectors
    positions: str | None = "learned"  # "learned" (the blog), "sinusoidal" (Vaswani et al.) or None
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e
    dropout: float = 0.0  # after the embeddings and each sub-layer
    norm: str = "post"  # "post" (the blog) or "pre" (then a final LayerNorm ends the stack)
    causal: bool = False  # each position sees only itself and earlier ones (ch. 07)
    checkpoint: bool = False  # recompute each block in the backward pass: less memory (ch. 12)

    def __post_init__(self) -> None:
        if self.positions not in ("learned", "sinusoidal", None):
            raise ValueError(f"positions must be 'learned', 'sinusoidal' or None; got {self.positions!r}.")

    @classmethod
    def of(cls, config) -> StackConfig:
        """The stack's fields of a model's config (a ``GeneratorConfig``, ``ClassifierConfig``, ...), read by
        name; a field the model's config lacks keeps its default here."""
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls) if hasattr(config, f.name)})


class TransformerStack(nn.Module):
    """Token embedding + positions + ``depth`` blocks: ids ``(b, t)`` -> vectors ``(b, t, e)`` (ch. 05).

    ``TransformerStack(config, **fields)`` or ``TransformerStack(vocab_size=..., emb=..., heads=...,
    depth=..., context=...)``: keyword arguments replace fields of ``config`` (a :class:`StackConfig`).
    Without positions (``positions=None``) a non-causal stack is permutation equivariant. With
    ``checkpoint=True`` (chapter 12), while training, each block keeps only its input and runs again
    in the backward pass (``torch.utils.checkpoint``): the same gradients, less memory.
    """

    def __init__(self, config: StackConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = replace(config, **fields) if config is not None else StackConfig(**fields)
        self.context, self.checkpoint = c.context, c.checkpoint
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        if c.positions == "learned":
            self.positions = PositionEmbedding(c.context, c.emb)
        elif c.positions == "sinusoidal":
            self.positions = PositionEncoding(c.context, c.emb)
        else:
            self.positions = None
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.emb, c.heads, ff_mult=c.ff_mult, dropout=c.dropout, norm=c.norm, causal=c.causal
            )
            for _ in range(c.depth)
        )
        self.final_norm = nn.LayerNorm(c.emb) if c.norm == "pre" else nn.Identity()

    def forward(
        self,
        tokens: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tokens int ``(b, t)``, ``t <= context`` -> ``(b, t, e)``. Masks and ``attention`` go to every
        block (one ``(b, h, t, t)`` tensor appended per block)."""
        check_length(tokens.size(1), self.context)
        x = self.token_embedding(tokens)  # (b, t, e)
        if self.positions is not None:
            x = self.positions(x)  # (b, t, e): + the vectors of positions 0..t-1
        x = self.dropout(x)
        masks = dict(padding_mask=padding_mask, attn_mask=attn_mask)
        for block in self.blocks:
            if self.checkpoint and self.training and torch.is_grad_enabled():
                weights = None if attention is None else []  # the backward pass's rerun appends here too
                run = torch.utils.checkpoint.checkpoint
                x = run(block, x, **masks, attention=weights, use_reentrant=False)  # (b, t, e)
                if attention is not None:
                    attention.extend(weights)  # only the forward pass's (b, h, t, t)
            else:
                x = block(x, **masks, attention=attention)  # (b, t, e)
        return self.final_norm(x)  # (b, t, e)
