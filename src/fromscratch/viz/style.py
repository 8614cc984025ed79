"""A plot style that reads on light and dark book themes, at the size the book shows it (all chapters).

Figures get an opaque white background with dark text, so a dark page theme shows them as framed
white cards instead of black text on a dark page. Colours are Okabe & Ito's colour-blind safe set.
Figures are at most ``BOOK_WIDTH`` wide, so the page never shrinks their text below ``MIN_FONT``;
``tick_layout`` says how to label a heatmap's cells at that size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib as mpl

PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
HEATMAP_CMAP = "viridis"  # perceptually uniform, readable in greyscale
FAINT = "#bbbbbb"  # what is drawn but not chosen: the other curves beside a highlighted one

# Figures are sized for the page: the book's text column is about 730 px wide, and a figure drawn at
# figure.dpi 100 wider than that is shrunk to fit it, its text with it. Drawn at most BOOK_WIDTH
# wide, a point of font size is 100/72 px on the page: MIN_FONT (9 pt) is 12.5 px.
BOOK_WIDTH = 7.1  # inches: the 7.3-inch text column at figure.dpi 100, less the 0.1-inch margins Jupyter adds
FONT = 11  # points: the default font size
MIN_FONT = 9  # points: the smallest text that reads at the book's width

STYLE = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "text.color": "#222222",
    "axes.labelcolor": "#222222",
    "axes.edgecolor": "#444444",
    "xtick.color": "#222222",
    "ytick.color": "#222222",
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,  # the book shows figures at this resolution: see BOOK_WIDTH
    "savefig.dpi": 150,
    "font.size": FONT,
    "image.cmap": HEATMAP_CMAP,
}


def text_width(labels: Sequence[str], fontsize: float) -> float:
    """About how wide, in inches, the longest of ``labels`` is at ``fontsize`` points (0.6 em a character)."""
    return max((len(str(label)) for label in labels), default=0) * 0.6 * fontsize / 72


def tick_layout(cell: float, labels: Sequence[str]) -> tuple[float, int, int]:
    """How to label cells ``cell`` inches wide: font size (points), every ``step``-th token, x rotation.

    The font shrinks with the cells down to MIN_FONT; below that, every second (third, ...) token is
    labelled instead, so that the labels shown stay readable. One-character labels (bytes) stand upright.
    """
    cell_pt = 72 * cell
    font = min(max(0.75 * cell_pt, MIN_FONT), FONT)
    step = max(1, math.ceil(1.2 * font / cell_pt))  # a line of text needs about 1.2 font sizes
    if max((len(label) for label in labels), default=0) <= 1:
        return font, step, 0
    return font, step, 45 if step * cell_pt >= 1.7 * font else 90


def use_style() -> None:
    """Apply the course style to every following matplotlib figure."""
    mpl.rcParams.update(STYLE)
