"""Plots of chapter 05 (the transformer block).

- ``position_plot``: position vectors as a heatmap (positions down, dimensions across) beside the dot
  products between positions, the picture of the sinusoidal encodings.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from fromscratch.viz.style import BOOK_WIDTH, HEATMAP_CMAP

__all__ = ["position_plot"]


def position_plot(vectors: torch.Tensor, *, title: str = "position vectors"):
    """Position vectors ``(t, e)`` as a heatmap, next to their dot products ``(t, t)`` (chapter 05).

    Returns the ``Figure``.
    """
    vectors = torch.as_tensor(vectors).detach().float().cpu()
    if vectors.dim() != 2:
        raise ValueError(f"vectors must have shape (t, e), got {tuple(vectors.shape)}.")
    fig, (left, right) = plt.subplots(1, 2, figsize=(BOOK_WIDTH, 3.2), layout="constrained")
    top = float(vectors.abs().max()) or 1.0
    image = left.imshow(
        vectors.numpy(), cmap="RdBu_r", aspect="auto", vmin=-top, vmax=top, interpolation="nearest"
    )
    left.set(xlabel="dimension", ylabel="position", title=title)
    left.grid(False)
    fig.colorbar(image, ax=left)
    dots = vectors @ vectors.T  # (t, t)
    image = right.imshow(dots.numpy(), cmap=HEATMAP_CMAP, aspect="equal")
    right.set(xlabel="position", ylabel="position", title="dot products between positions")
    right.grid(False)
    fig.colorbar(image, ax=right)
    return fig
