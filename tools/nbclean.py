"""Keep chapter notebooks in their committed form: no outputs, no execution counts, no timings.

The one exception: a code cell marked ``# NBVAL_CHECK_OUTPUT`` keeps its output, because that stored
output is what nbval compares in CI. ``--execute`` first runs the notebook in the ``smoke`` profile
(as CI does) so those expected outputs are fresh.

    python tools/nbclean.py notebooks/*.ipynb            # strip
    python tools/nbclean.py --execute notebooks/03_*.ipynb  # run (smoke), keep checked outputs, strip
    python tools/nbclean.py --check notebooks/*.ipynb    # exit 1 if any notebook is not clean
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat

CHECK_MARK = "NBVAL_CHECK_OUTPUT"
# when a cell or a notebook ran: Jupyter/nbclient ("execution"), papermill, the ExecuteTime extension
TIMING_KEYS = ("execution", "papermill", "ExecuteTime")


def is_checked(cell) -> bool:
    """Whether ``cell`` is a code cell whose output CI compares (it contains ``# NBVAL_CHECK_OUTPUT``)."""
    return cell.cell_type == "code" and CHECK_MARK in cell.source


def problems(nb) -> list[str]:
    """What keeps ``nb`` from its committed form (an empty list when it is clean)."""
    found = [f"the notebook metadata has {key!r} (run times)" for key in TIMING_KEYS if key in nb.metadata]
    for i, cell in enumerate(nb.cells):
        found += [f"cell {i} metadata has {key!r} (run times)" for key in TIMING_KEYS if key in cell.metadata]
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is not None:
            found.append(f"cell {i} has an execution count")
        if cell.outputs and not is_checked(cell):
            found.append(f"cell {i} has outputs but no # {CHECK_MARK}")
        for out in cell.outputs:
            if out.get("execution_count") is not None:
                found.append(f"cell {i} has an output with an execution count")
            if "image/png" in out.get("data", {}):
                found.append(f"cell {i} stores an image; checked outputs must be plain text")
    return found


def collapse_setup_cell(nb) -> None:
    """Tag the setup cell (the first code cell, calling ``fromscratch.setup(``) ``hide-input``: the book shows
    it collapsed (readers don't need it; learners in Colab, where the tag does nothing, do)."""
    setup = next((c for c in nb.cells if c.cell_type == "code"), None)
    if setup is not None and "fromscratch.setup(" in setup.source:
        tags = setup.metadata.setdefault("tags", [])
        if "hide-input" not in tags:
            tags.append("hide-input")


def clean(nb) -> None:
    """Bring ``nb`` to its committed form in place: strip outputs (but checked ones), counts and timings;
    collapse the setup cell in the book."""
    collapse_setup_cell(nb)
    for key in TIMING_KEYS:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in TIMING_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        cell.execution_count = None
        if not is_checked(cell):
            cell.outputs = []
            continue
        kept = []
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                continue  # warnings and progress bars are not part of the expected output
            if "execution_count" in out:
                out.execution_count = None
            if "data" in out:
                out.data = {k: v for k, v in out.data.items() if k == "text/plain"}
            kept.append(out)
        cell.outputs = kept
    nb.metadata.pop("widgets", None)


def execute(nb, path: Path) -> None:
    """Run ``nb`` (read from ``path``) in place in the ``smoke`` profile, from the notebook's folder."""
    from nbclient import NotebookClient

    os.environ["FROMSCRATCH_PROFILE"] = "smoke"
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()


def main() -> int:
    """Command line: strip, execute then strip, or check the notebooks given (see the module docstring)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--execute", action="store_true", help="run in the smoke profile before cleaning")
    parser.add_argument("--check", action="store_true", help="only report notebooks that are not clean")
    args = parser.parse_args()
    status = 0
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        if args.check:
            for problem in problems(nb):
                print(f"{path}: {problem}")
                status = 1
            continue
        if args.execute:
            execute(nb, path)
        clean(nb)
        nbformat.write(nb, path)
        print(f"cleaned {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
