"""Checks of the built book (``make test`` runs them after building it into ``_build/smoke``).

They look at what a reader gets: every page of the table of contents, executed chapters with
their figures, no error output. ``test_browser.py`` opens every page in Chromium.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("FROMSCRATCH_BOOK_HTML", ""))
pytestmark = pytest.mark.skipif(
    not os.environ.get("FROMSCRATCH_BOOK_HTML"),
    reason="set FROMSCRATCH_BOOK_HTML to a built book (make test does)",
)


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return files


CHAPTERS = [f for f in toc_files() if f.startswith("notebooks/")]


def page(file: str) -> str:
    return (HTML / f"{file}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("file", toc_files())
def test_every_page_was_built(file):
    assert (HTML / f"{file}.html").is_file(), f"{file} is in _toc.yml but was not built"


@pytest.mark.parametrize("file", CHAPTERS)
def test_chapters_are_executed_with_figures_and_no_errors(file):
    html = page(file)
    assert "cell_output" in html, f"{file} has no outputs: was it executed?"
    assert re.search(r'<img[^>]+src="[^"]*_images/', html), f"{file} shows no figure"
    for bad in ("Traceback (most recent call last)", "output error", "Error in callback"):
        assert bad not in html, f"{file} shows an error output ({bad!r})"


def test_chapter_1_shows_the_rmse_table():
    html = page("notebooks/01_dot_products")
    assert "RMSE" in html and "global mean" in html.lower()


def test_bibliography_and_execution_table_are_filled():
    assert "Vaswani" in page("book/references") and "Koren" in page("book/references")
    assert "01_dot_products" in page("book/exec_stats")
