"""Every chapter as a Colab learner runs it: from the installed wheel, in a fresh environment, elsewhere.

The chapters' setup cell installs ``fromscratch @ git+…``: not editable, with no repository around
it, and the notebook runs from another directory (``/content`` on Colab). This test builds that
wheel, installs it into a fresh virtual environment, copies every ``notebooks/*.ipynb`` (and nothing
else of the checkout) to a temporary directory and runs them all there with ``pytest --nbval-lax``
in the ``smoke`` profile, on a kernel of the fresh environment: the checked cells are compared as in
the checkout's own notebook run, which this run replaces in ``make test`` (each chapter runs once).

The environment holds only what the wheel declares (its Requires-Dist, followed recursively) plus
ipykernel, which Colab always has; torch and the rest are linked from the environment that runs the
tests (as Colab has torch already), never downloaded: the test is offline. A module, data file, tool
or optional dependency that only the checkout provides stops a chapter here as it would on Colab;
a probe cell appended to each copy checks that ``fromscratch`` came from the wheel and that neither
the checkout nor the test tools (nbval) are importable. The datasets come through the real loaders
from ``FROMSCRATCH_MIRROR`` into ``FROMSCRATCH_DATA``, as in the rest of the tests.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
COLAB_HAS = ["ipykernel"]  # what runs a notebook at all; Colab ships it, the package need not declare it
NOT_DECLARED = "nbval"  # in the test environment, never a dependency: must not leak into the fresh one
KERNEL = "fromscratch-wheel"  # the fresh environment's kernel, as nbval is told to use it
CELL_TIMEOUT = 600  # seconds per cell, as generous as a slow shared CI machine needs

pytestmark = pytest.mark.slow


def build_wheel(out: Path) -> Path:
    """Build the wheel from a copy of the sources, so the checkout gets no ``build/`` or egg-info."""
    source = out / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    subprocess.run([*pip, "-w", str(out), str(source)], check=True, capture_output=True)
    return next(out.glob("fromscratch-*.whl"))


def declared(wheel: Path) -> list[Requirement]:
    """The wheel's Requires-Dist: what ``pip install`` would bring along (no extras)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        fields = Parser().parsestr(archive.read(name).decode())
    return [Requirement(line) for line in fields.get_all("Requires-Dist") or []]


def applies(requirement: Requirement, extras: set[str]) -> bool:
    """Whether ``requirement`` holds on this machine when ``extras`` of its parent are asked for."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras | {""})


def closure(requirements: list[Requirement]) -> list[metadata.Distribution]:
    """Every distribution ``requirements`` need, found in this environment; fail on one it lacks."""
    found: dict[str, metadata.Distribution] = {}
    todo = [(r, set()) for r in requirements]
    while todo:
        requirement, parent_extras = todo.pop()
        if not applies(requirement, parent_extras):
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{requirement} is needed but not installed here; run `make install` first.")
        if not requirement.specifier.contains(dist.version, prereleases=True):
            pytest.fail(f"{requirement} is declared, but this environment has {dist.version}.")
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in found and not requirement.extras:
            continue
        found[key] = dist
        todo += [(Requirement(r), set(requirement.extras)) for r in dist.requires or []]
    return list(found.values())


def link(dist: metadata.Distribution, site: Path) -> None:
    """Make ``dist`` importable in ``site`` by linking its top-level packages and metadata there."""
    if dist.files is None:
        pytest.fail(f"{dist.metadata['Name']} has no RECORD; cannot tell which files are its own.")
    tops = {file.parts[0] for file in dist.files if file.parts[0] != ".."}  # ".." : scripts, data
    for top in tops:
        target = Path(dist.locate_file(top))
        if target.exists() and not (site / top).exists() and not top.startswith("__editable__"):
            (site / top).symlink_to(target)


def fresh_environment(where: Path, wheel: Path) -> Path:
    """A virtual environment with the wheel, what it declares, and ipykernel; returns its python."""
    venv.create(where, with_pip=False, symlinks=True)
    python = where / "bin" / "python"
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    for dist in closure([*declared(wheel), *(Requirement(name) for name in COLAB_HAS)]):
        if dist.metadata["Name"].lower() != "fromscratch":
            link(dist, site)
    install = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--no-deps",
        "--no-index",
        "-q",
    ]
    subprocess.run([*install, str(wheel)], check=True, capture_output=True)
    return python


def probe(env: Path) -> str:
    """A cell that fails unless ``fromscratch`` is the wheel's and nothing of the checkout is importable."""
    return (
        "import importlib.util, pathlib, sys\n"
        "import fromscratch\n"
        f"assert pathlib.Path(fromscratch.__file__).is_relative_to({str(env)!r}), fromscratch.__file__\n"
        f"assert importlib.util.find_spec({NOT_DECLARED!r}) is None, 'the environment sees {NOT_DECLARED}'\n"
        f"assert not [p for p in sys.path if p.startswith({str(ROOT)!r})], sys.path\n"
        f"assert not pathlib.Path.cwd().is_relative_to({str(ROOT)!r}), pathlib.Path.cwd()\n"
    )


def copy_chapters(env: Path, where: Path) -> list[Path]:
    """Every chapter, with the probe cell appended, in ``where`` (outside the checkout)."""
    where.mkdir(parents=True)
    copies = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(probe(env)))
        nbformat.write(nb, where / path.name)
        copies.append(where / path.name)
    return copies


def test_every_chapter_runs_from_the_installed_wheel(tmp_path):
    assert not tmp_path.is_relative_to(ROOT), "the temporary directory must lie outside the checkout"
    wheel = build_wheel(tmp_path)
    env = tmp_path / "env"
    python = fresh_environment(env, wheel)
    kernels = tmp_path / "jupyter" / "kernels" / KERNEL
    kernels.mkdir(parents=True)
    spec = {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "language": "python",
        "display_name": "fromscratch from its wheel",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    colab = tmp_path / "colab"  # as /content is on Colab
    chapters = copy_chapters(env, colab / "notebooks")
    assert chapters, "notebooks/ holds no chapter"
    shutil.copy(
        ROOT / "conftest.py", colab / "conftest.py"
    )  # nbval's set-up for checked cells, not the kernel's
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ.update(JUPYTER_PATH=str(tmp_path / "jupyter"), FROMSCRATCH_PROFILE="smoke", PYTHONNOUSERSITE="1")
    nbval = ["--nbval-lax", f"--nbval-kernel-name={KERNEL}", f"--nbval-cell-timeout={CELL_TIMEOUT}"]
    options = ["-p", "no:cacheprovider", f"--rootdir={colab}", "-q", "--durations=0"]
    command = [sys.executable, "-m", "pytest", *nbval, *options, "notebooks"]
    run = subprocess.run(command, cwd=colab, env=environ, capture_output=True, text=True)
    print(chapter_seconds(run.stdout))  # shown with -s, or on failure
    out = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout)  # without terminal colours
    first_failure = out[out.find("= FAILURES =") :][:8000] if "= FAILURES =" in out else out[-8000:]
    failed = "\n".join(line for line in out.splitlines() if line.startswith(("FAILED", "ERROR")))
    assert run.returncode == 0, (
        f"a chapter fails when installed from the wheel and run outside the checkout (a dependency not "
        f"declared? a file of the checkout?):\n{first_failure}\n...\n{failed}\n{run.stderr[-3000:]}"
    )


def chapter_seconds(report: str) -> str:
    """Seconds per chapter, summed from pytest's ``--durations=0`` lines (setup, cells, teardown)."""
    seconds: dict[str, float] = {}
    for match in re.finditer(r"^([\d.]+)s\s+\w+\s+notebooks/([^:]+)::", report, flags=re.MULTILINE):
        seconds[match[2]] = seconds.get(match[2], 0.0) + float(match[1])
    rows = [f"{name:<40} {value:6.1f} s" for name, value in sorted(seconds.items())]
    return "\n".join([*rows, f"{'all chapters':<40} {sum(seconds.values()):6.1f} s"])
