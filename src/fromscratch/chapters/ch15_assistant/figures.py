"""Chapter 15's pictures: what supervised fine-tuning scores, and accuracies with their intervals.

- ``scored_text``: a tokenised conversation as text, every token the loss scores in ``⟦ ⟧``;
- ``interval_plot``: one dot per method with its 95 % confidence interval as a bar, grouped by the
  number of labels it learned from.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt

from fromscratch.viz.style import BOOK_WIDTH, PALETTE

__all__ = ["interval_plot", "scored_text"]


def scored_text(pieces: Sequence[str], scored: Sequence[bool]) -> str:
    """``pieces`` (token strings) joined, each scored one wrapped in ``⟦ ⟧``: ``"Hi⟦ there⟧"``."""
    if len(pieces) != len(scored):
        raise ValueError(f"one flag per token: got {len(pieces)} tokens and {len(scored)} flags.")
    return "".join(f"⟦{p}⟧" if s else p for p, s in zip(pieces, scored, strict=True))


def interval_plot(
    rows: Sequence[tuple[str, str, float, float, float]], *, chance: float | None = 0.5, title: str = ""
):
    """``rows``: ``(method, group, accuracy, low, high)``; a dot per row at its accuracy, a bar from
    ``low`` to ``high`` (its interval), one colour per method, rows in the order given. Returns the
    ``Figure``."""
    methods = list(dict.fromkeys(method for method, *_ in rows))
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 0.32 * len(rows) + 1.2), layout="constrained")
    for y, (method, _, value, low, high) in enumerate(rows):
        colour = PALETTE[methods.index(method) % len(PALETTE)]
        ax.plot([low, high], [y, y], color=colour, linewidth=2)
        ax.plot([value], [y], "o", color=colour)
    ax.set_yticks(range(len(rows)), [f"{method}, {group}" for method, group, *_ in rows])
    ax.invert_yaxis()
    if chance is not None:
        ax.axvline(chance, color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="test accuracy (95 % interval)", title=title)
    return fig
