"""Plots of the course: one-line calls from the chapters (``fromscratch.viz.…``).

``style`` holds the shared look (readable on light and dark book themes); each other submodule
draws the figures of one part of the course and lists them in its ``__all__``.
"""

from fromscratch.viz.style import use_style
from fromscratch.viz.recommend import *  # noqa: F401,F403  chapter 01
from fromscratch.viz.attention import *  # noqa: F401,F403  chapters 02-04, 06, 07
from fromscratch.viz.text import *  # noqa: F401,F403  chapters 06-07: text, samples, widgets
