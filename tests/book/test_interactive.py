"""The built book's interactive figures, used as a reader uses them, in Chromium with the network blocked
().

For every chapter page: each precomputed figure (``viz.frames``) shows another frame when any of its
sliders moves (and its play button steps it), each bertviz view redraws when a head or a thumbnail is
clicked, saved widget state renders its controls, and the in-page stories260K of chapter 14 writes
llama2.c's reference story and continues a prompt at a temperature. No request leaves the machine.
Screenshots of each figure before and after its control moved go to ``<screenshots>/interactive/``.

``EXPECTED`` is how many precomputed figures each chapter has at least.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browser import Browser, find_chromium
from test_built_book import CHAPTERS, HTML, ROOT

from fromscratch.interop.llama2c import STORIES260K_GREEDY_200

if not os.environ.get("FROMSCRATCH_BOOK_HTML"):
    pytest.skip("set FROMSCRATCH_BOOK_HTML to a built book (make test does)", allow_module_level=True)
if find_chromium() is None:
    if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
        raise RuntimeError("FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed")
    pytest.skip(
        "browser tests skipped: Chromium is not installed (apt-get install chromium)", allow_module_level=True
    )

SHOTS = Path(os.environ.get("FROMSCRATCH_SCREENSHOTS", ROOT / "_build" / "screenshots")) / "interactive"
EXPECTED = {  # chapter -> precomputed figures (viz.frames), at least
    "notebooks/01_dot_products": 1,  # the taste sliders
    "notebooks/04_multi_head_attention": 1,  # head x query strength
    "notebooks/06_imdb_classifier": 1,  # block x head
    "notebooks/07_masking_generation": 1,  # temperature x top-k x top-p
    "notebooks/09_encoder_decoder": 1,  # cross-attention, block x head
    "notebooks/11_longer_contexts": 2,  # RoPE per pair, ALiBi per head
    "notebooks/13_beyond_text": 1,  # the class token's maps, block x head
    "notebooks/14_modern_decoders": 2,  # KV cache: key/value heads x length; block x head
    "notebooks/16_flash_attention": 2,  # the tiles of the forward and the backward pass: causal x step
    "notebooks/17_reasoning": 1,  # one held-out problem's samples, step by step through GRPO
    "notebooks/18_interpretability": 1,  # the heads' scores and one head's attention over training
    "notebooks/19_scaling_laws": 1,  # the fitted law along one budget, up to the verification run
}
LLAMA = "notebooks/14_modern_decoders"  # the chapter with stories260K in the page

FIGURES = "[...document.querySelectorAll('.fromscratch-frames')]"
SHOWN = FIGURES + "[{n}].querySelector('.fs-frame').innerHTML"
# Move slider c of figure n to `to`, as a reader's drag does (an input event); return the frame shown.
MOVE = """(() => {{
  const figure = {figures}[{n}], slider = figure.querySelectorAll('input.fs-control')[{c}];
  slider.value = {to}; slider.dispatchEvent(new Event('input', {{bubbles: true}}));
  return [figure.querySelector('.fs-frame').innerHTML, figure.dataset.frame];
}})()"""
SLIDERS = FIGURES + "[{n}].querySelectorAll('input.fs-control')"
# Click the heads and thumbnails of a bertviz view until it draws something else; how many clicks it took.
BERTVIZ = """(() => {{
  const view = document.querySelectorAll('[id^="bertviz"]')[{n}], before = view.innerHTML;
  const rects = [...view.querySelectorAll('rect')];
  for (const [i, rect] of rects.entries()) {{
    rect.dispatchEvent(new MouseEvent('click', {{bubbles: true}}));
    if (view.innerHTML !== before) return i + 1;
  }}
  return 0;
}})()"""


def element_shot(page, selector: str, path: Path) -> Path:
    """A PNG of the element ``selector`` (a JavaScript expression for it), scrolled into the window."""
    tall = page.evaluate(f"{selector}.getBoundingClientRect().height > 0.9 * window.innerHeight")
    page.evaluate(f"{selector}.scrollIntoView({{block: '{'start' if tall else 'center'}'}})")
    time.sleep(0.2)
    box = page.evaluate(
        f"(() => {{ const r = {selector}.getBoundingClientRect();"
        " return [r.x + window.scrollX, r.y + window.scrollY, r.width,"
        " Math.min(r.height, window.innerHeight)]; })()"
    )
    x, y, width, height = box
    clip = {"x": x, "y": y, "width": max(width, 1), "height": max(height, 1), "scale": 1}
    data = page.browser.send("Page.captureScreenshot", {"format": "png", "clip": clip})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(data["data"]))
    return path


@pytest.fixture(scope="module")
def browser_at():
    """A Chromium and the address of the built book, served on 127.0.0.1."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = Browser()
    yield browser, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    with contextlib.suppress(OSError):  # Chromium's helpers may still write into its profile as it goes
        browser.close()


VISITS: dict[str, dict] = {}


def visit(browser_at, file: str) -> dict:
    """Open a chapter once and use every interactive figure on it; what happened."""
    if file in VISITS:
        return VISITS[file]
    browser, base = browser_at
    page = browser.open(f"{base}/{file}.html", settle=0.5)
    name = Path(file).name
    found: dict = {"frames": [], "bertviz": [], "widgets": 0}
    for n in range(page.evaluate(FIGURES + ".length")):
        figure = f"{FIGURES}[{n}]"
        element_shot(page, figure, SHOTS / f"{name}.frames{n}.before.png")
        moves = []
        sliders = SLIDERS.format(n=n)
        starts, tops = zip(*page.evaluate(f"[...{sliders}].map(s => [+s.value, +s.max])"), strict=True)
        for c, (start, top) in enumerate(zip(starts, tops, strict=True)):
            if top == 0:
                continue  # one value: nothing to move
            before = page.evaluate(SHOWN.format(n=n))
            after, frame = page.evaluate(
                MOVE.format(figures=FIGURES, n=n, c=c, to=top if start != top else 0)
            )
            moves.append((c, after != before and after != "", frame))
            if c < len(starts) - 1:  # each slider moves from where the figure started
                page.evaluate(MOVE.format(figures=FIGURES, n=n, c=c, to=start))
        element_shot(page, figure, SHOTS / f"{name}.frames{n}.after.png")
        play = page.evaluate(f"!!{figure}.querySelector('button.fs-play')")
        played = None
        if play:
            before = page.evaluate(SHOWN.format(n=n))
            page.evaluate(f"{figure}.querySelector('button.fs-play').click()")
            time.sleep(1.5)
            page.evaluate(f"{figure}.querySelector('button.fs-play').click()")  # stop
            played = page.evaluate(SHOWN.format(n=n)) != before
        found["frames"].append({"moves": moves, "played": played})
    views = page.evaluate("document.querySelectorAll('[id^=\"bertviz\"]').length")
    if views:
        page.wait_for("document.querySelectorAll('[id^=\"bertviz\"] svg').length", timeout=15)
    for n in range(views):
        view = f"document.querySelectorAll('[id^=\"bertviz\"]')[{n}]"
        element_shot(page, view, SHOTS / f"{name}.bertviz{n}.before.png")
        found["bertviz"].append(page.evaluate(BERTVIZ.format(n=n)))
        element_shot(page, view, SHOTS / f"{name}.bertviz{n}.after.png")
    if page.evaluate(
        "!!document.querySelector('script[type=\"application/vnd.jupyter.widget-state+json\"]')"
    ):
        page.wait_for("document.querySelectorAll('.jupyter-widgets').length > 0", timeout=20)
        found["widgets"] = page.evaluate("document.querySelectorAll('.jupyter-widgets').length")
        found["views"] = page.evaluate(
            "document.querySelectorAll('script[type=\"application/vnd.jupyter.widget-view+json\"]').length"
        )
    if page.evaluate("!!document.querySelector('.fromscratch-llama')"):
        found["llama"] = use_llama(page, name)
    found.update(errors=list(page.errors), failed=[f for f in page.failed if "favicon" not in f])
    found["external"] = list(page.external)
    VISITS[file] = found
    return found


def use_llama(page, name: str) -> dict:
    """Check the greedy story from BOS, then continue a prompt at temperature 1; what the page showed."""
    demo = "document.querySelector('.fromscratch-llama')"
    page.wait_for(f"{demo}.dataset.state === 'ready'", timeout=30)
    element_shot(page, demo, SHOTS / f"{name}.llama.before.png")
    page.evaluate(f"{demo}.querySelector('.fs-llama-check').click()")
    page.wait_for(f"{demo}.dataset.state === 'done'", timeout=60)
    story = page.evaluate(f"{demo}.querySelector('.fs-llama-output').textContent")
    verdict = page.evaluate(f"{demo}.dataset.check")
    element_shot(page, demo, SHOTS / f"{name}.llama.check.png")
    page.evaluate(
        f"(() => {{ const d = {demo}, t = d.querySelector('.fs-llama-temperature');"
        " t.value = '1'; t.dispatchEvent(new Event('input'));"
        " d.querySelector('.fs-llama-prompt').value = 'The little cat';"
        " d.dataset.state = 'asked'; d.querySelector('.fs-llama-generate').click(); })()"
    )
    page.wait_for(f"{demo}.dataset.state === 'done'", timeout=60)
    sampled = page.evaluate(f"{demo}.querySelector('.fs-llama-output').textContent")
    element_shot(page, demo, SHOTS / f"{name}.llama.after.png")
    return {"story": story, "verdict": verdict, "sampled": sampled}


@pytest.mark.parametrize("file", CHAPTERS)
def test_every_precomputed_figure_changes_when_its_sliders_move(browser_at, file):
    found = visit(browser_at, file)
    if file in EXPECTED:
        assert len(found["frames"]) >= EXPECTED[file], f"{file}: fewer interactive figures than expected"
    for n, figure in enumerate(found["frames"]):
        assert figure["moves"], f"{file}, figure {n}: no slider with more than one value"
        still = [c for c, changed, _ in figure["moves"] if not changed]
        assert not still, f"{file}, figure {n}: moving slider(s) {still} left the same picture"
        assert figure["played"] in (None, True), f"{file}, figure {n}: its play button changed nothing"


@pytest.mark.parametrize("file", CHAPTERS)
def test_bertviz_views_redraw_when_clicked(browser_at, file):
    found = visit(browser_at, file)
    assert all(found["bertviz"]), f"{file}: a bertviz view did not redraw when its heads were clicked"


@pytest.mark.parametrize("file", CHAPTERS)
def test_saved_widgets_render_their_controls(browser_at, file):
    found = visit(browser_at, file)
    if found.get("views"):
        assert found["widgets"] > 0, f"{file}: saved widget state but no widget rendered"


@pytest.mark.parametrize("file", CHAPTERS)
def test_interactive_pages_stay_offline_and_without_errors(browser_at, file):
    found = visit(browser_at, file)
    assert found["external"] == [], f"{file} asks the network for these"
    assert found["errors"] == [] and found["failed"] == [], f"{file}: errors while its figures were used"


def test_the_page_llama_writes_llama2cs_story_and_continues_a_prompt(browser_at):
    found = visit(browser_at, LLAMA)
    if "llama" not in found:
        pytest.fail(f"{LLAMA} has no stories260K in the page")
    llama = found["llama"]
    assert llama["verdict"] == "same" and llama["story"] == STORIES260K_GREEDY_200
    assert llama["sampled"].startswith("The little cat") and llama["sampled"] != llama["story"]


def test_the_book_has_the_figures_it_promises(browser_at):
    """The sum over chapters: today's bertviz views, the precomputed figures, and 0 requests out."""
    found = {file: visit(browser_at, file) for file in CHAPTERS}
    frames = sum(len(f["frames"]) for f in found.values())
    views = sum(len(f["bertviz"]) for f in found.values())
    ready = sum(EXPECTED.values())
    assert frames >= ready and views >= 3
    assert sum(len(f["external"]) for f in found.values()) == 0
