"""Whole models assembled from the blocks: a classifier (chapter 06) and a generator (chapter 07).

Both take token ids ``(b, t)`` and can return the attention weights of every layer
(``return_attention=True``: a list with one ``(b, h, t, t)`` tensor per block).
"""

from __future__ import annotations

import torch
from torch import nn

# --- Classifier (chapter 06) -----------------------------------------------------------------------
from fromscratch.blocks import TransformerStack  # noqa: E402  (this section's own imports)

POOLINGS = ("mean", "cls")


class Classifier(nn.Module):
    """A sequence classifier (chapter 06): a transformer stack, a pooled summary, a linear layer.

    tokens ``(b, t)`` -> embeddings + positions -> ``depth`` blocks -> one vector per sequence ->
    ``num_classes`` logits. pooling="mean": the average of the output vectors of the real tokens
    (the blog's choice; padding is left out). pooling="cls": the output vector at position 0, where
    the data put a ``<cls>`` token (``ReviewBatches(..., cls=True)``), as BERT does.

    Padding-aware: positions where ``mask`` is False are hidden from attention and left out of the
    mean. Without a mask, positions holding ``pad_id`` are treated as padding (``pad_id=None``:
    every position is real). Other arguments go to :class:`~fromscratch.blocks.TransformerStack`.
    """

    def __init__(self, vocab_size: int, num_classes: int, emb: int, heads: int, depth: int, max_len: int,
                 pooling: str = "mean", positions: str | None = "embedding", *, ff_mult: int = 4,
                 dropout: float = 0.0, norm: str = "post", kind: str = "standard", pad_id: int | None = 0) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be 'mean' (average the outputs) or 'cls' (the output at position 0); "
                             f"got {pooling!r}.")
        self.pooling, self.pad_id = pooling, pad_id
        self.stack = TransformerStack(vocab_size, emb, heads, depth, max_len, positions=positions, ff_mult=ff_mult,
                                      dropout=dropout, norm=norm, kind=kind)
        self.to_logits = nn.Linear(emb, num_classes)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor | None = None, return_attention: bool = False):
        """tokens: int ``(b, t)``; mask: bool ``(b, t)``, True at real tokens (None: ``tokens != pad_id``).

        Returns logits ``(b, num_classes)``, or ``(logits, weights)`` with a list of ``depth``
        attention tensors ``(b, h, t, t)`` when ``return_attention=True``.
        """
        if mask is None and self.pad_id is not None:
            mask = tokens != self.pad_id  # (b, t)
        if mask is not None and mask.shape != tokens.shape:
            raise ValueError(f"mask must be a (b, t) key-padding mask like tokens {tuple(tokens.shape)}, "
                             f"got {tuple(mask.shape)}.")
        out = self.stack(tokens, mask, return_attention=return_attention)
        x, weights = out if return_attention else (out, None)  # x: (b, t, e)
        if self.pooling == "cls":
            summary = x[:, 0]  # (b, e)
        elif mask is None:
            summary = x.mean(dim=1)  # (b, e)
        else:
            keep = mask[..., None].to(x.dtype)  # (b, t, 1)
            summary = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)  # (b, e)
        logits = self.to_logits(summary)  # (b, num_classes)
        return (logits, weights) if return_attention else logits



# --- Generator (chapter 07) ------------------------------------------------------------------------
import fromscratch.profiles  # noqa: E402  (this section's own imports)
from fromscratch.blocks import TransformerStack  # noqa: E402,F811


class Generator(nn.Module):
    """A causal language model over bytes (chapter 07): predict every next byte of a sequence.

    tokens ``(b, t)`` -> byte embeddings + learned positions -> ``depth`` blocks whose attention
    lets position ``i`` see positions ``0..i`` only -> next-byte logits ``(b, t, V)``, where
    ``logits[:, i]`` scores the byte at position ``i + 1``. The blog's model is ``emb=256,
    heads=8, depth=12, context=256`` with post-norm blocks.

    ``causal=False`` removes the mask, for chapter 07's experiment: the model can then read the
    byte it is asked to predict, and learns to copy it instead of learning language.
    ``context`` is the longest input; longer inputs raise a ValueError (crop them to their last
    ``context`` bytes, as :mod:`fromscratch.generate` does).
    """

    def __init__(self, vocab_size: int = 256, emb: int = 256, heads: int = 8, depth: int = 12, context: int = 256,
                 *, causal: bool = True, ff_mult: int = 4, dropout: float = 0.0, norm: str = "post",
                 kind: str = "standard") -> None:
        super().__init__()
        self.vocab_size, self.context, self.causal = vocab_size, context, causal
        self.stack = TransformerStack(vocab_size, emb, heads, depth, context, positions="embedding",
                                      ff_mult=ff_mult, dropout=dropout, norm=norm, causal=causal, kind=kind)
        self.to_logits = nn.Linear(emb, vocab_size)

    @classmethod
    def from_profile(cls, size: fromscratch.profiles.Enwik8Size, **overrides) -> Generator:
        """The generator of a run profile's sizes: ``Generator.from_profile(prof.enwik8)``.

        ``overrides`` replace sizes or add options, e.g. ``context=16, causal=False``.
        """
        options = dict(emb=size.emb, heads=size.heads, depth=size.depth, context=size.context)
        return cls(256, **{**options, **overrides})

    def forward(self, tokens: torch.Tensor, return_attention: bool = False):
        """tokens: int ``(b, t)`` with ``t <= context``. Returns logits ``(b, t, V)``, or
        ``(logits, weights)`` with a list of ``depth`` tensors ``(b, h, t, t)`` when
        ``return_attention=True`` (zero above the diagonal when causal)."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (b, t), got {tuple(tokens.shape)}; "
                             f"add a batch dimension with tokens[None].")
        if tokens.size(1) > self.context:
            raise ValueError(f"The input has {tokens.size(1)} tokens but this generator's context is {self.context}. "
                             f"Crop it to its last {self.context} tokens (tokens[:, -{self.context}:]).")
        out = self.stack(tokens, return_attention=return_attention)
        x, weights = out if return_attention else (out, None)  # x: (b, t, e)
        logits = self.to_logits(x)  # (b, t, V)
        return (logits, weights) if return_attention else logits
