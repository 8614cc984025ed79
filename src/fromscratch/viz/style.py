"""A plot style that reads on light and dark book themes (all chapters).

Figures get an opaque white background with dark text, so a dark page theme shows them as framed
white cards instead of black text on a dark page. Colours are Okabe & Ito's colour-blind safe set.
"""

from __future__ import annotations

import matplotlib as mpl

PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
HEATMAP_CMAP = "viridis"  # perceptually uniform, readable in greyscale

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
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 11,
    "image.cmap": HEATMAP_CMAP,
}


def use_style() -> None:
    """Apply the course style to every following matplotlib figure."""
    mpl.rcParams.update(STYLE)
