"""The package as a Colab learner gets it: a wheel in a fresh environment, a chapter run elsewhere.

The chapters' setup cell installs ``fromscratch @ git+…``: not editable, with no repository around
it, and the notebook runs from another directory. This test builds that wheel, installs it into a
fresh virtual environment, and runs chapter 04 (which draws with bertviz) in the ``smoke`` profile
from a temporary directory. The environment holds only what the wheel declares (its Requires-Dist,
followed recursively) plus ipykernel, which Colab always has, so a dependency the package forgets to
declare stops the chapter here as it would on Colab. The test is offline: the declared distributions
are linked from the environment that runs the tests, never downloaded.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
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
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "04_multi_head_attention.ipynb"
COLAB_HAS = ["ipykernel"]  # what runs a notebook at all; Colab ships it, the package need not declare it
NOT_DECLARED = "nbval"  # in the test environment, never a dependency: must not leak into the fresh one

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


def test_a_chapter_runs_from_the_installed_wheel(tmp_path, monkeypatch):
    wheel = build_wheel(tmp_path)
    python = fresh_environment(tmp_path / "env", wheel)
    kernels = tmp_path / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    spec = {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "language": "python",
        "display_name": "fresh environment",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))  # finds kernels/fresh
    monkeypatch.setenv("FROMSCRATCH_PROFILE", "smoke")
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    workdir = tmp_path / "colab"  # outside the repository, as /content is on Colab
    workdir.mkdir()

    nb = nbformat.read(CHAPTER, as_version=4)
    probe = (
        "import importlib.util, fromscratch\n"
        "print(fromscratch.__file__)\n"
        f"print('undeclared importable:', importlib.util.find_spec({NOT_DECLARED!r}) is not None)"
    )
    nb.cells.append(nbformat.v4.new_code_cell(probe))
    try:
        NotebookClient(
            nb, kernel_name="fresh", timeout=300, resources={"metadata": {"path": str(workdir)}}
        ).execute()
    except CellExecutionError as error:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback without its terminal colours
        pytest.fail(
            f"{CHAPTER.name} fails when installed from the wheel (a dependency not declared?):\n{plain}"
        )

    printed = "".join(out.get("text", "") for out in nb.cells[-1].outputs).splitlines()
    assert Path(printed[0]).is_relative_to(tmp_path / "env"), (
        f"imported {printed[0]}, not the installed wheel"
    )
    assert printed[1] == "undeclared importable: False", (
        "the fresh environment sees packages it did not declare"
    )
