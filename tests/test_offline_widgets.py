"""The book's own widget manager and its interactive figures, in a real browser with the network blocked:
saved ipywidgets state renders its controls and ``Play`` moves a ``jslink``ed slider with the
vendored ``@jupyter-widgets/html-manager``; a ``viz.frames`` figure changes when its slider moves; the
in-page stories260K writes llama2.c's reference story. Pages are built here from the same pieces the book
uses, so these run without a book build; ``tests/book/test_interactive.py`` checks the built book.

The browser parts skip without Chromium (unless ``FROMSCRATCH_REQUIRE_BROWSER`` is set).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch
import yaml
from browser import Browser, find_chromium
from offline_assets import (
    WIDGET_DIR,
    WIDGET_FILES,
    WIDGET_REQUIRE_CONFIG,
    WIDGETS,
    check_widgets,
    copy_widgets,
    locate,
)

from fromscratch import viz
from fromscratch.chapters.ch14_modern_decoders import in_browser as ch14_in_browser

ROOT = Path(__file__).resolve().parents[1]


def test_the_vendored_widget_manager_is_the_pinned_one_with_its_licences():
    check_widgets()  # every file's sha256 as pinned in offline_assets.WIDGET_FILES
    assert "Redistribution and use in source and binary forms" in (WIDGETS / "LICENSE").read_text()
    assert "SIL OFL" in (WIDGETS / "LICENSE-fontawesome.txt").read_text()
    readme = (WIDGETS / "README.md").read_text()
    assert "@jupyter-widgets/html-manager" in readme and "1.0.15" in readme


def test_copy_widgets_lays_the_manager_out_where_the_book_loads_it(tmp_path):
    embed = copy_widgets(tmp_path / "vendor")
    assert embed == tmp_path / "vendor" / WIDGET_DIR / "embed-amd.js"
    assert {p.name for p in embed.parent.iterdir()} == set(WIDGET_FILES)
    fonts = {p.name for p in (tmp_path / "vendor" / "@jupyter-widgets").glob("*.woff2")}
    assert fonts == {name for name in WIDGET_FILES if name.endswith(".woff2")}
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["nb_ipywidgets_js"]
    assert list(config) == [f"vendor/{WIDGET_DIR}/embed-amd.js"]  # under _static/: the file copied above


# --- in Chromium ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder with the book's vendor files served on 127.0.0.1, and a Chromium: (folder, base, browser)."""
    if find_chromium() is None:
        if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
            raise RuntimeError("FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed")
        pytest.skip("browser tests skipped: Chromium is not installed (apt-get install chromium)")
    folder = tmp_path_factory.mktemp("site")
    vendor = folder / "_static" / "vendor"
    copy_widgets(vendor)
    shutil.copyfile(locate("require.js"), vendor / "require.js")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = Browser()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}", browser
    server.shutdown()
    try:
        browser.close()
    except OSError:  # Chromium's helpers may still write into the profile as it is removed: once more
        time.sleep(1)
        shutil.rmtree(browser._profile.name, ignore_errors=True)


def page(site, name: str, body: str, head: str = ""):
    folder, base, browser = site
    head = f"<meta charset='utf-8'>{head}"
    html = f"<!doctype html><html data-content_root='./'><head>{head}</head><body>{body}</body></html>"
    (folder / name).write_text(html, encoding="utf-8")
    return browser.open(f"{base}/{name}", settle=0.5)


def no_trouble(shown) -> None:
    assert shown.external == [], "requests that would leave the machine"
    assert [f for f in shown.failed if "favicon" not in f] == [] and shown.errors == []


def test_saved_widget_state_renders_and_play_moves_a_jslinked_slider(site):
    widgets = pytest.importorskip("ipywidgets")
    from ipywidgets.embed import embed_data

    play = widgets.Play(value=0, min=0, max=5, interval=50)
    slider = widgets.IntSlider(value=0, min=0, max=5, description="step")
    widgets.jslink((play, "value"), (slider, "value"))
    data = embed_data(views=[widgets.HBox([play, slider])])
    views = "".join(
        f'<script type="application/vnd.jupyter.widget-view+json">{json.dumps(v)}</script>'
        for v in data["view_specs"]
    )
    head = (  # what the book's pages hold: require.js, the paths line, the manager (deferred), the state
        '<script src="_static/vendor/require.js"></script>'
        f"<script>{WIDGET_REQUIRE_CONFIG}</script>"
        f'<script defer src="_static/vendor/{WIDGET_DIR}/embed-amd.js"></script>'
        '<script type="application/vnd.jupyter.widget-state+json">'
        f"{json.dumps(data['manager_state'])}</script>"
    )
    shown = page(site, "widgets.html", views, head)
    assert shown.wait_for("!!document.querySelector('.widget-readout')", timeout=20), "no slider rendered"
    assert shown.evaluate("document.querySelector('.widget-readout').textContent") == "0"
    shown.evaluate("document.querySelector('.widget-play button').click()")
    assert shown.wait_for("document.querySelector('.widget-readout').textContent === '5'", timeout=10)
    fonts = "[...document.fonts].filter(f => f.family.includes('Font Awesome')).map(f => f.status)"
    assert "loaded" in shown.evaluate(fonts)  # the play button's icons, from the vendored fonts
    no_trouble(shown)


def test_a_frames_figure_changes_when_its_slider_moves(site):
    torch.manual_seed(0)
    layers = [torch.softmax(torch.randn(1, 2, 3, 3), -1) for _ in range(2)]
    figure = viz.attention_frames(layers, ["a", "b", "c"])
    shown = page(site, "frames.html", figure._repr_html_())
    before = shown.evaluate("document.querySelector('.fs-frame').innerHTML")
    assert before == figure.frame([0, 0])
    shown.evaluate(
        "(() => { const s = document.querySelectorAll('input.fs-control')[1];"
        " s.value = 2; s.dispatchEvent(new Event('input')); })()"
    )
    assert shown.evaluate("document.querySelector('.fs-frame').innerHTML") == figure.frame([0, 2])
    assert shown.evaluate("document.querySelectorAll('.fs-controls output')[1].textContent") == "mean"
    no_trouble(shown)


def test_the_page_llama_writes_llama2cs_story(site):
    mirror = os.environ.get("FROMSCRATCH_MIRROR")
    if not mirror or not (Path(mirror) / "tinyllamas" / "stories260K.bin").is_file():
        pytest.skip("set FROMSCRATCH_MIRROR to the course's data mirror (CI: ../shared/data)")
    from fromscratch.data import fetch
    from fromscratch.data.pretrained import STORIES260K
    from fromscratch.interop.llama2c import STORIES260K_GREEDY_200

    files = [fetch(STORIES260K[name]) for name in ("stories260K.bin", "tok512.bin")]
    demo = ch14_in_browser.llama_in_browser(*files, reference=STORIES260K_GREEDY_200)
    shown = page(site, "llama.html", demo._repr_html_())
    assert shown.wait_for("document.querySelector('.fromscratch-llama').dataset.state === 'ready'")
    shown.evaluate("document.querySelector('.fs-llama-check').click()")
    assert shown.wait_for("document.querySelector('.fromscratch-llama').dataset.state === 'done'", timeout=60)
    assert shown.evaluate("document.querySelector('.fromscratch-llama').dataset.check") == "same"
    assert shown.evaluate("document.querySelector('.fs-llama-output').textContent") == STORIES260K_GREEDY_200
    no_trouble(shown)
