"""tools/nbclean.py brings a run notebook back to its committed form, and --check tells when it is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbclean
import nbformat
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


def test_clean_collapses_the_setup_cell_once():
    setup = new_code_cell("import fromscratch\n\ndevice, prof = fromscratch.setup(seed=0)", metadata=SLIDE)
    nb = new_notebook(
        cells=[new_markdown_cell("# 01 · Title", metadata=SLIDE), setup, new_code_cell("1 + 1")]
    )
    nbclean.clean(nb)
    nbclean.clean(nb)
    assert nb.cells[1].metadata["tags"] == ["hide-input"]
    assert "tags" not in nb.cells[2].metadata  # only the setup cell
