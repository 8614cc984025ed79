"""The decks ``make test`` builds from the smoke book's executed notebooks (``FROMSCRATCH_SLIDES``).

``tests/test_slides.py`` checks the decks built from the committed notebooks; these are the decks a
lecturer gets after ``make book``: with the chapters' figures, still offline and without solutions.
"""

from __future__ import annotations

import contextlib
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


# --- the decks' interactive figures, in Chromium with the network blocked --------------------
FRAMES_IN_DECK = """(async () => {
  const out = [];
  for (const figure of document.querySelectorAll('.fromscratch-frames')) {
    const view = figure.querySelector('.fs-frame'), changed = [];
    for (const slider of figure.querySelectorAll('input.fs-control')) {
      if (+slider.max === 0) continue;
      const before = view.innerHTML, start = slider.value;
      slider.value = +start === +slider.max ? 0 : slider.max;
      slider.dispatchEvent(new Event('input'));
      changed.push(view.innerHTML !== before);
      slider.value = start;
      slider.dispatchEvent(new Event('input'));
    }
    out.push(changed);
  }
  return out;
})()"""


@pytest.fixture(scope="module")
def deck_browser():
    from browser import Browser, find_chromium

    if find_chromium() is None:
        if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
            raise RuntimeError("FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed")
        pytest.skip("browser tests skipped: Chromium is not installed (apt-get install chromium)")
    browser = Browser()
    yield browser
    with contextlib.suppress(OSError):  # Chromium's helpers may still write into its profile as it goes
        browser.close()


@pytest.mark.parametrize("file", CHAPTERS)
def test_deck_figures_respond_offline(deck_browser, file):
    """A deck shows the chapter's precomputed figures, and their sliders work there too, offline; the
    in-page stories260K (chapter 14) writes llama2.c's story in its deck as in the book."""
    deck = SLIDES / f"{Path(file).name}.slides.html"
    page = deck_browser.open(deck.as_uri(), settle=0.5)
    moved = page.evaluate(FRAMES_IN_DECK, await_promise=True)
    assert all(all(figure) for figure in moved), f"{deck.name}: a slider left its figure unchanged: {moved}"
    if page.evaluate("!!document.querySelector('.fromscratch-llama')"):
        demo = "document.querySelector('.fromscratch-llama')"
        page.evaluate(f"{demo}.querySelector('.fs-llama-check').click()")
        assert page.wait_for(f"{demo}.dataset.state === 'done'", timeout=60)
        assert page.evaluate(f"{demo}.dataset.check") == "same"
    assert page.external == [] and page.errors == [], f"{deck.name}: requests out or errors"
