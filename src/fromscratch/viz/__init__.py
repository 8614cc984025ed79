"""The plots several chapters share: one-line calls from the chapters (``fromscratch.viz.…``).

A figure only one chapter draws lives in that chapter's folder
(``fromscratch.chapters.ch07_masking_generation.figures``); what stays here:

- ``style``: the shared look (readable on light and dark book themes, ``BOOK_WIDTH``, the palette);
- ``attention``: attention heatmaps, a grid of them, matrices side by side, chapter 03's curves against
  the head width (chapters 02-04, 06, 07, 09, 11, 13, 14);
- ``scaling``: how a cost grows with the length, log-log with fitted slopes (chapters 11, 16);
- ``curves``: training curves, one smoothed line per run (``ablation_curves``, chapters 14, 15);
- ``bertviz``: bertviz's interactive attention views for our models;
- ``text``: prose computed from a run, wrapped text, tables, tokens shaded by a score;
- ``diagrams``: the architecture drawn by code, for the chapters and the slide decks;
- ``precomputed`` (``frames``: a figure drawn for every setting of its sliders while the chapter runs,
  swapped by a few lines of JavaScript, so it responds in the book, the decks and a notebook alike, issue
  37) and ``explorers`` (``attention_frames``, built on it: chapters 06, 09, 14);
- ``verdicts`` (``viz.verdicts.compare``, ``crossing``, ``times``, ``plural``, ...): the words a chapter's
  computed prose chooses from its numbers (ahead or within noise, crosses or not, at chance or above),
  each rule tested on both sides; it is used as ``viz.verdicts.<name>``, not re-exported.

Everything else listed is also available as ``fromscratch.viz.<name>``.
"""

from fromscratch.viz import (
    attention,
    bertviz,
    curves,
    diagrams,
    explorers,  # interactive figures, precomputed
    precomputed,  # viz.frames: every frame drawn in Python, swapped by a few lines of JavaScript
    scaling,
    text,
    verdicts,  # the words computed prose chooses from its numbers, tested on both sides
)
from fromscratch.viz.attention import *  # noqa: F403
from fromscratch.viz.bertviz import *  # noqa: F403
from fromscratch.viz.curves import *  # noqa: F403
from fromscratch.viz.diagrams import *  # noqa: F403
from fromscratch.viz.explorers import *  # noqa: F403
from fromscratch.viz.precomputed import *  # noqa: F403
from fromscratch.viz.scaling import *  # noqa: F403
from fromscratch.viz.style import use_style
from fromscratch.viz.text import *  # noqa: F403

__all__ = [
    "use_style",
    "verdicts",
    *attention.__all__,
    *bertviz.__all__,
    *text.__all__,
    *diagrams.__all__,
    *precomputed.__all__,
    *explorers.__all__,
    *scaling.__all__,
    *curves.__all__,
]
