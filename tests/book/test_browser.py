"""Every page of the built book in a real browser, served from ``_build/html`` with the network blocked.

One headless Chromium (``tools/browser.py``) visits each page of ``_toc.yml`` once, in the light and
the dark theme, and records what a reader offline would get: console errors, failed requests,
requests that tried to leave the machine, math that MathJax did not typeset, figures that did not load
or would vanish on the dark page, bertviz views without their SVG. Screenshots of both themes go to
``_build/screenshots/`` (``FROMSCRATCH_SCREENSHOTS`` elsewhere) for a person to look at.

Without Chromium the module is skipped with one line, unless ``FROMSCRATCH_REQUIRE_BROWSER`` is set
(CI sets it after installing Chromium), where that is an error.
"""

from __future__ import annotations

import functools
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browser import Browser, find_chromium
from test_built_book import CHAPTERS, HTML, ROOT, toc_files

if not os.environ.get("FROMSCRATCH_BOOK_HTML"):
    pytest.skip("set FROMSCRATCH_BOOK_HTML to a built book (make test does)", allow_module_level=True)
if find_chromium() is None:
    if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
        raise RuntimeError(
            "FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed (apt-get install chromium)"
        )
    pytest.skip(
        "browser tests skipped: Chromium is not installed (apt-get install chromium)", allow_module_level=True
    )

SHOTS = Path(os.environ.get("FROMSCRATCH_SCREENSHOTS", ROOT / "_build" / "screenshots"))
VISIBLE = 0.01  # a figure must differ clearly from the dark page in at least 1% of its pixels

# How much of each figure stands out from the page background: the image drawn over the page's colour
# on a canvas (no CSS filters), the share of pixels that differ from it by more than 120 (sum over RGB).
FIGURE_CONTRAST = """(async () => {
  const bg = getComputedStyle(document.body).backgroundColor;
  const [r, g, b] = bg.match(/\\d+/g).map(Number);
  const out = [];
  for (const img of document.querySelectorAll('img[src*="_images/"]')) {
    if (!img.complete || !img.naturalWidth) { out.push([img.getAttribute('src'), 0]); continue; }
    const c = document.createElement('canvas');
    const w = c.width = Math.min(img.naturalWidth, 400);
    const h = c.height = Math.max(1, Math.round(img.naturalHeight * w / img.naturalWidth));
    const ctx = c.getContext('2d');
    ctx.fillStyle = bg; ctx.fillRect(0, 0, w, h); ctx.drawImage(img, 0, 0, w, h);
    const d = ctx.getImageData(0, 0, w, h).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) > 120) n++;
    }
    out.push([img.getAttribute('src'), n / (w * h)]);
  }
  return out;
})()"""

STATE = """(() => ({
  math: document.querySelectorAll('.math').length,
  untypeset: [...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container'))
      .map(e => e.textContent.slice(0, 60)),
  broken: [...document.querySelectorAll('img')].filter(i => !(i.complete && i.naturalWidth > 0))
      .map(i => i.getAttribute('src')),
  figures: document.querySelectorAll('img[src*="_images/"]').length,
  bertviz: document.querySelectorAll('[id^="bertviz"]').length,
  bertviz_svg: document.querySelectorAll('[id^="bertviz"] svg').length,
  setup_hidden: [...document.querySelectorAll('div.cell')]
      .filter(c => c.textContent.includes('fromscratch.setup(')).slice(0, 1)
      .map(c => c.classList.contains('tag_hide-input')),
}))()"""


@pytest.fixture(scope="module")
def visits(tmp_path_factory) -> dict[str, dict]:
    """Visit every page of the book once; what each did, by its _toc.yml name."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # no access log on the test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    found = {}
    with Browser() as browser:
        for file in toc_files():
            page = browser.open(f"{base}/{file}.html")
            if page.evaluate("document.querySelectorAll('.math').length"):
                page.evaluate("MathJax.startup.promise.then(() => true)", await_promise=True)
            if page.evaluate("document.querySelectorAll('[id^=\"bertviz\"]').length"):
                page.wait_for("document.querySelectorAll('[id^=\"bertviz\"] svg').length", timeout=15)
            state = page.evaluate(STATE)
            page.screenshot(SHOTS / f"{Path(file).name}.light.png")
            page.evaluate(
                "document.documentElement.dataset.mode = document.documentElement.dataset.theme = 'dark'"
            )
            state["dark_contrast"] = page.evaluate(FIGURE_CONTRAST, await_promise=True)
            page.screenshot(SHOTS / f"{Path(file).name}.dark.png")
            state.update(errors=page.errors, failed=[f for f in page.failed if "favicon.ico" not in f])
            found[file] = {**state, "external": page.external}
    server.shutdown()
    return found


@pytest.mark.parametrize("file", toc_files())
def test_page_has_no_console_errors_and_no_failed_requests(visits, file):
    assert visits[file]["errors"] == [], f"{file}: console errors"
    assert visits[file]["failed"] == [], f"{file}: failed requests"
    assert visits[file]["broken"] == [], f"{file}: images that did not load"


@pytest.mark.parametrize("file", toc_files())
def test_page_makes_no_external_request(visits, file):
    assert visits[file]["external"] == [], f"{file} asks the network for these (they fail offline)"


@pytest.mark.parametrize("file", toc_files())
def test_math_is_typeset(visits, file):
    assert visits[file]["untypeset"] == [], f"{file}: formulas left as raw TeX"


@pytest.mark.parametrize("file", CHAPTERS)
def test_chapter_figures_show_on_the_dark_theme(visits, file):
    contrast = visits[file]["dark_contrast"]
    if visits[file]["figures"]:
        assert contrast, f"{file}: figures were not measured"
    faint = [src for src, share in contrast if share < VISIBLE]
    assert not faint, f"{file}: figures that vanish on the dark page (transparent background?): {faint}"
    for theme in ("light", "dark"):
        shot = SHOTS / f"{Path(file).name}.{theme}.png"
        assert shot.stat().st_size > 20_000, f"the {theme} screenshot of {file} looks empty"


@pytest.mark.parametrize("file", CHAPTERS)
def test_bertviz_views_render_their_svg(visits, file):
    state = visits[file]
    if state["bertviz"]:
        assert state["bertviz_svg"] > 0, f"{file}: bertviz views without their SVG (d3 did not load?)"


@pytest.mark.parametrize("file", CHAPTERS)
def test_setup_cell_is_shown(visits, file):
    assert visits[file]["setup_hidden"] == [False], (
        f"{file}: the setup cell (where `device` and `prof` come from) must be on the page, not collapsed"
    )


def test_the_book_uses_math_and_bertviz_somewhere(visits):
    """The checks above are not vacuous: some page has math, some chapter a bertviz view."""
    assert any(v["math"] for v in visits.values())
    assert any(v["bertviz_svg"] for v in visits.values())
