"""Text and tables (every chapter), and tokens shaded by a score (chapters 06 and 10).

- ``table``: rows shown as an HTML table in the notebook and the book, aligned text elsewhere;
- ``highlight_tokens``: a review (or any token sequence) with every token shaded by a score, e.g.
  how much it pushes a classifier towards "positive" (green) or "negative" (orange); HTML in the
  notebook and the book, plain text elsewhere.
"""

from __future__ import annotations

import html
import inspect
import textwrap
from collections.abc import Sequence

import numpy as np
import torch

from fromscratch.viz.style import PALETTE

__all__ = [
    "Prose",
    "prose",
    "Table",
    "show_text",
    "table",
    "TokenHighlight",
    "highlight_tokens",
]
WIDTH = 88  # characters: the book's text column, for text shown instead of HTML

POSITIVE, NEGATIVE, NEUTRAL = PALETTE[2], PALETTE[3], PALETTE[0]  # green, orange-red, blue


# --- prose from the run -----------------------------------------------------------------------------
class Prose:
    """A paragraph of Markdown that Jupyter (and the built book) renders as text, ``print`` as plain text.

    The course's way of stating a number a chapter measured: the sentence is made from the values the
    run computed, so the book, a learner's Colab notebook and the figure above it always agree, whatever
    the machine or the profile. Static Markdown keeps only numbers with their source named.
    """

    def __init__(self, text: str):
        self.text = inspect.cleandoc(text)  # the indentation of a triple-quoted f-string goes

    def __repr__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return self.text


def prose(text: str) -> Prose:
    """``viz.prose(f"The transformer reaches **{accuracy:.1%}**, the bag {bag:.1%}.")``, last in a cell
    (tagged ``remove-input`` so the book shows the sentence, not the code that made it)."""
    return Prose(text)


# --- tables ----------------------------------------------------------------------------------------
class Table:
    """A small table that Jupyter shows as HTML (also in the built book) and ``print`` as aligned text."""

    def __init__(self, rows: Sequence[Sequence[object]], header: Sequence[str], caption: str = ""):
        self.header = [str(h) for h in header]
        self.rows = [[str(cell) for cell in row] for row in rows]
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError(f"every row needs {len(self.header)} cells, one per column of the header.")
        self.caption = caption

    def __repr__(self) -> str:
        widths = [max(len(r[c]) for r in [self.header, *self.rows]) for c in range(len(self.header))]
        lines = [self.caption] if self.caption else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(self.header, widths, strict=True)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in self.rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cell = "style='text-align:left; padding:0.2em 1.2em 0.2em 0'"
        head = "".join(f"<th {cell}>{html.escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td {cell}>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self.rows
        )
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def show_text(text: str, width: int = 88) -> None:
    """Print ``text`` with every line wrapped to the book's column (``width`` characters): wiki lines,
    generated samples and translations can be long, and a cell's output must not scroll sideways."""
    for line in text.splitlines() or [""]:
        print(textwrap.fill(line, width, replace_whitespace=False) if line else "")


def table(rows: Sequence[Sequence[object]], header: Sequence[str], caption: str = "") -> Table:
    """``table([["global mean", "1.123"], ...], header=["model", "test RMSE"])``: shown when last in a
    cell.
    """
    return Table(rows, header, caption)


# --- tokens and positions ------------------------------------------------------------------------
def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha:.2f})"


class TokenHighlight:
    """Tokens shaded by scores: HTML in Jupyter and the book, wrapped text with the extremes in ``print``."""

    def __init__(self, tokens: Sequence[str], scores: Sequence[float] | None, caption: str, signed: bool):
        self.tokens, self.caption, self.signed = list(tokens), caption, signed
        self.scores = (
            None
            if scores is None
            else np.asarray(
                scores.detach().float().cpu() if isinstance(scores, torch.Tensor) else scores, dtype=float
            )
        )
        if self.scores is not None and self.scores.shape != (len(self.tokens),):
            raise ValueError(
                f"got {len(self.scores)} scores for {len(self.tokens)} tokens; pass one score per token."
            )

    def _extremes(self, k: int = 5) -> str:
        order = np.argsort(self.scores)
        top = [f"{self.tokens[i]} ({self.scores[i]:+.2f})" for i in order[::-1][:k]]
        if not self.signed:
            return textwrap.fill("highest: " + ", ".join(top), width=WIDTH, subsequent_indent="  ")
        bottom = [f"{self.tokens[i]} ({self.scores[i]:+.2f})" for i in order[:k]]
        return "\n".join(
            textwrap.fill(f"most {side}: " + ", ".join(words), width=WIDTH, subsequent_indent="  ")
            for side, words in (("positive", top), ("negative", bottom))
        )

    def __repr__(self) -> str:
        lines = [self.caption] if self.caption else []
        lines.append(textwrap.fill(" ".join(self.tokens), width=WIDTH))
        if self.scores is not None and len(self.tokens):
            lines.append(self._extremes())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        spans = []
        top = float(np.abs(self.scores).max()) if self.scores is not None and len(self.tokens) else 0.0
        for i, token in enumerate(self.tokens):
            text = html.escape(token)
            if self.scores is None or top == 0.0:
                spans.append(text)
                continue
            score = self.scores[i]
            colour = (POSITIVE if score >= 0 else NEGATIVE) if self.signed else NEUTRAL
            alpha = 0.85 * abs(score) / top
            spans.append(
                f"<span title='{score:+.3f}' style='background:{_rgba(colour, alpha)};"
                f"border-radius:3px;padding:0 1px'>{text}</span>"
            )
        caption = (
            f"<div style='font-weight:bold;margin-bottom:4px'>{html.escape(self.caption)}</div>"
            if self.caption
            else ""
        )
        return (
            f"<div style='border:1px solid #ccc;border-radius:6px;padding:8px;line-height:1.9;"
            f"background:white;color:#222'>{caption}{' '.join(spans)}</div>"
        )


def highlight_tokens(
    tokens: Sequence[str],
    scores: Sequence[float] | torch.Tensor | None = None,
    *,
    caption: str = "",
    signed: bool | None = None,
) -> TokenHighlight:
    """Show ``tokens`` with each one shaded by its score (chapters 06-07).

    scores: ``(t,)``, one per token (None: plain text). signed=True shades positive scores green and
    negative ones orange (default: True when any score is negative); False shades by size in blue.
    The result renders when it is the last expression of a cell; hover a token to read its score.
    """
    if signed is None:
        signed = scores is not None and bool((torch.as_tensor(scores) < 0).any())
    return TokenHighlight(tokens, scores, caption, signed)
