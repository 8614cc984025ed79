"""Transformer-XL (Dai et al. 2019): segment recurrence and relative positions (chapter 11).

A plain generator reads a window of ``L`` bytes and forgets everything before it. Transformer-XL
reads the text in consecutive **segments** of ``L`` and keeps, for every layer, the hidden states
of the last ``M`` positions it saw: the **memory**. The next segment's queries attend over
``memory + segment`` keys, so information flows forward from segment to segment, up to about
``depth × M`` positions back. Gradients stop at the memory (it is detached): training still
backpropagates through one segment only.

Absolute positions cannot work here (the same hidden state would sit at position 10 in one
segment and at position -118 in the next), so attention scores use **relative positions**: for
query ``i`` and key ``j`` with offset ``i - j``, sinusoid ``R_{i-j}`` (projected by ``W_r``),
and two learned vectors per head, ``u`` and ``v``:

    score(i, j) = q_i·k_j  +  q_i·W_r R_{i-j}  +  u·k_j  +  v·W_r R_{i-j}
                  (a) content  (b) position    (c) global content  (d) global position

:meth:`RelativeAttention.score_terms` returns the four terms. The memory goes in and comes out
explicitly: ``logits, memory = model(tokens, memory)``; the module keeps no state between calls.

Shape legend: ``b`` batch, ``t`` segment length, ``m`` memory length, ``e`` embedding, ``h`` heads,
``s = e // h``, ``V`` vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.attention.positions import relative_offsets, sinusoidal_encoding
from fromscratch.blocks.feedforward import FeedForward
from fromscratch.models.config import resolve_config
from fromscratch.utils import evaluating

__all__ = [
    "RelativeAttention",
    "TransformerXL",
    "TransformerXLConfig",
    "bits_per_byte_xl",
    "input_gradients",
    "segment_loss",
]

Memory = list[Tensor]  # one (b, m, e) tensor per layer


@dataclass(frozen=True)
class TransformerXLConfig:
    """Sizes of a :class:`TransformerXL` byte model."""

    vocab_size: int = 256  # V: one token per byte value
    emb: int = 256  # e: embedding width
    heads: int = 8  # h: attention heads per layer
    depth: int = 12  # layers
    segment: int = 128  # L: the longest segment (input) in tokens
    memory: int = 128  # M: hidden states kept per layer for the next segment (0: no memory)
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e
    dropout: float = 0.0  # after the embeddings and each sub-layer


class RelativeAttention(nn.Module):
    """Causal multi-head attention over ``memory + segment`` with Dai et al.'s relative scores.

    Queries come from the segment ``x (b, t, e)``; keys and values from ``memory + x``
    ``(b, m + t, e)``. Query ``i`` (position ``m + i``) sees all memory and segment keys ``<= i``.
    """

    def __init__(self, emb: int, heads: int) -> None:
        super().__init__()
        if emb % heads:
            raise ValueError(f"emb={emb} must be divisible by heads={heads}.")
        self.emb, self.heads, self.head_dim = emb, heads, emb // heads
        self.to_queries = nn.Linear(emb, emb, bias=False)
        self.to_keys = nn.Linear(emb, emb, bias=False)
        self.to_values = nn.Linear(emb, emb, bias=False)
        self.to_positions = nn.Linear(emb, emb, bias=False)  # W_r: sinusoid R_{i-j} -> per-head vectors
        self.u = nn.Parameter(torch.zeros(heads, self.head_dim))  # global content bias, one per head
        self.v = nn.Parameter(torch.zeros(heads, self.head_dim))  # global position bias, one per head
        self.unify_heads = nn.Linear(emb, emb)

    def _project(self, x: Tensor, context: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Queries ``(b, h, t, s)``, keys, values ``(b, h, tk, s)``, positions ``(h, tk, s)``, offsets
        ``(t, tk)``.
        """
        (b, t, _), tk = x.shape, context.size(1)
        h, s = self.heads, self.head_dim
        q = self.to_queries(x).view(b, t, h, s).transpose(1, 2)  # (b, h, t, s)
        k = self.to_keys(context).view(b, tk, h, s).transpose(1, 2)  # (b, h, tk, s)
        v = self.to_values(context).view(b, tk, h, s).transpose(1, 2)  # (b, h, tk, s)
        table = sinusoidal_encoding(tk, self.emb).to(x.device, x.dtype)  # (tk, e): R_0 .. R_{tk-1}
        r = self.to_positions(table).view(tk, h, s).transpose(0, 1)  # (h, tk, s): W_r R_δ for δ = 0..tk-1
        return q, k, v, r, relative_offsets(t, tk, x.device)  # offsets (t, tk)

    def score_terms(self, x: Tensor, context: Tensor) -> dict[str, Tensor]:
        """The four terms of the (unscaled) scores, each ``(b, h, t, tk)``; their sum is the score.

        ``context`` = ``memory + x``, ``(b, m + t, e)``. Keys after a query get the terms of offset 0
        (they are masked in :meth:`forward`).
        """
        q, k, _, r, offsets = self._project(x, context)
        index = offsets.clamp(min=0).expand(*q.shape[:2], -1, -1)  # (b, h, t, tk): which R_δ each pair uses
        u, v = self.u[None, :, None, :], self.v[None, :, None, :]  # (1, h, 1, s)
        return {
            "a: content": q @ k.transpose(-2, -1),  # (b, h, t, tk)
            "b: content-position": (q @ r.transpose(-2, -1)).gather(-1, index),  # (b, h, t, tk)
            "c: global content": (u @ k.transpose(-2, -1)).expand_as(index),  # (b, h, t, tk)
            "d: global position": (v @ r.transpose(-2, -1))
            .expand(q.size(0), -1, q.size(2), -1)
            .gather(-1, index),
        }

    def forward(self, x: Tensor, context: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        """x: ``(b, t, e)``; context = ``memory + x``: ``(b, m + t, e)``. Returns ``(b, t, e)``; appends
        the weights ``(b, h, t, m + t)`` to ``attention``."""
        q, k, v, r, offsets = self._project(x, context)
        b, h, t, s = q.shape
        index = offsets.clamp(min=0).expand(b, h, -1, -1)  # (b, h, t, tk)
        content = (q + self.u[None, :, None, :]) @ k.transpose(-2, -1)  # (b, h, t, tk): terms a + c
        position = ((q + self.v[None, :, None, :]) @ r.transpose(-2, -1)).gather(
            -1, index
        )  # (b, h, t, tk): b + d
        scores = (content + position) / math.sqrt(s)  # (b, h, t, tk)
        weights = torch.softmax(scores.masked_fill(offsets < 0, float("-inf")), dim=-1)  # (b, h, t, tk)
        if attention is not None:
            attention.append(weights)
        return self.unify_heads((weights @ v).transpose(1, 2).reshape(b, t, h * s))  # (b, t, e)


class XLLayer(nn.Module):
    """One pre-norm Transformer-XL layer: relative attention over ``memory + x``, then a feed-forward."""

    def __init__(self, emb: int, heads: int, ff_mult: int, dropout: float) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(emb), nn.LayerNorm(emb)
        self.attention = RelativeAttention(emb, heads)
        self.ff = FeedForward(emb, ff_mult, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        """x: ``(b, t, e)``, memory: ``(b, m, e)`` (this layer's inputs at earlier positions). Returns
        ``(b, t, e)``; ``attention`` gets the ``(b, h, t, m + t)`` weights.
        """
        context = self.norm1(torch.cat([memory, x], dim=1))  # (b, m + t, e)
        attended = self.attention(context[:, memory.size(1) :], context, attention=attention)  # (b, t, e)
        x = x + self.dropout(attended)  # (b, t, e)
        return x + self.dropout(self.ff(self.norm2(x)))  # (b, t, e)


class TransformerXL(nn.Module):
    """A Transformer-XL byte model: ``logits, memory = model(tokens, memory)`` (chapter 11).

    ``TransformerXL(config, **fields)`` as every model of the course (:class:`TransformerXLConfig`).
    """

    def __init__(self, config: TransformerXLConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(TransformerXLConfig, config, fields)
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.dropout = nn.Dropout(c.dropout)
        self.layers = nn.ModuleList(XLLayer(c.emb, c.heads, c.ff_mult, c.dropout) for _ in range(c.depth))
        self.final_norm = nn.LayerNorm(c.emb)
        self.to_logits = nn.Linear(c.emb, c.vocab_size)

    def empty_memory(self, b: int, device: torch.device | str | None = None) -> Memory:
        """No memory yet: one ``(b, 0, e)`` tensor per layer."""
        return [torch.zeros(b, 0, self.config.emb, device=device) for _ in self.layers]

    def _check(self, x: Tensor, memory: Memory) -> None:
        b, t, e = x.shape
        if t > self.config.segment:
            raise ValueError(
                f"The segment has shape (b, t) = {(b, t)}, longer than segment={self.config.segment} tokens; "
                f"cut the text into segments of {self.config.segment}."
            )
        if len(memory) != len(self.layers) or any(m.dim() != 3 or m.shape[::2] != (b, e) for m in memory):
            raise ValueError(
                f"memory of shapes {[tuple(m.shape) for m in memory]} does not fit segments of shape "
                f"(b, t, e) = {(b, t, e)}: it must be one tensor per layer ({len(self.layers)}), each "
                f"(b, m, e) = ({b}, m, {e}), from a model of the same width and the same batch."
            )

    def from_embeddings(
        self,
        x: Tensor,
        memory: Memory | None = None,
        *,
        keep: int | None = None,
        stop_gradient: bool = True,
        attention: list[Tensor] | None = None,
    ) -> tuple[Tensor, Memory]:
        """Run the layers on embedded inputs ``x (b, t, e)``. Returns the final hidden states
        ``(b, t, e)`` and the new memory: per layer, the last ``keep`` (default ``config.memory``) of
        ``memory + this segment``'s layer inputs, detached unless ``stop_gradient=False`` (analysis only).
        ``attention`` gets one ``(b, h, t, m + t)`` weight tensor per layer."""
        memory = self.empty_memory(x.size(0), x.device) if memory is None else memory
        self._check(x, memory)
        keep = self.config.memory if keep is None else keep
        new_memory = []
        for layer, mem in zip(self.layers, memory, strict=True):
            kept = (
                torch.cat([mem, x], dim=1)[:, max(0, mem.size(1) + x.size(1) - keep) :] if keep else x[:, :0]
            )
            new_memory.append(kept.detach() if stop_gradient else kept)  # (b, <= keep, e)
            x = layer(x, mem, attention=attention)  # (b, t, e)
        return self.final_norm(x), new_memory

    def forward(
        self,
        tokens: Tensor,
        memory: Memory | None = None,
        *,
        keep: int | None = None,
        stop_gradient: bool = True,
        attention: list[Tensor] | None = None,
    ) -> tuple[Tensor, Memory]:
        """tokens: int ``(b, t)`` with ``t <= segment``; memory: the previous call's, or None at the
        start of a text. Returns next-byte logits ``(b, t, V)`` and the memory for the next segment;
        ``attention`` gets one ``(b, h, t, m + t)`` weight tensor per layer."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (b, t), got {tuple(tokens.shape)}.")
        x = self.dropout(self.token_embedding(tokens))  # (b, t, e)
        hidden, memory = self.from_embeddings(
            x, memory, keep=keep, stop_gradient=stop_gradient, attention=attention
        )
        return self.to_logits(hidden), memory  # (b, t, V), per layer (b, <= keep, e)


def segment_loss(model: TransformerXL, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Mean bits per byte over consecutive segments, memory carried from one to the next.

    batch: ``(inputs, targets)``, both ``(b, n·L)`` with ``L = model.config.segment`` (a
    :class:`~fromscratch.data.enwik8.RandomSubsequences` batch of ``context = n·L``). The first
    segment starts without memory; gradients stop at the memory. The signature of the course's
    losses, for :func:`fromscratch.training.train`.
    """
    inputs, targets = batch
    memory, total = None, 0.0
    segments = inputs.split(model.config.segment, dim=1)
    for x, y in zip(segments, targets.split(model.config.segment, dim=1), strict=True):
        logits, memory = model(x, memory)  # (b, L, V)
        total = total + F.cross_entropy(logits.transpose(1, 2), y)
    return total / len(segments) / math.log(2)


def input_gradients(model: TransformerXL, tokens: Tensor, *, stop_gradient: bool = True) -> Tensor:
    """How much the prediction at the last position depends on each input byte: ``(n·L,)`` norms.

    tokens: ``(1, n·L)``, read as ``n`` consecutive segments with memory. The gradient of the last
    position's largest logit with respect to every input embedding; with ``stop_gradient=True``
    (training's rule) it is zero before the last segment, with False it shows how far the memory
    actually reaches back (about ``depth × M`` positions).
    """
    tokens = tokens.to(model.token_embedding.weight.device)  # the model's device, as a chapter leaves it
    x = model.token_embedding(tokens).detach().requires_grad_(True)  # (1, n·L, e)
    memory, hidden = None, None
    for part in x.split(model.config.segment, dim=1):
        hidden, memory = model.from_embeddings(part, memory, stop_gradient=stop_gradient)
    (grad,) = torch.autograd.grad(model.to_logits(hidden[:, -1]).max(), x)  # (1, n·L, e); no .grad kept
    return grad[0].norm(dim=-1)  # (n·L,)


@torch.no_grad()
def bits_per_byte_xl(
    model: TransformerXL,
    data: Tensor,
    *,
    memory: int | None = None,
    streams: int = 8,
    device: torch.device | str | None = None,
    max_bytes: int | None = None,
) -> float:
    """Bits per byte of a Transformer-XL on a held-out byte stream, memory carried across segments.

    ``data`` (its first ``max_bytes``) is cut into ``streams`` equal consecutive parts, read side by
    side segment after segment; every byte of a part after its first is predicted once. ``memory``:
    how many positions each layer keeps (default ``config.memory``; 0 evaluates without memory, and
    a value above the training memory asks how much a longer memory helps).
    """
    data = data[:max_bytes] if max_bytes is not None else data
    per = (len(data) - 1) // streams  # predicted bytes per stream
    if data.dim() != 1 or per < 1:
        raise ValueError(
            f"data must be a 1-d stream of more than {streams} bytes, got shape {tuple(data.shape)}."
        )
    device = device if device is not None else next(model.parameters()).device
    starts = torch.arange(streams)[:, None] * per  # (streams, 1)
    inputs = data[starts + torch.arange(per)].long().to(device)  # (streams, per)
    targets = data[starts + 1 + torch.arange(per)].long().to(device)  # (streams, per)
    state, nats, L = None, 0.0, model.config.segment
    with evaluating(model):
        for x, y in zip(inputs.split(L, 1), targets.split(L, 1), strict=True):
            logits, state = model(x, state, keep=memory)  # (streams, L, V)
            nats += F.cross_entropy(logits.float().transpose(1, 2), y, reduction="sum").item()
    return nats / (streams * per) / math.log(2)
