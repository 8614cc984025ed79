"""Run the book's chapters into a jupyter-cache, several at a time, so that the book build finds them there.

``jupyter-book build`` (myst-nb, ``execute_notebooks: cache``) runs every notebook it does not find in its
cache, one after the other. ``make test`` builds the book in the ``smoke`` profile, where a chapter takes
seconds and most of them go to starting a kernel and importing torch: running two chapters at once on
two cores roughly halves that wait. This script does what myst-nb does for one notebook (the same
``single_nb_execution``, in the notebook's folder, the same cache record), for all of them in parallel;
the build then uses the cached outputs and executes nothing. Nothing is cached for a chapter that
fails: the build runs it again and reports its error as usual.

Not for ``make book`` in the ``cpu`` profile: there the chapters time their training steps, and two
chapters sharing the cores would slow each other down.

    python tools/execute_book.py --cache _build/smoke/_build/.jupyter_cache notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["timeout"]  # seconds per cell


def execute(path: Path) -> tuple[Path, nbformat.NotebookNode | None, float, str]:
    """Run one notebook in its own folder: (path, the executed notebook or None, seconds, error)."""
    from jupyter_cache.executors.utils import single_nb_execution

    notebook = nbformat.read(path, as_version=4)
    result = single_nb_execution(notebook, cwd=str(path.parent), allow_errors=False, timeout=TIMEOUT)
    return path, None if result.err else notebook, result.time, result.exc_string or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, required=True, help="the build's jupyter-cache folder")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks at a time")
    args = parser.parse_args()

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord

    cache = get_cache(str(args.cache))
    paths = [p.resolve() for p in args.notebooks]
    todo = []
    for path in paths:
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(path)
    cached = len(paths) - len(todo)
    print(f"execute_book: {cached} cached, {len(todo)} to run, {args.jobs} at a time", flush=True)
    started, failed = time.perf_counter(), []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for path, notebook, seconds, error in pool.map(execute, todo):
            if notebook is None:
                failed.append(path.name)
                print(f"  {path.name}: FAILED after {seconds:.1f} s (the build runs it again)")
                print(error[-2000:])
                continue
            record = cache.add_nb_to_project(str(path))
            NbProjectRecord.remove_tracebacks([record.pk], cache.db)
            bundle = CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds})
            cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
            print(f"  {path.name}: {seconds:.1f} s", flush=True)
    # a failure is the build's to report, with its traceback, as for any chapter: exit 0 either way
    print(f"execute_book: {time.perf_counter() - started:.0f} s, {len(failed)} failed", flush=True)


if __name__ == "__main__":
    main()
