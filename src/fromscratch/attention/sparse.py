"""Sparse attention (Child et al. 2019): attend to about ``t·√t`` pairs instead of ``t²`` (chapter 11).

A causal query ``i`` may attend to every key ``j <= i``: ``t(t+1)/2`` scores, quadratic in ``t``.
Child et al. keep only a structured subset, chosen so that any earlier position still reaches
``i`` within two layers. With a block (stride) ``l ≈ √t``:

- **strided**: key ``j`` is visible when it is among the last ``l`` positions (``i - j < l``) or
  a whole number of strides back (``(i - j) mod l = 0``); good for data with a period (images);
- **fixed**: key ``j`` is visible when it lies in the same block of ``l`` (``⌊j/l⌋ = ⌊i/l⌋``) or is
  one of the last ``c`` "summary" positions of a block (``j mod l >= l - c``); good for text.

Each pattern is the union of two parts (Child et al. give them to different heads or layers);
:func:`pattern_parts` returns both and :func:`sparse_mask` their union, as boolean ``attn_mask``s
(True = may attend): the teaching form, which still computes all ``t²`` scores and masks most.
:func:`sparse_attention` computes only what the pattern needs: each block of ``l`` queries scores
its own and the previous block (the local part, ``2l`` keys), plus one key per earlier block for
the far part (the same column for strided, the summary positions for fixed). That is
``t·(2l + t/l)`` scores for strided, ``O(t√t)`` with ``l = √t``; the result equals masked dense
attention, forward and backward. The block ``l`` must divide ``t``: pad the sequence to a multiple
of ``l`` (padding at the end changes no earlier output of a causal pattern), or a ValueError says so.

Shape legend: ``b`` batch, ``h`` heads, ``t`` length, ``d`` head width, ``l`` block, ``nb = t / l``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from fromscratch.attention.dot_product import scaled_dot_product_attention

__all__ = [
    "PATTERNS",
    "check_block",
    "computed_scores",
    "default_block",
    "dense_sparse_attention",
    "pattern_parts",
    "sparse_attention",
    "sparse_mask",
]

PATTERNS = ("strided", "fixed")


def _check_kind(kind: str) -> None:
    if kind not in PATTERNS:
        raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}; got {kind!r}.")


def _parts(kind: str, i: Tensor, j: Tensor, block: int, summary: int) -> tuple[Tensor, Tensor]:
    """The two parts of a pattern for broadcastable query positions ``i`` and key positions ``j``."""
    _check_kind(kind)
    causal = (j <= i) & (j >= 0)
    if kind == "strided":
        return causal & (i - j < block), causal & ((i - j) % block == 0)
    return causal & (i // block == j // block), causal & (j % block >= block - summary)


def pattern_parts(kind: str, t: int, block: int, *, summary: int = 1) -> Tensor:
    """The two parts of a sparse pattern as boolean masks: ``(2, t, t)``, True = may attend.

    strided: ``[i - j < block]`` (local) and ``[(i - j) mod block = 0]`` (strided); fixed:
    ``[same block]`` and ``[j is one of the last summary positions of its block]``; both causal.
    """
    if not 1 <= summary <= block:
        raise ValueError(f"summary={summary} must lie between 1 and block={block}.")
    positions = torch.arange(t)
    local, far = _parts(kind, positions[:, None], positions[None, :], block, summary)
    return torch.stack([local, far])  # (2, t, t)


def sparse_mask(kind: str, t: int, block: int, *, summary: int = 1) -> Tensor:
    """The union of both parts of a pattern (:func:`pattern_parts`): a boolean ``(t, t)`` ``attn_mask``."""
    return pattern_parts(kind, t, block, summary=summary).any(dim=0)  # (t, t)


def default_block(t: int) -> int:
    """A power of two near ``√t`` that divides any power-of-two ``t`` (512 -> 32, 8192 -> 128)."""
    return 2 ** math.ceil(math.log2(t) / 2)


def check_block(t: int, block: int) -> None:
    """Raise a ValueError unless ``block`` divides ``t`` (what :func:`sparse_attention` needs)."""
    if block <= 0 or t % block:
        padded = -(-t // max(block, 1)) * max(block, 1)
        raise ValueError(
            f"The block size {block} does not divide the sequence length t={t}. Pad the sequence to "
            f"{padded} positions (at the end: a causal pattern's earlier outputs do not change), or pick "
            f"a block dividing t."
        )


def computed_scores(kind: str, t: int, block: int, *, summary: int = 1) -> int:
    """How many query-key scores :func:`sparse_attention` computes per head: ``t·(2l + far)``.

    far = ``t / l`` keys per query for strided (one per block row), ``(t / l)·summary`` for fixed.
    Dense attention computes ``t²``. Multiply by ``2d`` for the multiply-adds of ``q·k`` (and as many
    again for the weighted sum of values).
    """
    _check_kind(kind)
    check_block(t, block)
    nb = t // block
    far = nb if kind == "strided" else nb * summary
    return t * (2 * block + far)


def _far_keys(kind: str, x: Tensor, block: int, summary: int) -> Tensor:
    """The far part's keys or values: strided ``(b, h, l, nb, d)`` (column c, row r), fixed
    ``(b, h, nb·c, d)``.
    """
    b, h, t, d = x.shape
    rows = x.view(b, h, t // block, block, d)  # (b, h, nb, l, d): row r is block r
    if kind == "strided":
        return rows.transpose(2, 3)  # (b, h, l, nb, d): the keys of column c, one per block
    return rows[:, :, :, block - summary :].reshape(b, h, -1, d)  # (b, h, nb·c, d): the summary positions


def sparse_attention(q: Tensor, k: Tensor, v: Tensor, kind: str, block: int, *, summary: int = 1) -> Tensor:
    """Causal sparse attention that computes only the scores the pattern can use (Child et al. 2019).

    q, k, v: ``(b, h, t, d)`` with ``block`` dividing ``t``. Returns ``(b, h, t, d)``, equal (up to
    rounding) to ``scaled_dot_product_attention(q, k, v, sparse_mask(kind, t, block))[0]``.

    Block ``n`` of ``l`` queries scores the keys of blocks ``n - 1`` and ``n`` (local) and the far keys
    before them (:func:`_far_keys`); the pattern masks the rest, and one softmax runs over both.
    """
    if q.dim() != 4 or k.shape != q.shape or v.shape != q.shape:
        raise ValueError(
            f"q, k, v must all be (b, h, t, d); got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}."
        )
    _check_kind(kind)
    b, h, t, d = q.shape
    check_block(t, block)
    if not 1 <= summary <= block:
        raise ValueError(f"summary={summary} must lie between 1 and block={block}.")
    nb, device = t // block, q.device

    queries = q.view(b, h, nb, block, d)  # (b, h, nb, l, d)
    i = torch.arange(t, device=device).view(nb, block, 1)  # (nb, l, 1): query positions
    first_local = ((torch.arange(nb, device=device) - 1) * block).view(nb, 1, 1)  # (nb, 1, 1)

    # local part: blocks n - 1 and n, with a block of zeros in front of block 0
    def two_blocks(x: Tensor) -> Tensor:
        padded = torch.cat([x.new_zeros(b, h, block, d), x], dim=2).view(b, h, nb + 1, block, d)
        return torch.cat([padded[:, :, :-1], padded[:, :, 1:]], dim=3)  # (b, h, nb, 2l, d)

    local_k, local_v = two_blocks(k), two_blocks(v)  # (b, h, nb, 2l, d)
    j_local = first_local + torch.arange(2 * block, device=device)  # (nb, 1, 2l)
    local_ok = torch.stack(_parts(kind, i, j_local, block, summary)).any(0)  # (nb, l, 2l)
    local_scores = queries @ local_k.transpose(-2, -1)  # (b, h, nb, l, 2l)

    # far part: allowed keys before block n - 1
    far_k, far_v = _far_keys(kind, k, block, summary), _far_keys(kind, v, block, summary)
    if kind == "strided":
        column = torch.arange(block, device=device).view(1, block, 1)  # (1, l, 1)
        j_far = torch.arange(nb, device=device).view(1, 1, nb) * block + column  # (1, l, nb)
        far_scores = torch.einsum("bhncd,bhcrd->bhncr", queries, far_k)  # (b, h, nb, l, nb)
    else:
        starts = torch.arange(nb, device=device)[:, None] * block + block - summary  # (nb, 1)
        j_far = (starts + torch.arange(summary, device=device)).view(1, 1, -1)  # (1, 1, nb·c)
        far_scores = torch.einsum("bhnid,bhsd->bhnis", queries, far_k)  # (b, h, nb, l, nb·c)
    far_ok = torch.stack(_parts(kind, i, j_far, block, summary)).any(0) & (
        j_far < first_local
    )  # (nb, l, far)

    scores = torch.cat([local_scores, far_scores], dim=-1) / math.sqrt(d)  # (b, h, nb, l, 2l + far)
    allowed = torch.cat([local_ok, far_ok.expand(nb, block, -1)], dim=-1)  # (nb, l, 2l + far)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # every row sees key i
    local_w, far_w = weights.split([2 * block, weights.size(-1) - 2 * block], dim=-1)
    out = local_w @ local_v  # (b, h, nb, l, d)
    if kind == "strided":
        out = out + torch.einsum("bhncr,bhcrd->bhncd", far_w, far_v)  # (b, h, nb, l, d)
    else:
        out = out + torch.einsum("bhnis,bhsd->bhnid", far_w, far_v)  # (b, h, nb, l, d)
    return out.reshape(b, h, t, d)  # (b, h, t, d)


def dense_sparse_attention(
    q: Tensor, k: Tensor, v: Tensor, kind: str, block: int, *, summary: int = 1
) -> Tensor:
    """The teaching form: all ``t²`` scores, then :func:`sparse_mask`. q, k, v ``(b, h, t, d)`` ->
    ``(b, h, t, d)``.
    """
    mask = sparse_mask(kind, q.size(-2), block, summary=summary).to(q.device)  # (t, t)
    return scaled_dot_product_attention(q, k, v, mask)[0]  # (b, h, t, d)
