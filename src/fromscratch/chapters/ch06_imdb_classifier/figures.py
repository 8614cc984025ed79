"""Plots of chapter 06 (the IMDb classifier).

- ``length_histogram``: how long the reviews are, and where truncation cuts them.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["length_histogram"]


def length_histogram(
    lengths: Sequence[int] | torch.Tensor, context: int | None = None, *, bins: int = 60, unit: str = "tokens"
):
    """A histogram of text lengths, with the truncation length marked (chapter 06). Returns the ``Axes``."""
    lengths = np.asarray(torch.as_tensor(lengths).cpu())
    _, ax = plt.subplots(figsize=(BOOK_WIDTH, 3))
    ax.hist(lengths, bins=bins, color=PALETTE[0])
    ax.set(
        xlabel=f"length ({unit})",
        ylabel="count",
        title=f"{len(lengths):,} texts, median {np.median(lengths):.0f} {unit}",
    )
    if context is not None:
        cut = float((lengths > context).mean())
        ax.axvline(context, color=PALETTE[3], linestyle="--", label=f"context = {context}: {cut:.0%} are cut")
        ax.legend()
    return ax
