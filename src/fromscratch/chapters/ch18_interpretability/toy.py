"""Chapter 18's two-layer attention-only transformer and its data: random tokens whose segments repeat.

:class:`AttentionOnly` is chapter 04's :class:`~fromscratch.attention.SelfAttention` stacked with residual
connections and nothing else (no feed-forward, no norm inside the blocks), as in Elhage et al.'s
"mathematical framework": every path from a token to the logits goes through attention heads, so what the
model learns is what its heads do. Its parts are named as the course's decoders name them
(``blocks.1.attention``, ``final_norm``, ``to_logits``), so :func:`~fromscratch.interp.record`,
:func:`~fromscratch.interp.patch` and the per-head hooks work on it unchanged.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.attention import SelfAttention
from fromscratch.attention.positions import check_tokens

__all__ = ["AttentionOnly", "AttentionOnlyConfig", "AttentionBlock", "periodic_tokens", "position_losses"]


@dataclass(frozen=True)
class AttentionOnlyConfig:
    vocab_size: int  # V: random tokens, no specials
    context: int  # the longest input (learned positions)
    emb: int  # e, the residual stream's width
    heads: int  # h per layer
    depth: int  # attention layers

    def __post_init__(self) -> None:
        if self.emb % self.heads:
            raise ValueError(f"emb={self.emb} must be a multiple of heads={self.heads}.")


class AttentionBlock(nn.Module):
    """``x + attention(x)``: a residual block with causal attention and nothing else."""

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        self.attention = SelfAttention(emb, heads, causal=True)

    def forward(self, x: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        return x + self.attention(x, attention=attention)  # (b, t, e)


class AttentionOnly(nn.Module):
    """Token and learned position embeddings, ``depth`` attention blocks, a final LayerNorm, the output
    layer: ``forward(tokens (b, t), attention=None)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: AttentionOnlyConfig) -> None:
        super().__init__()
        self.config = c = config
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.position_embedding = nn.Embedding(c.context, c.emb)
        self.blocks = nn.ModuleList(AttentionBlock(c.emb, c.heads) for _ in range(c.depth))
        self.final_norm = nn.LayerNorm(c.emb)
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def forward(self, tokens: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        check_tokens(tokens, self.config.context, self.config.vocab_size)
        t = tokens.size(1)
        x = self.token_embedding(tokens) + self.position_embedding.weight[:t]  # (b, t, e)
        for block in self.blocks:
            x = block(x, attention=attention)  # (b, t, e)
        return self.to_logits(self.final_norm(x))  # (b, t, V)


def periodic_tokens(
    batch: int, length: int, vocab_size: int, min_period: int, *, generator: torch.Generator
) -> Tensor:
    """Training sequences ``(batch, length)``: each row a random segment repeated over and over, its period
    drawn in ``min_period .. length // 2``. The first pass through a segment cannot be predicted; every
    later token can, by looking back one period: only a head that finds the previous occurrence of the
    current token (an induction head) can, since the period changes from row to row."""
    if not 2 <= min_period <= length // 2:
        raise ValueError(f"min_period must be in 2..length // 2 = {length // 2}; got {min_period}.")
    period = torch.randint(min_period, length // 2 + 1, (batch, 1), generator=generator)  # (b, 1)
    segment = torch.randint(0, vocab_size, (batch, length), generator=generator)  # (b, t): first p used
    return segment.gather(1, torch.arange(length)[None, :] % period)  # (b, t)


def position_losses(logits: Tensor, tokens: Tensor) -> Tensor:
    """The next-token loss at every position, averaged over the batch: logits ``(b, t, V)``, tokens
    ``(b, t)`` -> ``(t - 1,)``, entry ``i`` the loss of predicting token ``i + 1``."""
    losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")  # (b, t - 1)
    return losses.mean(dim=0)  # (t - 1,)
