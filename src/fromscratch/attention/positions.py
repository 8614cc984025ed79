"""Where a token sits: position vectors added to the embeddings (chapter 05), and positions that
live inside attention, rotary embeddings (RoPE) and ALiBi (chapter 11).

Chapter 05 gives each token a position vector *added to its embedding*, learned
(:class:`PositionEmbedding`) or sinusoidal (:class:`PositionEncoding`, built from
:func:`sinusoidal_encoding`). Two later schemes act on the attention scores
instead, and make them depend on the *offset* ``i - j`` between a query and a key, not on where
the pair sits in the sequence:

- **RoPE** (Su et al. 2021): rotate every pair of coordinates ``(2m, 2m+1)`` of a query or key at
  position ``p`` by the angle ``p · θ_m`` with ``θ_m = base^(-2m/d)``. A rotation keeps the norm,
  and ``rot(q, i) · rot(k, j) = q · rot(k, j - i)``: the score sees only the offset.
- **ALiBi** (Press et al. 2022): no position vectors at all. Head ``n`` adds ``-m_n · (i - j)`` to
  the score of query ``i`` and key ``j``, a penalty growing with distance, with fixed slopes
  ``m_n`` forming a geometric sequence (``2^-1 … 2^-8`` for 8 heads). Trained on short inputs, it
  keeps working on longer ones.

Chapter 11's generator (:mod:`fromscratch.models.long_context`) and the Llama take them in their
attention: a :class:`RotaryEmbedding` turns queries and keys, :func:`alibi_bias` is added to the
scores. :func:`relative_offsets` is the one ``(tq, tk)`` table of offsets both (and Transformer-XL,
:mod:`fromscratch.models.transformer_xl`) are built on.

Chapter 13 gives each image patch (cut by :func:`~fromscratch.models.vision.patchify`) a learned
position on the 2-D grid (:class:`GridPositionEmbedding`): a row vector plus a column vector.

Shape legend: ``b`` batch, ``h`` heads, ``t`` length (``tq`` queries, ``tk`` keys), ``d`` head width,
``n`` patches.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


# --- added to the embeddings (chapter 05) -----------------------------------------------------------
def check_length(t: int, context: int) -> None:
    """Raise a ValueError saying the limit when a sequence of ``t`` positions exceeds ``context``."""
    if t > context:
        raise ValueError(
            f"The sequence has {t} positions but the model takes at most context={context}. Crop the input "
            f"to its last {context} tokens (tokens[:, -{context}:]), or build the model with context >= {t}."
        )


def check_tokens(tokens: Tensor, context: int, vocab_size: int, past: int = 0) -> None:
    """A model's door: ``tokens`` int ``(b, t)``, ids in ``0 .. vocab_size - 1``, and ``past + t <= context``
    (``past``: positions already in a KV cache). A ValueError that says what to do otherwise. The ids are
    checked on the CPU only: reading them back from a GPU would stall every step (there an id out of range
    stops the kernel with a device-side assert instead)."""
    if tokens.dim() != 2:
        raise ValueError(
            f"tokens must be (b, t), got shape {tuple(tokens.shape)}; add a batch dimension: tokens[None]."
        )
    if tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
        raise ValueError(f"tokens must hold integer ids, got {tokens.dtype}; convert with tokens.long().")
    if tokens.device.type == "cpu" and tokens.numel():
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(
                f"tokens holds the id {low if low < 0 else high}, outside the vocabulary "
                f"0..{vocab_size - 1}. Encode the text with this model's tokenizer, or build the model "
                f"with vocab_size > {high}."
            )
    t = tokens.size(1)
    if past and past + t > context:
        raise ValueError(
            f"The input has {past} cached + {t} new positions but the model takes at most context={context}: "
            f"crop it to its last {context} tokens (tokens[:, -{context}:]) and start with a fresh cache."
        )
    check_length(t, context)


def sinusoidal_encoding(context: int, emb: int) -> Tensor:
    """The fixed position vectors of Vaswani et al. (2017): a ``(context, e)`` tensor with

    ``P[p, 2i] = sin(p / 10000^(2i/e))`` and ``P[p, 2i+1] = cos(p / 10000^(2i/e))``.
    Each pair of dimensions is a clock turning at its own speed, from one turn every 2π positions
    (``i = 0``) down to one turn every 2π·10000^((e-2)/e) positions (the last pair, ``2i = e - 2``;
    just under 2π·10000 for large ``e``).
    """
    position = torch.arange(context, dtype=torch.float32)[:, None]  # (context, 1)
    rate = torch.exp(-math.log(10_000.0) * torch.arange(0, emb, 2, dtype=torch.float32) / emb)  # (ceil(e/2),)
    angle = position * rate  # (context, ceil(e/2))
    table = torch.zeros(context, emb)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : emb // 2])
    return table  # (context, e)


class PositionEmbedding(nn.Module):
    """Learned position vectors (the blog's choice): one trained ``e``-vector per position.

    ``forward(x)`` adds the vectors of positions ``0..t-1`` to ``x (b, t, e)``. Positions never seen
    in training stay at their random initial value, and ``t > context`` is an error.
    """

    def __init__(self, context: int, emb: int) -> None:
        super().__init__()
        self.context = context
        self.embedding = nn.Embedding(context, emb)

    def positions(self, t: int) -> Tensor:
        """The vectors of positions ``0..t-1``: ``(t, e)``."""
        check_length(t, self.context)
        return self.embedding.weight[:t]  # (t, e)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.positions(x.size(1))  # (b, t, e) + (t, e) broadcasts over b


class PositionEncoding(nn.Module):
    """Fixed sinusoidal position vectors (:func:`sinusoidal_encoding`); nothing to learn.

    ``forward(x)`` adds the vectors of positions ``0..t-1`` to ``x (b, t, e)``; ``t > context`` is
    an error (the formula itself would extend to any length).
    """

    def __init__(self, context: int, emb: int) -> None:
        super().__init__()
        self.context = context
        self.register_buffer("encoding", sinusoidal_encoding(context, emb), persistent=False)  # (context, e)

    def positions(self, t: int) -> Tensor:
        """The vectors of positions ``0..t-1``: ``(t, e)``."""
        check_length(t, self.context)
        return self.encoding[:t]  # (t, e)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.positions(x.size(1))  # (b, t, e)


# --- inside attention (chapter 11) -------------------------------------------------------------------
__all__ = [
    "ALiBi",
    "RotaryEmbedding",
    "alibi_bias",
    "alibi_slopes",
    "relative_offsets",
    "rotate",
    "check_length",
    "check_tokens",
    "sinusoidal_encoding",
    "PositionEmbedding",
    "PositionEncoding",
    "GridPositionEmbedding",
]


def relative_offsets(tq: int, tk: int, device: torch.device | str | None = None) -> Tensor:
    """Offsets ``i - j`` between the last ``tq`` of ``tk`` positions (the queries) and all ``tk`` keys.

    Query ``i`` is position ``tk - tq + i`` (with a cache or a memory, the queries are the newest
    positions). Returns int64 ``(tq, tk)``; entries are negative for keys after the query.
    """
    if tq > tk:
        raise ValueError(
            f"There are more queries ({tq}) than keys ({tk}); the queries must be the last keys."
        )
    queries = torch.arange(tk - tq, tk, device=device)  # (tq,) absolute positions
    keys = torch.arange(tk, device=device)  # (tk,)
    return queries[:, None] - keys[None, :]  # (tq, tk)


# --- RoPE ------------------------------------------------------------------------------------------
def rotate(x: Tensor, positions: Tensor, *, base: float = 10_000.0) -> Tensor:
    """Rotary position embedding (RoPE): rotate each coordinate pair of ``x`` by its position's angle.

    x: ``(..., t, d)`` with ``d`` even (queries or keys of one or more heads); positions: ``(t,)``.
    Pair ``m`` (coordinates ``2m`` and ``2m+1``) at position ``p`` turns by ``p · base^(-2m/d)``.
    Returns a tensor like ``x``, with the same norm at every position.
    """
    d = x.size(-1)
    if d % 2:
        raise ValueError(f"RoPE rotates coordinate pairs, so the head width must be even; got d={d}.")
    if positions.shape != (x.size(-2),):
        raise ValueError(
            f"positions must be (t,) = ({x.size(-2)},), one per row of x; got {tuple(positions.shape)}."
        )
    rate = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)  # (d/2,)
    angle = positions.to(x.device, torch.float32)[:, None] * rate  # (t, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)  # (t, d/2)
    pairs = x.unflatten(-1, (d // 2, 2))  # (..., t, d/2, 2)
    first, second = pairs[..., 0], pairs[..., 1]  # (..., t, d/2) each
    turned = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)  # (..., t, d/2, 2)
    return turned.flatten(-2)  # (..., t, d)


class RotaryEmbedding(nn.Module):
    """RoPE for one attention layer: ``rotary(x, offset=p)`` rotates ``x (b, h, t, d)`` as positions
    ``p … p + t - 1`` (``offset`` = the number of positions already in a key-value cache).

    Nothing is learned; the module only remembers ``head_dim`` and ``base``.
    """

    def __init__(self, head_dim: int, *, base: float = 10_000.0) -> None:
        super().__init__()
        if head_dim % 2:
            raise ValueError(
                f"RoPE needs an even head width, got head_dim={head_dim}; pick emb and heads to fit."
            )
        self.head_dim, self.base = head_dim, base

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, base={self.base:g}"

    def forward(self, x: Tensor, *, offset: int = 0) -> Tensor:
        positions = torch.arange(offset, offset + x.size(-2), device=x.device)  # (t,)
        return rotate(x, positions, base=self.base)  # (b, h, t, d)


# --- ALiBi -----------------------------------------------------------------------------------------
def alibi_slopes(heads: int) -> Tensor:
    """ALiBi's fixed per-head slopes ``m_n`` (Press et al. 2022): ``(h,)``.

    For ``h`` a power of two: ``2^(-8/h)``, ``2^(-16/h)``, …, ``2^-8``. Otherwise the slopes of the
    power of two just below ``h``, then every other slope of the next power of two (the paper's recipe).
    """
    if heads <= 0:
        raise ValueError(f"heads must be positive, got {heads}.")

    def powers(n: int) -> list[float]:
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    below = 2 ** int(math.floor(math.log2(heads)))
    slopes = powers(below) + powers(2 * below)[0::2][: heads - below]
    return torch.tensor(slopes)  # (h,)


def alibi_bias(slopes: Tensor, tq: int, tk: int) -> Tensor:
    """The ALiBi term added to the scores: ``-m_n · |i - j|`` for query ``i`` and key ``j``.

    slopes: ``(h,)``. The queries are the last ``tq`` of ``tk`` positions (:func:`relative_offsets`).
    Returns float ``(h, tq, tk)``, 0 on the diagonal; a causal mask hides the keys after each query.
    """
    distance = relative_offsets(tq, tk, slopes.device).abs()  # (tq, tk)
    return -slopes[:, None, None] * distance  # (h, tq, tk)


class ALiBi(nn.Module):
    """ALiBi for a stack of layers: ``alibi(tq, tk)`` is the ``(h, tq, tk)`` bias of every layer.

    The slopes are a buffer (saved with the model, never trained).
    """

    def __init__(self, heads: int) -> None:
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(heads), persistent=False)  # (h,)

    def forward(self, tq: int, tk: int) -> Tensor:
        return alibi_bias(self.slopes, tq, tk)  # (h, tq, tk)


# --- a grid of patches (chapter 13) --------------------------------------------------------------
class GridPositionEmbedding(nn.Module):
    """Learned 2-D positions for a ``rows x cols`` grid of patches (chapter 13).

    The patch in row ``r``, column ``k`` gets ``row[r] + col[k]``: ``rows + cols`` trained vectors
    instead of ``rows · cols``, and patches in one row (or column) share a part of their position.
    ``forward(x)`` adds them to ``x (b, n, e)``, patches numbered row by row as
    :func:`~fromscratch.models.vision.patchify` does.
    """

    def __init__(self, rows: int, cols: int, emb: int) -> None:
        super().__init__()
        self.rows, self.cols = rows, cols
        self.row = nn.Parameter(torch.randn(rows, 1, emb) * 0.02)  # (rows, 1, e)
        self.col = nn.Parameter(torch.randn(1, cols, emb) * 0.02)  # (1, cols, e)

    def positions(self) -> Tensor:
        """The vector of every patch, row by row: ``(n, e)``."""
        return (self.row + self.col).flatten(0, 1)  # (rows, cols, e) -> (n, e)

    def forward(self, x: Tensor) -> Tensor:
        if x.size(1) != self.rows * self.cols:
            raise ValueError(f"x has {x.size(1)} patches; the grid has {self.rows}x{self.cols}.")
        return x + self.positions()  # (b, n, e)
