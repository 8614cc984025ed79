"""Plots of the course: one-line calls from the chapters (``fromscratch.viz.…``).

``style`` holds the shared look (readable on light and dark book themes); each other submodule
draws the figures of one part of the course and lists them in its ``__all__``: ``movies``
(chapter 01), ``attention`` (chapters 02-04, 06, 07), ``text`` (chapters 05-07: text, samples,
widgets), ``diagrams`` (the architecture drawn by code, for the chapters and the slide decks),
``sequence`` (chapter 08: step times, distances, reachability, learning curves against time) and
``translation`` (chapter 09: BLEU by length, encoder-decoder bertviz).
Interactive figures that work without a kernel (issue 37): ``precomputed`` (``frames``: a figure drawn for
every setting of its sliders while the chapter runs, swapped by a few lines of JavaScript, so it responds
in the book, the decks and a notebook alike), ``explorers`` (the chapters' figures built on it) and
``in_browser`` (``llama_in_browser``: chapter 14's stories260K running in the reader's browser).
Everything listed is also available as ``fromscratch.viz.<name>``.
"""

from fromscratch.viz import (
    attention,
    bertviz,
    diagrams,
    explorers,  # interactive figures, precomputed (issue 37)
    precomputed,  # viz.frames: every frame drawn in Python, swapped by a few lines of JavaScript
    text,
)
from fromscratch.viz.attention import *  # noqa: F403
from fromscratch.viz.bertviz import *  # noqa: F403
from fromscratch.viz.diagrams import *  # noqa: F403
from fromscratch.viz.explorers import *  # noqa: F403
from fromscratch.viz.precomputed import *  # noqa: F403
from fromscratch.viz.style import use_style
from fromscratch.viz.text import *  # noqa: F403

__all__ = [
    "use_style",
    *attention.__all__,
    *bertviz.__all__,
    *text.__all__,
    *diagrams.__all__,
    *precomputed.__all__,
    *explorers.__all__,
]
