"""Math renders wherever prose is computed: no raw TeX in any cell output, in the built book and in the decks,
in Chromium with the network blocked.

A chapter's computed prose (``viz.prose``, a ``text/markdown`` output) is parsed as MyST in the book
(``nb_render_markdown_format: myst`` in ``_config.yml``), so its ``$...$`` becomes a math span as the
chapter's own Markdown does; the decks' MathJax reads ``$...$`` itself. A precomputed figure
(``viz.frames``) stores ``$...$`` of its frames as math spans, and ``frames.js`` typesets a frame the
sliders swap in. Each page is checked after MathJax has finished: the text of every output, code and
typeset formulas left out, must hold no ``$...$``, ``\\(...\\)`` or ``\\[...\\]``; every frame of every
figure holds no raw ``$...$``; and one swapped-in frame per figure with math shows it typeset.
"""

from __future__ import annotations

import functools
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browser import Browser, find_chromium
from test_built_book import CHAPTERS, HTML

SLIDES = Path(os.environ.get("FROMSCRATCH_SLIDES", ""))
if not os.environ.get("FROMSCRATCH_BOOK_HTML"):
    pytest.skip("set FROMSCRATCH_BOOK_HTML to a built book (make test does)", allow_module_level=True)
if find_chromium() is None:
    if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
        raise RuntimeError("FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed")
    pytest.skip(
        "browser tests skipped: Chromium is not installed (apt-get install chromium)", allow_module_level=True
    )

# The raw TeX left in the text of `root` (outputs only; code, scripts and typeset math left out).
RAW = r"""const rawTex = (root) => {
  const copy = root.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, textarea, mjx-container, .MathJax')
    .forEach((e) => e.remove());
  return (copy.textContent.match(/\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]/g) || []).map((m) => m.slice(0, 80));
};"""
OUTPUTS = "'.cell_output'"  # the book's cell outputs (MyST-NB)
DECK_OUTPUTS = "'.jp-OutputArea-output, .output_area'"  # nbconvert's, in a deck
# Raw TeX in the outputs, and in every stored frame of every precomputed figure (math spans allowed:
# frames.js typesets them when shown).
FIND = (
    "(() => { "
    + RAW
    + """
  const found = [];
  for (const out of document.querySelectorAll(OUTPUTS)) found.push(...rawTex(out));
  for (const [n, figure] of [...document.querySelectorAll('.fromscratch-frames')].entries()) {
    const data = JSON.parse(figure.querySelector('script.fs-data').textContent);
    for (const [i, frame] of data.frames.entries()) {
      const t = document.createElement('template');
      t.innerHTML = frame;
      t.content.querySelectorAll('.math').forEach((e) => e.remove());
      const div = document.createElement('div');
      div.append(t.content);
      found.push(...rawTex(div).map((m) => `figure ${n}, frame ${i}: ${m}`));
    }
  }
  const typeset = [...document.querySelectorAll(OUTPUTS)]
    .reduce((n, out) => n + out.querySelectorAll('mjx-container').length, 0);
  return [found, typeset];
})()"""
)
# Swap a frame with math into every figure that has one: [figure, formulas, typeset] each.
SWAP = """(() => {
  const out = [];
  for (const [n, figure] of [...document.querySelectorAll('.fromscratch-frames')].entries()) {
    const data = JSON.parse(figure.querySelector('script.fs-data').textContent);
    const shown = +figure.dataset.frame;
    const wanted = data.order.findIndex((f, i) => data.frames[f].includes('class="math') && i !== shown);
    if (wanted < 0) continue;
    let rest = wanted;  // the slider positions of that frame (row-major)
    const sliders = [...figure.querySelectorAll('input.fs-control')];
    for (let c = sliders.length - 1; c >= 0; c--) {
      sliders[c].value = rest % data.sizes[c];
      rest = Math.floor(rest / data.sizes[c]);
    }
    sliders[0].dispatchEvent(new Event('input'));
    out.push(n);
  }
  return out;
})()"""
TYPESET = """[...document.querySelectorAll('.fromscratch-frames .fs-frame')].every(
  (v) => [...v.querySelectorAll('.math')].every((m) => m.querySelector('mjx-container')))"""
MATHJAX_READY = (
    "window.MathJax && MathJax.startup && MathJax.startup.promise"
    " ? MathJax.startup.promise.then(() => true) : true"
)


def _check(page, outputs: str) -> dict:
    page.evaluate(MATHJAX_READY, await_promise=True)
    found, formulas = page.evaluate(FIND.replace("OUTPUTS", outputs))
    swapped = page.evaluate(SWAP)
    typeset = page.wait_for(TYPESET, timeout=15) if swapped else True
    return {"raw": found, "formulas": formulas, "swapped": swapped, "typeset": typeset}


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def book_pages(browser) -> dict[str, dict]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        return {file: _check(browser.open(f"{base}/{file}.html"), OUTPUTS) for file in CHAPTERS}
    finally:
        server.shutdown()


@pytest.mark.parametrize("file", CHAPTERS)
def test_book_outputs_hold_no_raw_tex(book_pages, file):
    state = book_pages[file]
    assert state["raw"] == [], f"{file}: TeX left raw in cell outputs (viz.prose, tables, frames)"
    assert state["typeset"], f"{file}: a frame the sliders swapped in kept its formulas untypeset"


@pytest.mark.parametrize("file", CHAPTERS)
def test_deck_outputs_hold_no_raw_tex(browser, file):
    if not os.environ.get("FROMSCRATCH_SLIDES"):
        pytest.skip("set FROMSCRATCH_SLIDES to built decks (make test does)")
    deck = SLIDES / f"{Path(file).name}.slides.html"
    assert deck.is_file(), f"no deck for {file}: run tools/slides.py"
    state = _check(browser.open(deck.as_uri(), settle=0.5), DECK_OUTPUTS)
    assert state["raw"] == [], f"{deck.name}: TeX left raw in cell outputs"
    assert state["typeset"], f"{deck.name}: a frame the sliders swapped in kept its formulas untypeset"


def test_the_check_is_not_vacuous(book_pages):
    """Some chapter's outputs hold typeset formulas (computed prose with math): the outputs were read."""
    assert any(state["formulas"] for state in book_pages.values()), "no typeset formula in any output"
