"""Precomputed interaction: a figure drawn for every setting of its sliders while the chapter runs, and a few
lines of JavaScript that show the one the sliders point at (chapters 01, 04, 06, 07, 09, 11,
13, 14).

A live ipywidgets slider needs a Python kernel to redraw its figure, and the rendered book, the slide
decks and a notebook opened without a kernel have none. ``frames`` draws the figure once for every
combination of its controls' values and returns one HTML output holding all of them, a slider per
control and ``js/frames.js`` (about thirty lines), which swaps the frames. It needs no kernel, no widget
library and no network, so the same output works in Jupyter, Colab, the built book and the decks:

    viz.frames(
        lambda layer, head: viz.attention_heatmap(weights[layer][0, head], tokens),
        layer=range(len(weights)),
        head=range(heads),
    )

- ``render(**values)`` returns what one frame shows: a matplotlib ``Figure`` or ``Axes`` (saved as a
  PNG inside the page, then closed, so Jupyter does not show it a second time), anything with
  ``_repr_html_`` (a ``viz.table``), or a string of HTML; ``$x$`` in its text becomes math that
  MathJax typesets (``math_spans``), also in a frame the sliders bring in.
- Each control is a keyword argument: a sequence of values (the slider shows ``str(value)``, ``:g``
  for floats) or a mapping ``{label: value}``. ``start`` picks the values shown first.
- The frames are stored in row-major order of the controls (the last control varies fastest);
  identical frames are stored once. Every frame is in the page, so keep their number in the tens:
  ``MAX_FRAMES`` is the limit.
- Without JavaScript (a notebook that is not trusted, a print-out) the first frame shows, with the
  sliders inert; ``print`` gives a line of text per control.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["Frames", "frames", "figure_html", "math_spans"]

MAX_FRAMES = 500  # frames in one figure: each one is in the page
DPI = 100  # PNG pixels per inch: the book shows figures at figure.dpi 100 (viz.style), one pixel per CSS px
COLOURS = 128  # a palette PNG: about a quarter of the bytes of a full-colour one, the same to the eye
JS_DIR = Path(__file__).with_name("js")
_count = itertools.count()


def _label(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def figure_html(figure: Figure | Axes, *, dpi: int = DPI, alt: str = "") -> str:
    """``figure`` (or the figure of an ``Axes``) as an ``<img>`` holding its PNG, shown at the book's size;
    the figure is closed."""
    from PIL import Image  # matplotlib's own dependency

    fig = figure.figure if isinstance(figure, Axes) else figure
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    width, height = (round(v) for v in fig.get_size_inches() * 100)  # CSS px at figure.dpi 100
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB").quantize(COLOURS)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    data = base64.b64encode(small.getvalue()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" width="{width}" height="{height}" '
        f'alt="{html.escape(alt)}" style="max-width:100%;height:auto;background:white">'
    )


TEX = re.compile(r"(?<![\\$])\$([^$<>\n]+?)\$")  # $x$ in a text: inline math


def math_spans(markup: str) -> str:
    """``markup`` with each ``$x$`` in its text (not inside a tag) as ``<span class="math">\\(x\\)</span>``,
    the form MathJax typesets in the book (Sphinx's delimiters), the decks and Jupyter; frames.js typesets
    a frame when the sliders bring it in."""
    span = r'<span class="math notranslate nohighlight">\\(\1\\)</span>'
    return "".join(
        part if part.startswith("<") else TEX.sub(span, part) for part in re.split(r"(<[^>]*>)", markup)
    )


def _as_html(shown: object, alt: str = "") -> str:
    """One frame's HTML from what ``render`` returned (``alt``: a figure's text for screen readers)."""
    if isinstance(shown, Figure | Axes):
        return figure_html(shown, alt=alt)
    if hasattr(shown, "_repr_html_"):
        return math_spans(shown._repr_html_())
    if isinstance(shown, str):
        return math_spans(shown)
    raise TypeError(
        f"render returned a {type(shown).__name__}; return a matplotlib Figure or Axes, an object with "
        "_repr_html_ (e.g. viz.table) or a string of HTML."
    )


class Frames:
    """One figure per setting of the controls, and the sliders that choose among them (see the module)."""

    def __init__(
        self,
        controls: Mapping[str, Sequence[str]],
        frames: Sequence[str],
        *,
        start: Sequence[int] | None = None,
        caption: str = "",
        text: str = "",
        play: bool = False,
        interval: int = 800,
        style: str = "",
    ):
        self.names = list(controls)
        self.labels = [list(labels) for labels in controls.values()]
        self.sizes = [len(labels) for labels in self.labels]
        if len(frames) != math.prod(self.sizes):
            raise ValueError(f"{len(frames)} frames for controls of sizes {self.sizes}: need their product.")
        unique = list(dict.fromkeys(frames))  # identical frames stored once, in first-seen order
        position = {frame: i for i, frame in enumerate(unique)}
        self.frames, self.order = unique, [position[frame] for frame in frames]
        self.start = list(start) if start is not None else [0] * len(self.sizes)
        self.caption, self.text, self.play, self.interval = caption, text, play, interval
        self.style = style  # CSS every frame shares, written once

    def __len__(self) -> int:
        return len(self.order)

    def index(self, positions: Sequence[int]) -> int:
        """The frame shown when control ``c`` is at position ``positions[c]`` (row-major)."""
        flat = 0
        for size, at in zip(self.sizes, positions, strict=True):
            flat = flat * size + at
        return flat

    def frame(self, positions: Sequence[int]) -> str:
        """The HTML of the frame at ``positions`` (one per control)."""
        return self.frames[self.order[self.index(positions)]]

    def __repr__(self) -> str:
        lines = [self.caption] if self.caption else []
        for name, labels in zip(self.names, self.labels, strict=True):
            lines.append(f"{name}: {', '.join(labels)}")
        lines.append(f"{len(self)} precomputed frames ({len(self.frames)} different)")
        return "\n".join(lines + ([self.text] if self.text else []))

    def _repr_html_(self) -> str:
        digest = hashlib.sha1(repr(self.order).encode() + self.frames[0].encode()).hexdigest()[:10]
        ident = f"fs-frames-{digest}-{next(_count)}"  # unique in the page even when shown twice
        controls = []
        for c, (name, labels) in enumerate(zip(self.names, self.labels, strict=True)):
            at = self.start[c]
            controls.append(
                f"<label style='display:inline-flex;align-items:center;gap:0.5em'>{html.escape(name)} "
                f"<input class='fs-control' type='range' min='0' max='{len(labels) - 1}' step='1' "
                f"value='{at}' aria-label='{html.escape(name)}' style='width:{min(14, 3 + len(labels))}em'> "
                f"<output style='min-width:3em;font-weight:bold'>{html.escape(labels[at])}</output></label>"
            )
        if self.play:
            controls.insert(
                0,
                f"<button class='fs-play' type='button' data-interval='{self.interval}' "
                f"title='play: step through {html.escape(self.names[0])}'>&#9654;</button>",
            )
        data = {"sizes": self.sizes, "labels": self.labels, "frames": self.frames, "order": self.order}
        data = json.dumps(data)
        data = data.replace("</", "<\\/")  # "</" inside the JSON would end its <script> element early
        caption = f"<div style='font-weight:bold'>{html.escape(self.caption)}</div>" if self.caption else ""
        script = (JS_DIR / "frames.js").read_text(encoding="utf-8").replace("FRAMES_ID", ident)
        style = f"<style>{self.style}</style>" if self.style else ""
        return (
            f"<div class='fromscratch-frames' id='{ident}' style='margin:0.5em 0'>{style}{caption}"
            "<div class='fs-controls' style='display:flex;flex-wrap:wrap;gap:0.3em 1.5em;"
            f"align-items:center;margin:0.3em 0'>{''.join(controls)}</div>"
            f"<div class='fs-frame'>{self.frame(self.start)}</div>"
            f"<script type='application/json' class='fs-data'>{data}</script>"
            f"<script>{script}</script></div>"
        )


def frames(
    render: Callable[..., object],
    /,
    *,
    start: Mapping[str, object] | None = None,
    caption: str = "",
    play: bool = False,
    interval: int = 800,
    style: str = "",
    **controls: Sequence[object] | Mapping[str, object],
) -> Frames:
    """Draw ``render(**values)`` for every combination of the controls' values; sliders choose which
    shows. See the module docstring.

    controls: name -> values (a sequence, or a mapping label -> value); ``render`` gets one value per
    control, by name. start: name -> the value shown first (default: each control's first).
    play: a button that steps the first control in a loop, one step every ``interval`` ms.
    style: CSS the frames share (e.g. for their classes), written once instead of in every frame.
    Returns a :class:`Frames`, shown as HTML when it is the last expression of a cell.
    """
    if not controls:
        raise ValueError("give at least one control, e.g. frames(render, head=range(8)).")
    options = {}
    for name, values in controls.items():
        pairs = list(values.items()) if isinstance(values, Mapping) else [(_label(v), v) for v in values]
        if not pairs:
            raise ValueError(f"the control {name!r} has no values; give it at least one.")
        options[name] = pairs
    count = math.prod(len(pairs) for pairs in options.values())
    if count > MAX_FRAMES:
        raise ValueError(
            f"{count} frames (the product of the controls' lengths) is more than MAX_FRAMES = {MAX_FRAMES}, "
            "and every frame goes into the page: give the controls fewer values."
        )
    start = dict(start or {})
    unknown = set(start) - set(options)
    if unknown:
        raise ValueError(f"start names {sorted(unknown)}, which are not controls: {sorted(options)}.")
    first = []
    for name, pairs in options.items():
        values = [value for _, value in pairs]
        if name in start and start[name] not in values:
            raise ValueError(f"start[{name!r}] = {start[name]!r} is not one of its values {values}.")
        first.append(values.index(start[name]) if name in start else 0)
    shown = []
    for combination in itertools.product(*options.values()):
        before = set(plt.get_fignums())
        result = render(**{name: value for name, (_, value) in zip(options, combination, strict=True)})
        setting = ", ".join(f"{name} {label}" for name, (label, _) in zip(options, combination, strict=True))
        shown.append(_as_html(result, alt=setting))
        for number in set(plt.get_fignums()) - before:  # figures render drew but did not return
            plt.close(number)
    labels = {name: [label for label, _ in pairs] for name, pairs in options.items()}
    return Frames(labels, shown, start=first, caption=caption, play=play, interval=interval, style=style)
