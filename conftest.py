"""pytest configuration for the chapter notebooks (``pytest --nbval-lax notebooks``).

Notebooks are committed without execution counts. nbval, though, only compares the stored output
of a cell that has one ("Unrun reference cell has outputs" otherwise). The cells we check are the
ones marked ``# NBVAL_CHECK_OUTPUT``, whose expected output is committed; give them a count here,
in memory, so nbval compares them. Nothing is written back to the notebook.
"""

from __future__ import annotations

import functools


def pytest_collection_modifyitems(items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and getattr(cell, "outputs", None) and cell.get("execution_count") is None:
            cell.execution_count = 1


def pytest_configure(config):
    """Run notebook cells as Jupyter and the book build do: with history stored.

    nbval executes every cell with ``store_history=False``, and IPython then cannot see the cell's
    trailing ``;`` (it looks it up in the history), so a checked cell ending in ``check(...);`` would
    show an extra ``True`` that the book (nbclient, history stored) never shows.
    """
    try:
        from nbval.kernel import RunningKernel
    except ImportError:  # nbval not installed: nothing to align
        return
    original = RunningKernel.execute_cell_input

    @functools.wraps(original)
    def execute_cell_input(self, cell_input, allow_stdin=None):
        return self.kc.execute(cell_input, allow_stdin=allow_stdin, store_history=True, stop_on_error=False)

    RunningKernel.execute_cell_input = execute_cell_input
