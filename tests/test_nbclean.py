"""tools/nbclean.py brings a run notebook back to its committed form, --check tells when it is not, and
the chapters' course cells (Colab badge, setup cell) are written from pyproject.toml's [project.urls]."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbclean
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "nbclean.py"

TIMESTAMPS = {
    "iopub.execute_input": "2025-01-01T10:00:00.1Z",
    "shell.execute_reply": "2025-01-01T10:00:00.2Z",
}
SLIDE = {"slideshow": {"slide_type": "-"}}


def run_notebook():
    """A notebook as Jupyter leaves it after a run: counts, outputs, timings everywhere."""
    plain = new_code_cell("print('hello')", execution_count=1, metadata={**SLIDE, "execution": TIMESTAMPS})
    plain.outputs = [new_output("stream", name="stdout", text="hello\n")]
    checked = new_code_cell(
        "# NBVAL_CHECK_OUTPUT\n1 + 1", execution_count=2, metadata={"execution": TIMESTAMPS}
    )
    checked.outputs = [
        new_output("stream", name="stdout", text="kept\n"),
        new_output("stream", name="stderr", text="a warning\n"),
        new_output("execute_result", data={"text/plain": "2", "text/html": "<b>2</b>"}, execution_count=2),
    ]
    nb = new_notebook(cells=[new_markdown_cell("# 01 · Title", metadata=SLIDE), plain, checked])
    nb.metadata.update(
        execution={"start": "2025-01-01T10:00:00Z", "end": "2025-01-01T10:01:00Z"},
        papermill={"duration": 60.0, "start_time": "2025-01-01T10:00:00Z"},
        widgets={"application/vnd.jupyter.widget-state+json": {}},
        kernelspec={"name": "python3", "display_name": "Python 3", "language": "python"},
    )
    return nb


def test_problems_name_counts_outputs_and_timings():
    found = nbclean.problems(run_notebook())
    assert "cell 1 has an execution count" in found
    assert "cell 1 has outputs but no # NBVAL_CHECK_OUTPUT" in found
    assert "cell 2 has an output with an execution count" in found
    assert "the notebook metadata has 'execution' (run times)" in found
    assert "the notebook metadata has 'papermill' (run times)" in found
    assert (
        "cell 1 metadata has 'execution' (run times)" in found
        and "cell 2 metadata has 'execution' (run times)" in found
    )
    assert not any("cell 0" in problem for problem in found)  # the markdown cell is clean


def test_clean_keeps_checked_plain_text_and_strips_the_rest():
    nb = run_notebook()
    nbclean.clean(nb)
    assert nbclean.problems(nb) == []
    nbformat.validate(nb)
    markdown, plain, checked = nb.cells
    assert plain.outputs == [] and plain.execution_count is None
    assert [out.get("text") for out in checked.outputs] == [
        "kept\n",
        None,
    ]  # stderr (warnings, progress) goes
    assert checked.outputs[1].data == {"text/plain": "2"} and checked.outputs[1].execution_count is None
    assert all("execution" not in cell.metadata for cell in nb.cells)
    assert plain.metadata == SLIDE and markdown.metadata == SLIDE  # the slide metadata stays
    assert set(nb.metadata) == {"kernelspec"}  # timings and the widget state go


def test_command_line_check_then_strip(tmp_path):
    path = tmp_path / "01_title.ipynb"
    nbformat.write(run_notebook(), path)

    def tool(*args):
        return subprocess.run([sys.executable, str(TOOL), *args, str(path)], capture_output=True, text=True)

    check = tool("--check")
    assert check.returncode == 1 and "metadata has 'execution'" in check.stdout
    assert tool().returncode == 0
    assert tool("--check").returncode == 0
    assert nbformat.read(path, as_version=4).cells[2].outputs[0].text == "kept\n"


def test_clean_leaves_the_setup_cell_shown():
    setup = new_code_cell("import fromscratch\n\ndevice, prof = fromscratch.setup(seed=0)", metadata=SLIDE)
    nb = new_notebook(
        cells=[new_markdown_cell("# 01 · Title", metadata=SLIDE), setup, new_code_cell("1 + 1")]
    )
    nbclean.clean(nb)
    assert "tags" not in nb.cells[1].metadata  # the reader sees where `device` and `prof` come from


URLS = nbclean.CourseUrls(
    repository="https://github.com/someone/course", documentation="https://someone.github.io/course/"
)
OLD_SETUP = (
    "import subprocess\nimport sys\n\n"
    'if "google.colab" in sys.modules:\n'
    '    url = "git+https://github.com/old/place"\n'
    '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"fromscratch @ {url}"])\n'
    "import fromscratch\n\ndevice, prof = fromscratch.setup(seed=0)"
)


def chapter(title: str) -> nbformat.NotebookNode:
    """A chapter's skeleton: the title cell, the setup cell (tagged, with slide metadata), a code cell."""
    setup = new_code_cell(OLD_SETUP, metadata={**SLIDE, "tags": ["hide-input"]})
    return new_notebook(cells=[new_markdown_cell(title, metadata=SLIDE), setup, new_code_cell("1 + 1")])


def test_course_urls_come_from_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n\n[project.urls]\n'
        f'Repository = "{URLS.repository}/"\nDocumentation = "{URLS.documentation}"\n'
    )
    assert nbclean.course_urls(pyproject) == URLS  # the trailing slash of the repository goes
    assert URLS.slug == "someone/course"
    pyproject.write_text('[project.urls]\nRepository = "https://gitlab.com/someone/course"\n')
    with pytest.raises(ValueError, match="lacks Documentation"):
        nbclean.course_urls(pyproject)
    assert nbclean.course_urls().repository.startswith("https://github.com/")  # the course's own


def test_write_course_cells_replaces_the_badge_and_the_setup_cell():
    old_badge = (
        "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://x/y.ipynb)"
    )
    nb = chapter(f"# 07 · Title\n\n{old_badge}\n\nMotivation.")
    assert len(nbclean.course_problems(nb, "07_title.ipynb", URLS)) == 2
    nbclean.write_course_cells(nb, "07_title.ipynb", URLS)
    nbclean.write_course_cells(nb, "07_title.ipynb", URLS)  # twice: the same
    title, setup, other = nb.cells
    expected = (
        "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        "(https://colab.research.google.com/github/someone/course/blob/main/notebooks/07_title.ipynb)"
    )
    assert title.source == f"# 07 · Title\n\n{expected}\n\nMotivation."
    assert setup.source == nbclean.setup_source(URLS)
    assert 'url = "git+https://github.com/someone/course"' in setup.source
    assert setup.metadata == {**SLIDE, "tags": ["hide-input"]} and other.source == "1 + 1"
    assert nbclean.course_problems(nb, "07_title.ipynb", URLS) == []
    assert nbclean.course_problems(nb, "08_other.ipynb", URLS) == [
        f"the Colab badge under the title is not {nbclean.badge(URLS, '08_other.ipynb')}"
    ]


def test_write_course_cells_adds_a_missing_badge_under_the_title():
    nb = chapter("# 07 · Title\nMotivation.")
    nbclean.write_course_cells(nb, "07_title.ipynb", URLS)
    assert nb.cells[0].source == f"# 07 · Title\n\n{nbclean.badge(URLS, '07_title.ipynb')}\n\nMotivation."


def test_write_course_cells_needs_a_chapter():
    nb = new_notebook(cells=[new_markdown_cell("# Notes"), new_code_cell("print(1)")])
    assert nbclean.course_problems(nb, "notes.ipynb", URLS) == []  # not a chapter: nothing to check
    with pytest.raises(ValueError, match="fromscratch.setup"):
        nbclean.write_course_cells(nb, "notes.ipynb", URLS)


def test_the_setup_cell_shows_pip_and_fits_the_text_column():
    source = nbclean.setup_source(URLS)
    assert '%pip install "fromscratch @ {url}"' in source  # IPython puts in the url; pip's messages show
    assert " -q" not in source and "subprocess" not in source and "--upgrade" not in source
    assert "# %env FROMSCRATCH_DATA=/content/drive/MyDrive/fromscratch" in source  # the Drive option, off
    assert max(len(line) for line in source.splitlines()) <= 88
    assert "fromscratch.setup(" in source


def test_command_line_urls_writes_only_the_course_cells(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        f'[project.urls]\nRepository = "{URLS.repository}"\nDocumentation = "{URLS.documentation}"\n'
    )
    nb = chapter("# 07 · Title\n\nMotivation.")
    nb.cells[2].outputs = [new_output("stream", name="stdout", text="2\n")]  # not the tool's business here
    nb.cells[2].execution_count = 3
    path = tmp_path / "07_title.ipynb"
    nbformat.write(nb, path)

    def tool(*args):
        command = [sys.executable, str(TOOL), *args, "--pyproject", str(pyproject), str(path)]
        return subprocess.run(command, capture_output=True, text=True)

    check = tool("--check")
    assert check.returncode == 1 and "the setup cell is not the one made from" in check.stdout
    assert tool("--urls").returncode == 0
    written = nbformat.read(path, as_version=4)
    assert nbclean.course_problems(written, path.name, URLS) == []
    assert written.cells[2].outputs[0].text == "2\n" and written.cells[2].execution_count == 3
    assert "has an execution count" in tool("--check").stdout  # --urls stripped nothing
    assert tool().returncode == 0 and tool("--check").returncode == 0
