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
    going_big,  # chapter 12
    in_browser,  # chapter 14: stories260K running in the page (issue 37)
    modern,  # chapter 10
    movies,
    precomputed,  # viz.frames: every frame drawn in Python, swapped by a few lines of JavaScript
    sequence,
    text,
    translation,
)
from fromscratch.viz.attention import *  # noqa: F403
from fromscratch.viz.bertviz import *  # noqa: F403
from fromscratch.viz.diagrams import *  # noqa: F403
from fromscratch.viz.explorers import *  # noqa: F403
from fromscratch.viz.going_big import *  # noqa: F403  (chapter 12)
from fromscratch.viz.in_browser import *  # noqa: F403
from fromscratch.viz.modern import *  # noqa: F403
from fromscratch.viz.movies import *  # noqa: F403
from fromscratch.viz.precomputed import *  # noqa: F403
from fromscratch.viz.sequence import *  # noqa: F403
from fromscratch.viz.style import use_style
from fromscratch.viz.text import *  # noqa: F403
from fromscratch.viz.translation import *  # noqa: F403  (chapter 09)

__all__ = [
    "use_style",
    *movies.__all__,
    *attention.__all__,
    *bertviz.__all__,
    *text.__all__,
    *diagrams.__all__,
    *going_big.__all__,
    *sequence.__all__,
    *translation.__all__,
    *modern.__all__,
    *precomputed.__all__,
    *explorers.__all__,
    *in_browser.__all__,
]
