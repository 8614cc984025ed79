"""``make slides``: one offline reveal.js deck per chapter, with speaker notes and without solutions.

The decks are built here from the committed notebooks (checked outputs only: fast, no execution);
``make slides`` builds them with the book's executed outputs. A headless Chromium (when installed)
opens a deck with the network blocked and looks at a slide with math.
"""

from __future__ import annotations

import html
import os

import nbformat
import pytest
import slides
from browser import Browser, find_chromium
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from offline_assets import external_urls

CHAPTERS = slides.chapters()
SLIDE = {"slideshow": {"slide_type": "-"}}


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    """Every chapter's deck, built into one folder with its vendor assets: {notebook path: deck path}."""
    out = tmp_path_factory.mktemp("slides")
    slides.copy_assets(out)
    return {path: slides.build_deck(path, out) for path in CHAPTERS}


def solution_lines(path) -> set[str]:
    """Lines that only the notebook's solution cells contain (what must not reach a deck)."""
    nb = nbformat.read(path, as_version=4)
    solution, rest = [], []
    for cell in nb.cells:
        (solution if "solution" in cell.metadata.get("tags", []) else rest).append(cell.source)
    elsewhere = "\n".join(rest)
    lines = {line.strip() for source in solution for line in source.splitlines()}
    return {line for line in lines if len(line) > 25 and line not in elsewhere and not line.startswith("#")}


def test_every_chapter_has_a_deck(decks):
    assert len(decks) == len(CHAPTERS) >= 7
    for path, deck in decks.items():
        assert deck.name == f"{path.stem}.slides.html"
        assert deck.read_text(encoding="utf-8").count("<section") > 3, f"{deck.name} has almost no slides"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_deck_loads_nothing_from_the_network(decks, path):
    page = decks[path].read_text(encoding="utf-8")
    assert external_urls(page) == [], f"{decks[path].name} loads from the network"
    assert "mermaid" not in page.lower() and "MathJax.Hub" not in page
    for local in ("vendor/require.js", "vendor/mathjax/tex-chtml.js", "vendor/revealjs/dist/reveal.js"):
        assert local in page
    assert (decks[path].parent / "vendor" / "revealjs" / "plugin" / "notes" / "notes.js").is_file()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_deck_leaves_out_the_solutions(decks, path):
    page = html.unescape(decks[path].read_text(encoding="utf-8"))
    leaked = [line for line in solution_lines(path) if line in page]
    assert not leaked, f"{decks[path].name} shows solution code: {leaked[:3]}"
    assert "# @title Solution" not in page


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_deck_has_speaker_notes(decks, path):
    assert decks[path].read_text(encoding="utf-8").count('<aside class="notes">') >= 2, (
        f"{path.name}: add at least two speaker-notes cells (slide_type 'notes')"
    )


def test_training_cells_show_results_not_code(tmp_path):
    train = new_code_cell("history = train(model, data, epochs=prof.epochs)", metadata=SLIDE)
    train.outputs = [
        new_output("stream", name="stdout", text="epoch 3: loss 0.41\n"),
        new_output("stream", name="stderr", text="progress |#####| 30/30\n"),
    ]
    tagged = new_code_cell("long_running_loop()", metadata={**SLIDE, "tags": ["slides-output-only"]})
    shown = new_code_cell("x = trainable + 1", metadata=SLIDE)
    solution = new_code_cell("secret_answer = 42", metadata={**SLIDE, "tags": ["solution", "hide-input"]})
    nb = new_notebook(
        cells=[new_markdown_cell("# 99 · Test", metadata=SLIDE), train, tagged, shown, solution]
    )
    deck = tmp_path / "99_test.ipynb"
    nbformat.write(nb, deck)
    page = slides.build_deck(deck, tmp_path).read_text(encoding="utf-8")
    assert "epoch 3: loss 0.41" in page and "30/30" not in page  # the result, not the progress bar
    assert "prof.epochs" not in page and "long_running_loop" not in page
    assert "trainable" in page  # a name that merely contains "train" is not a training call
    assert "secret_answer" not in page


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        if os.environ.get("FROMSCRATCH_REQUIRE_BROWSER"):
            raise RuntimeError("FROMSCRATCH_REQUIRE_BROWSER is set but no Chromium is installed")
        pytest.skip(
            "browser check of the decks skipped: Chromium is not installed (apt-get install chromium)"
        )
    with Browser() as chromium:
        yield chromium


def test_math_slide_is_typeset_offline(decks, browser):
    deck = next(d for p, d in decks.items() if p.stem.startswith("03_"))
    page = browser.open(deck.as_uri())
    assert page.wait_for("window.Reveal !== undefined && Reveal.isReady()", timeout=20), (
        "reveal.js did not start"
    )
    page.evaluate("MathJax.startup.promise.then(() => true)", await_promise=True)
    slide = page.evaluate(
        """(() => { const all = Reveal.getSlides();
                    const i = all.findIndex(s => s.querySelector('mjx-container'));
                    if (i >= 0) { const {h, v} = Reveal.getIndices(all[i]); Reveal.slide(h, v); }
                    return i; })()"""
    )
    assert slide >= 0, "no slide of chapter 03 has typeset math"
    assert page.wait_for("Reveal.getCurrentSlide().querySelector('mjx-container') !== null", timeout=5)
    raw = page.evaluate(
        r"[...Reveal.getCurrentSlide().querySelectorAll('p')].some(p => /\$[^$]+\$/.test(p.innerText))"
    )
    assert not raw, "raw TeX left on the math slide"
    shot = page.screenshot(deck.parent / "math-slide.png", full_page=False)
    assert shot.stat().st_size > 10_000
    assert page.errors == [] and page.failed == [] and page.external == []


def test_speaker_notes_lose_the_books_dropdown(tmp_path):
    notes = new_markdown_cell(
        ":::{admonition} Speaker notes\n:class: dropdown\nAsk: why $\\sqrt{d}$?\n:::",
        metadata={"slideshow": {"slide_type": "notes"}},
    )
    nb = new_notebook(cells=[new_markdown_cell("# 99 · Test", metadata=SLIDE), notes])
    path = tmp_path / "99_test.ipynb"
    nbformat.write(nb, path)
    page = slides.build_deck(path, tmp_path).read_text(encoding="utf-8")
    aside = page.split('<aside class="notes">')[1].split("</aside>")[0]
    assert "Ask: why" in aside and ":::" not in aside and ":class:" not in aside
