"""pytest configuration for the chapter notebooks (``pytest --nbval-lax notebooks``).

Notebooks are committed without execution counts. nbval, though, only compares the stored output
of a cell that has one ("Unrun reference cell has outputs" otherwise). The cells we check are the
ones marked ``# NBVAL_CHECK_OUTPUT``, whose expected output is committed; give them a count here,
in memory, so nbval compares them. Nothing is written back to the notebook.
"""

from __future__ import annotations


def pytest_collection_modifyitems(items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and getattr(cell, "outputs", None) and cell.get("execution_count") is None:
            cell.execution_count = 1
