"""The decks ``make test`` builds from the smoke book's executed notebooks (``FROMSCRATCH_SLIDES``).

``tests/test_slides.py`` checks the decks built from the committed notebooks; these are the decks a
lecturer gets after ``make book``: with the chapters' figures, still offline and without solutions.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pytest
from offline_assets import external_urls
from test_built_book import CHAPTERS, ROOT

SLIDES = Path(os.environ.get("FROMSCRATCH_SLIDES", ""))
pytestmark = pytest.mark.skipif(
    not os.environ.get("FROMSCRATCH_SLIDES"), reason="set FROMSCRATCH_SLIDES to built decks (make test does)"
)


@pytest.mark.parametrize("file", CHAPTERS)
def test_executed_deck_has_figures_and_stays_offline(file):
    deck = SLIDES / f"{Path(file).name}.slides.html"
    assert deck.is_file(), f"no deck for {file}: run tools/slides.py"
    page = deck.read_text(encoding="utf-8")
    assert "<img" in page, f"{deck.name} shows no figure: was it built from the executed notebooks?"
    assert external_urls(page) == []
    assert "# @title Solution" not in html.unescape(page)
    assert (ROOT / f"{file}.ipynb").is_file()
