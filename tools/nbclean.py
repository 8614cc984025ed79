"""Keep chapter notebooks in their committed form: no outputs, no execution counts, no timings.

The one exception: a code cell marked ``# NBVAL_CHECK_OUTPUT`` keeps its output, because that stored
output is what nbval compares in CI. ``--execute`` first runs the notebook in the ``smoke`` profile
(as CI does) so those expected outputs are fresh.

Each chapter's *course cells* are written here too, from the course's addresses in pyproject.toml's
``[project.urls]`` (the one place that names them): the *Open in Colab* badge under the title and the
setup cell (the first code cell), which installs the package on Colab with ``%pip`` (pip's messages
and errors show in the cell) and offers, commented out, to keep the data cache on Google Drive.

    python tools/nbclean.py notebooks/*.ipynb            # strip, write the course cells
    python tools/nbclean.py --execute notebooks/03_*.ipynb  # run (smoke), keep checked outputs, strip
    python tools/nbclean.py --check notebooks/*.ipynb    # exit 1 if any notebook is not clean
    python tools/nbclean.py --urls notebooks/*.ipynb     # only write the course cells, touch nothing else
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

CHECK_MARK = "NBVAL_CHECK_OUTPUT"
# when a cell or a notebook ran: Jupyter/nbclient ("execution"), papermill, the ExecuteTime extension
TIMING_KEYS = ("execution", "papermill", "ExecuteTime")

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
BRANCH = "main"  # the branch the badges open in Colab; _config.yml's repository.branch (a test checks)
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE_LINE = re.compile(r"^\[!\[Open In Colab\]\(.*\)\]\(.*\)[ \t]*$", re.MULTILINE)
# The first code cell of every chapter. On Colab, `%pip` shows pip's output, errors included (a failed
# install then stops at `import fromscratch`, under pip's reason); the default upgrade strategy keeps
# every package Colab already has whose version our ranges admit (tests/test_install.py checks them
# against Colab's versions). Elsewhere the cell only imports the package and sets up.
SETUP_CELL = """\
import sys

if "google.colab" in sys.modules:  # install the course package on Colab
    url = "git+{repository}"
    %pip install "fromscratch @ {{url}}"
    # Keep datasets and checkpoints on Google Drive (they outlive the VM): uncomment
    # from google.colab import drive; drive.mount("/content/drive")
    # %env FROMSCRATCH_DATA=/content/drive/MyDrive/fromscratch
import fromscratch

device, prof = fromscratch.setup(seed=0)"""


@dataclass(frozen=True)
class CourseUrls:
    """The course's addresses, from pyproject.toml's ``[project.urls]``."""

    repository: str  # the GitHub repository, https://github.com/<owner>/<name>
    documentation: str  # where the published book will be (GitHub Pages), https://<owner>.github.io/<name>/

    @property
    def slug(self) -> str:
        """``<owner>/<name>`` of the repository, as Colab's GitHub addresses name it."""
        return self.repository.removeprefix("https://github.com/")


def course_urls(pyproject: Path = PYPROJECT) -> CourseUrls:
    """Read ``Repository`` and ``Documentation`` from ``[project.urls]`` of ``pyproject``."""
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise SystemExit(
                "nbclean reads pyproject.toml: use Python 3.11+ (or pip install tomli)"
            ) from None
    urls = tomllib.loads(Path(pyproject).read_text()).get("project", {}).get("urls", {})
    missing = [key for key in ("Repository", "Documentation") if key not in urls]
    if missing:
        raise ValueError(
            f"{pyproject}: [project.urls] lacks {', '.join(missing)}; the course cells need both"
        )
    repository = urls["Repository"].rstrip("/")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository):
        raise ValueError(
            f"{pyproject}: Repository must be https://github.com/<owner>/<name>, not {repository!r}"
        )
    return CourseUrls(repository=repository, documentation=urls["Documentation"])


def badge(urls: CourseUrls, notebook: str) -> str:
    """The *Open in Colab* badge line of the chapter file ``notebook`` (``07_masking_generation.ipynb``)."""
    target = f"https://colab.research.google.com/github/{urls.slug}/blob/{BRANCH}/notebooks/{notebook}"
    return f"[![Open In Colab]({COLAB_BADGE})]({target})"


def setup_source(urls: CourseUrls) -> str:
    """The setup cell's source: install from ``urls.repository`` on Colab, then ``fromscratch.setup``."""
    return SETUP_CELL.format(repository=urls.repository)


def setup_cell(nb):
    """The chapter's setup cell (its first code cell, calling ``fromscratch.setup(``), or None."""
    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    return first if first is not None and "fromscratch.setup(" in first.source else None


def course_problems(nb, notebook: str, urls: CourseUrls) -> list[str]:
    """How the course cells of the chapter file ``notebook`` differ from what ``urls`` makes (empty: they
    agree). A notebook without a setup cell is no chapter and has none."""
    setup = setup_cell(nb)
    if setup is None:
        return []
    found = []
    title = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if title is None or badge(urls, notebook) not in title.source.splitlines():
        found.append(f"the Colab badge under the title is not {badge(urls, notebook)}")
    if setup.source != setup_source(urls):
        found.append(f"the setup cell is not the one made from {urls.repository}")
    return found


def write_course_cells(nb, notebook: str, urls: CourseUrls) -> None:
    """Write the Colab badge (under the title, in the first markdown cell) and the setup cell of the chapter
    file ``notebook`` from ``urls``, in place; the cells' metadata (tags, slides) stay."""
    setup = setup_cell(nb)
    title = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if setup is None or title is None:
        raise ValueError(
            f"{notebook}: no chapter skeleton (a title cell, and a first code cell that calls "
            "fromscratch.setup); see CONTRIBUTING.md, Chapter notebooks"
        )
    line = badge(urls, notebook)
    if BADGE_LINE.search(title.source):
        title.source = BADGE_LINE.sub(lambda _: line, title.source, count=1)
    else:  # under the title line, with a blank line either side
        head, _, rest = title.source.partition("\n")
        rest = rest.lstrip("\n")
        title.source = f"{head}\n\n{line}\n\n{rest}".rstrip("\n")
    setup.source = setup_source(urls)


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


def clean(nb) -> None:
    """Bring ``nb`` to its committed form in place: strip outputs (but checked ones), counts and timings."""
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


def main(argv: list[str] | None = None) -> int:
    """Command line: strip, execute then strip, check, or write the course cells (see the docstring)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--execute", action="store_true", help="run in the smoke profile before cleaning")
    parser.add_argument("--check", action="store_true", help="only report notebooks that are not clean")
    parser.add_argument(
        "--urls",
        action="store_true",
        help="only write the Colab badge and the setup cell; nothing else changes",
    )
    parser.add_argument("--pyproject", type=Path, default=PYPROJECT, help="where [project.urls] is read")
    args = parser.parse_args(argv)
    try:
        urls = course_urls(args.pyproject)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    status = 0
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        if args.check:
            for problem in problems(nb) + course_problems(nb, path.name, urls):
                print(f"{path}: {problem}")
                status = 1
            continue
        if args.urls:
            write_course_cells(nb, path.name, urls)
            nbformat.write(nb, path)
            print(f"wrote the course cells of {path} ({urls.repository})")
            continue
        if args.execute:
            execute(nb, path)
        clean(nb)
        if setup_cell(nb) is not None:  # a chapter: its course cells too
            write_course_cells(nb, path.name, urls)
        nbformat.write(nb, path)
        print(f"cleaned {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
