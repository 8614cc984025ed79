"""Plots of the course: one-line calls from the chapters (``fromscratch.viz.…``).

``style`` holds the shared look (readable on light and dark book themes); each other submodule
draws the figures of one part of the course and lists them in its ``__all__``: ``movies``
(chapter 01), ``attention`` (chapters 02-04, 06, 07) and ``text`` (chapters 05-07: text, samples,
widgets). Everything listed is also available as ``fromscratch.viz.<name>``.
"""

from fromscratch.viz import attention, movies, text
from fromscratch.viz.attention import *  # noqa: F403
from fromscratch.viz.movies import *  # noqa: F403
from fromscratch.viz.style import use_style
from fromscratch.viz.text import *  # noqa: F403

__all__ = ["use_style", *movies.__all__, *attention.__all__, *text.__all__]
