"""Plots of chapter 07 (masking and generation).

- ``distribution_bars``: a next-token distribution as bars (``Bars``), the frame of the temperature,
  top-k and top-p sliders.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import torch

from fromscratch.viz.style import PALETTE

__all__ = ["Bars", "distribution_bars"]


class Bars:
    """Probabilities as horizontal bars, largest first: HTML in a page, aligned text in ``print``."""

    STYLE = (  # short rows: a figure holds a frame like this for every setting of its sliders
        ".fs-bars div {display: flex; align-items: center; height: 1.35em}"
        ".fs-bars code {width: 4em; text-align: right; margin-right: 0.5em; color: inherit; background: none}"
        f".fs-bars i {{display: inline-block; height: 0.9em; background: {PALETTE[0]}; margin-right: 0.4em}}"
    )

    def __init__(self, probs: Sequence[float], labels: Sequence[str], caption: str = "", note: str = ""):
        self.probs, self.labels, self.caption, self.note = list(probs), list(labels), caption, note

    def __repr__(self) -> str:
        lines = [self.caption] if self.caption else []
        pairs = zip(self.labels, self.probs, strict=True)
        lines += [f"{label:>8} {p:6.1%} {'#' * round(40 * p)}" for label, p in pairs]
        return "\n".join(lines + ([self.note] if self.note else []))

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<div><code>{html.escape(label)}</code><i style='width:{30 * p:.2f}em'></i>{p:.1%}</div>"
            for label, p in zip(self.labels, self.probs, strict=True)
        )
        caption = f"<b>{html.escape(self.caption)}</b>" if self.caption else ""
        note = f"<p style='margin:0.3em 0'>{html.escape(self.note)}</p>" if self.note else ""
        return f"<div class='fs-bars'><style>{self.STYLE}</style>{caption}{rows}{note}</div>"


def distribution_bars(
    probs: torch.Tensor,
    labels: Sequence[str],
    *,
    order: Sequence[int] | None = None,
    caption: str = "",
    note: str = "",
) -> Bars:
    """The probabilities ``probs`` ``(V,)`` of the tokens ``order`` (indices; default: all, largest first),
    labelled by ``labels`` (one per token of the vocabulary): chapter 07's sampling sliders."""
    probs = torch.as_tensor(probs).detach().float().cpu()
    order = probs.argsort(descending=True).tolist() if order is None else list(order)
    return Bars([float(probs[i]) for i in order], [labels[i] for i in order], caption, note)
