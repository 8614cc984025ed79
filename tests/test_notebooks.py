"""The chapter notebooks as committed: clean, set up the same way, and listed in the book."""

from __future__ import annotations

import json
from pathlib import Path

import nbclean
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

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
    cell = code_cells(path)[0]
    first = cell.source
    assert not set(cell.metadata.get("tags", [])) & {"hide-input", "remove-input", "remove-cell"}, (
        "the setup cell is shown: the reader sees where `device` and `prof` come from"
    )
    assert f"git+{REPO_URL}" in first and "fromscratch @" in first, (
        f"the setup cell must install from {REPO_URL} (_config.yml)"
    )
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


def exercise_groups(path: Path) -> list[tuple[int, list[int]]]:
    """Each exercise's solution: ``(index of the first solution cell, indices of its cells)``."""
    cells = nbformat.read(path, as_version=4).cells
    groups: list[tuple[int, list[int]]] = []
    for i, cell in enumerate(cells):
        if "solution" in cell.metadata.get("tags", []):
            if groups and groups[-1][1][-1] == i - 1:
                groups[-1][1].append(i)
            else:
                groups.append((i, [i]))
    return groups


def output_text(cell) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercises_follow_the_learner_cell_pattern(path):
    """statement -> learner cell (stub) -> check cell ("not attempted yet") -> solution (tagged, checked)."""
    cells = nbformat.read(path, as_version=4).cells
    groups = exercise_groups(path)
    assert len(groups) >= 3, "at least three exercises, each with a solution tagged `solution`"
    for first, members in groups:
        where = f"exercise whose solution starts at cell {first}"
        check, learner, statement = cells[first - 1], cells[first - 2], cells[first - 3]
        assert statement.cell_type == "markdown", f"{where}: no statement before the learner cell"
        assert learner.cell_type == "code" and "solution" not in learner.metadata.get("tags", []), where
        assert "..." in learner.source, f"{where}: the learner cell holds no stub (`...`) to fill in"
        assert check.cell_type == "code" and "checks." in check.source, f"{where}: no check cell"
        assert nbclean.CHECK_MARK in check.source, f"{where}: the check cell must be # {nbclean.CHECK_MARK}"
        assert "not attempted yet" in output_text(check), f"{where}: the untouched stub must say so"
        code = [cells[i] for i in members if cells[i].cell_type == "code"]
        assert code, f"{where}: the solution has no code"
        for cell in code:
            assert "hide-input" in cell.metadata.get("tags", []), (
                f"{where}: solutions are collapsed in the book"
            )
            assert cell.metadata.get("cellView") == "form", f"{where}: solutions are collapsed in Colab"
        last = code[-1]
        assert "checks." in last.source and nbclean.CHECK_MARK in last.source, f"{where}: unchecked solution"
        assert "✓" in output_text(last) and "✗" not in output_text(last), f"{where}: the solution must pass"


def test_every_chapter_is_in_the_table_of_contents():
    toc = json.dumps(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    for path in NOTEBOOKS:
        assert f"notebooks/{path.stem}" in toc, f"{path.name} is missing from _toc.yml"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_prose_cell_is_one_call(path):
    """A computed-prose cell (tagged `remove-input`) defines nothing (the verdicts live in the chapter's
    prose.py); from chapter 06 on it is one line that calls a tested function (01-05 keep a few lines of
    f-string)."""
    for i, cell in enumerate(code_cells(path)):
        if "remove-input" not in cell.metadata.get("tags", []):
            continue
        lines = [
            line for line in cell.source.splitlines() if line.strip() and not line.lstrip().startswith("#")
        ]
        where = f"{path.name}, code cell {i}"
        assert not any(line.startswith(("def ", "class ")) for line in lines), f"{where} defines a function"
        assert int(path.name[:2]) < 6 or len(lines) == 1, (
            f"{where}: a prose cell is one call, e.g. viz.prose(prose.x(...)); got {lines}"
        )
