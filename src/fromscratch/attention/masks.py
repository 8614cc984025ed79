"""Attention masks, the course's one convention (chapter 03).

A mask is a **boolean** tensor and **True means "may attend"**, the meaning PyTorch's
``F.scaled_dot_product_attention`` gives a boolean ``attn_mask``. (``nn.MultiheadAttention``'s
boolean ``attn_mask`` and ``key_padding_mask`` mean the opposite: True = blocked.)

Two kinds, always passed to attention, blocks and models as two separate keyword arguments:

- ``padding_mask`` ``(b, tk)``: True at real tokens, False at padding (:func:`padding_mask` builds it);
- ``attn_mask``: a ``(query, key)`` pattern broadcastable to ``(b, h, tq, tk)`` (:func:`causal_mask`;
  chapter 13's :func:`local_mask` for a grid of image patches and :func:`graph_mask` for a graph).

This module sits below everything else, so data loaders build their padding masks with it too.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "causal_mask",
    "padding_mask",
    "check_mask",
    "check_padding_mask",
    "check_attn_mask",
    "local_mask",
    "graph_mask",
]


def causal_mask(t: int, device: torch.device | str | None = None) -> Tensor:
    """The causal pattern (chapter 03): query ``i`` may attend to keys ``0..i`` only.

    Returns a bool ``(t, t)`` tensor, True on and below the diagonal.
    """
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor, t: int) -> Tensor:
    """A key-padding mask from sequence lengths (chapter 03): True for real tokens, False for padding.

    lengths: int ``(b,)``, each in ``0..t``. Returns a bool ``(b, t)`` tensor whose row ``j`` is
    True at positions ``< lengths[j]``: what ``SelfAttention(...)(x, padding_mask=...)`` expects.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1:
        raise ValueError(
            f"lengths must be 1-D (b,), got shape {tuple(lengths.shape)}; pass one length per sequence."
        )
    if len(lengths) and (lengths.min() < 0 or lengths.max() > t):
        raise ValueError(
            f"lengths must lie in 0..{t} (t={t}); got min {int(lengths.min())}, max {int(lengths.max())}."
        )
    return torch.arange(t, device=lengths.device) < lengths[:, None]  # (b, t)


def check_mask(mask: Tensor, target: tuple[int, ...], accepted: str) -> None:
    """Raise a ValueError unless ``mask`` is boolean and broadcasts to the ``target`` shape."""
    if mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
            f"convert it with mask.bool() or build it with causal_mask / padding_mask."
        )
    try:
        fits = torch.broadcast_shapes(mask.shape, target) == torch.Size(target)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to {tuple(target)}; expected {accepted}."
        )


def check_padding_mask(mask: Tensor, b: int, tk: int) -> None:
    """Raise a ValueError unless ``mask`` is a boolean ``(b, tk)`` key-padding mask (True = real token)."""
    if mask.dtype != torch.bool:
        raise ValueError(
            f"padding_mask must be boolean (True = real token), got dtype {mask.dtype}; "
            f"convert it with mask.bool() or build it with padding_mask(lengths, t)."
        )
    if tuple(mask.shape) != (b, tk):
        raise ValueError(
            f"padding_mask must have shape (b, tk) = {(b, tk)}, one row per sequence, got "
            f"{tuple(mask.shape)}; pass a (query, key) pattern as attn_mask instead."
        )


def check_attn_mask(mask: Tensor, b: int, h: int, tq: int, tk: int) -> None:
    """Raise a ValueError unless ``mask`` is a boolean ``(tq, tk)`` or ``(b|1, h|1, tq, tk)`` pattern."""
    if mask.dim() not in (2, 4):
        raise ValueError(
            f"attn_mask must be a (tq, tk) pattern or a 4-D (b, h, tq, tk) one (any of b, h may be "
            f"1), got shape {tuple(mask.shape)}; write a per-sequence (b, tq, tk) pattern as "
            f"mask[:, None], and a (b, tk) key-padding mask as padding_mask=."
        )
    check_mask(
        mask,
        (b, h, tq, tk),
        f"(tq, tk) = {(tq, tk)} or (b, h, tq, tk) = {(b, h, tq, tk)}, each of b, h possibly 1",
    )


# --- chapter 13: structure written as a mask ------------------------------------------------------
def local_mask(rows: int, cols: int, radius: int = 1, device: torch.device | str | None = None) -> Tensor:
    """Local attention on a ``rows x cols`` grid of patches (chapter 13): a CNN's prior written as a mask.

    The patches are numbered row by row (as :func:`~fromscratch.models.vision.patchify` makes
    them); patch ``i`` may attend to patch ``j`` when both their row and their column differ by at most
    ``radius`` (a ``(2·radius + 1)²`` window, like a convolution's kernel). Returns a bool ``(n, n)``
    tensor, ``n = rows · cols``, True on the diagonal.
    """
    if rows <= 0 or cols <= 0:
        raise ValueError(f"the grid needs rows, cols >= 1; got rows={rows}, cols={cols}.")
    if radius < 0:
        raise ValueError(f"radius must be 0 (each patch sees itself) or more, got {radius}.")
    r = torch.arange(rows, device=device).repeat_interleave(cols)  # (n,): the row of each patch
    c = torch.arange(cols, device=device).repeat(rows)  # (n,): its column
    near_rows = (r[:, None] - r[None, :]).abs() <= radius  # (n, n)
    near_cols = (c[:, None] - c[None, :]).abs() <= radius  # (n, n)
    return near_rows & near_cols  # (n, n)


def graph_mask(adjacency: Tensor, *, self_loops: bool = True) -> Tensor:
    """A graph as an attention mask (chapter 13): node ``i`` may attend to node ``j`` if edge ``i–j`` exists.

    adjacency: ``(n, n)`` or ``(b, n, n)``, bool or numbers (nonzero = an edge; weights are ignored),
    row ``i`` listing the nodes ``i`` reads from. ``self_loops=True`` adds the diagonal, so every node
    also keeps its own features. Returns a bool tensor of the same shape; pass a batched one to
    attention as ``mask[:, None]`` (one pattern for every head).
    """
    if adjacency.dim() not in (2, 3) or adjacency.size(-1) != adjacency.size(-2):
        raise ValueError(
            f"adjacency must be a square (n, n) matrix, or (b, n, n) for a batch of graphs, got shape "
            f"{tuple(adjacency.shape)}; build it with e.g. torch.as_tensor(networkx.to_numpy_array(g))."
        )
    mask = adjacency != 0  # (..., n, n)
    if self_loops:
        mask = mask | torch.eye(adjacency.size(-1), dtype=torch.bool, device=adjacency.device)
    return mask
