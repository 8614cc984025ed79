"""The chapter notebooks as committed: clean, set up the same way, and listed in the book."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import nbclean  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"]


def code_cells(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_there_are_chapters():
    assert NOTEBOOKS, "notebooks/ holds no chapter"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    problems = nbclean.problems(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: {problems}; run `python tools/nbclean.py --execute {path}`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_setup_cell_installs_from_the_book_repository(path):
    first = code_cells(path)[0].source
    assert f"fromscratch @ git+{REPO_URL}" in first, f"the setup cell must install from {REPO_URL} (_config.yml)"
    assert "fromscratch.setup(" in first


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_colab_badge_points_at_this_notebook(path):
    markdown = "".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    repo = REPO_URL.removeprefix("https://github.com/")
    assert f"colab.research.google.com/github/{repo}/blob/main/notebooks/{path.name}" in markdown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_slide_metadata(path):
    cells = nbformat.read(path, as_version=4).cells
    missing = [i for i, c in enumerate(cells) if "slide_type" not in c.metadata.get("slideshow", {})]
    assert not missing, f"cells without slideshow metadata: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_sizes_come_from_the_profile(path):
    source = "\n".join(c.source for c in code_cells(path))
    assert "prof." in source, "a chapter reads its sizes from the run profile (prof.<section>.<field>)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercise_solutions_are_hidden_and_checked(path):
    cells = code_cells(path)
    solutions = [c for c in cells if "hide-input" in c.metadata.get("tags", [])]
    assert len(solutions) >= 3, "three exercises, each with a hidden solution"
    for cell in solutions:
        assert "exercises.check" in cell.source


def test_every_chapter_is_in_the_table_of_contents():
    toc = json.dumps(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    for path in NOTEBOOKS:
        assert f"notebooks/{path.stem}" in toc, f"{path.name} is missing from _toc.yml"
