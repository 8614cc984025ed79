"""The package as a Colab learner gets it: Colab's versions kept, then every chapter run from the wheel.

**Colab's versions** (fast, offline). On Colab the chapters' setup cell runs ``%pip install "fromscratch @
git+…"`` among the hundreds of packages Colab preinstalls; pip keeps each one whose version our ranges
admit and upgrades the others inside the already running kernel (ipywidgets 8 over Colab's 7.7.1, which
Colab does not support, would put every widget and progress bar at risk). ``tests/colab-constraints.txt``
holds Colab's versions of the packages our dependencies touch, from Google's published ``pip freeze`` (its
header says where from and how to refresh it). Three checks, with no network and no download:

- ``packaging`` walks the requirements of pyproject.toml's dependencies, and of what pip would download
  with them (bertviz, sacrebleu and theirs, read from this environment's metadata), with Colab's markers
  (its Python), and compares every range that reaches a Colab package with Colab's version;
- pip's own resolver (``pip install --dry-run --no-index``, on this machine's Python) runs in a stand-in
  for Colab: a fresh environment whose "installed" packages are Colab's versions (metadata only), with
  metadata-only wheels of the package and of what Colab lacks; it must plan to install exactly those,
  replacing nothing of Colab's;
- the install cell (``tools/nbclean.py`` writes it) has no option that upgrades or hides pip's messages.

None of this runs Colab's git clone, its network, its GPU or its real wheels, and the newest bertviz or
sacrebleu on the index may require other versions than those installed here.

**Every chapter from the wheel** (slow). The chapters' setup cell installs ``fromscratch @ git+…``: not
editable, with no repository around it, and the notebook runs from another directory (``/content`` on
Colab). This test builds that wheel, installs it into a fresh virtual environment, copies every
``notebooks/*.ipynb`` (and nothing else of the checkout) to a temporary directory and runs them all there
with ``pytest --nbval-lax`` in the ``smoke`` profile, on a kernel of the fresh environment: the checked
cells are compared as in the checkout's own notebook run, which this run replaces in ``make test`` (each
chapter runs once).

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
import shlex
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

import nbclean
import nbformat
import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
COLAB_HAS = ["ipykernel"]  # what runs a notebook at all; Colab ships it, the package need not declare it
NOT_DECLARED = "nbval"  # in the test environment, never a dependency: must not leak into the fresh one
KERNEL = "fromscratch-wheel"  # the fresh environment's kernel, as nbval is told to use it
CELL_TIMEOUT = 600  # seconds per cell, as generous as a slow shared CI machine needs

COLAB = ROOT / "tests" / "colab-constraints.txt"
REFRESH = "refresh it from a Colab `pip freeze` as its header says"
# pip options that replace packages already installed, and options that hide pip's messages
UPGRADES = {"-U", "--upgrade", "--upgrade-strategy", "--force-reinstall", "-I", "--ignore-installed"}
QUIET = {"-q", "-qq", "-qqq", "--quiet"}


# --- Colab's versions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Colab:
    """Colab's preinstalled versions, as ``tests/colab-constraints.txt`` gives them."""

    pins: dict[str, Version]  # canonical name -> the version Colab has
    python: str  # e.g. "3.12.13"
    as_of: str  # when that list was taken, e.g. "2026-06"


def read_colab(path: Path = COLAB) -> Colab:
    """Parse the constraints file: ``name==version`` lines and the ``# colab-as-of:``/``# colab-python:``
    header lines; fail with what is wrong."""
    pins, header = {}, {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if found := re.match(r"#\s*(colab-[a-z-]+):\s*(\S+)", line):
            header[found[1]] = found[2]
        line = line.split("#")[0].strip()
        if not line:
            continue
        pin = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        assert pin, f"{path.name}:{number}: {line!r} is not name==version"
        pins[canonicalize_name(pin[1])] = Version(pin[2])
    for key in ("colab-as-of", "colab-python"):
        assert key in header, f"{path.name} lacks its '# {key}: ...' header line; {REFRESH}"
    return Colab(pins=pins, python=header["colab-python"], as_of=header["colab-as-of"])


def colab_markers(python: str) -> dict[str, str]:
    """The environment markers of Colab's Python (Linux, x86-64, CPython ``python``)."""
    return {
        **default_environment(),
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
    }


def project() -> dict:
    """pyproject.toml's ``[project]`` table."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def project_dependencies() -> list[Requirement]:
    """pyproject.toml's dependencies: what ``pip install fromscratch`` asks for."""
    return [Requirement(d) for d in project()["dependencies"]]


def project_requires_python() -> str:
    """pyproject.toml's ``requires-python``, e.g. ``>=3.10``."""
    return project()["requires-python"]


def on_colab(colab: Colab) -> tuple[dict[str, metadata.Distribution], list[str]]:
    """Walk pyproject.toml's dependencies as pip would on Colab. Returns what pip would download (the
    packages Colab lacks, read from this environment's metadata, followed further) and every range that
    reaches a Colab package without admitting Colab's version (each a line saying who asks for what)."""
    markers = colab_markers(colab.python)
    downloads: dict[str, metadata.Distribution] = {}
    conflicts, done = [], set()
    todo = [(r, "pyproject.toml", frozenset()) for r in project_dependencies()]
    while todo:
        requirement, parent, extras = todo.pop()
        if requirement.marker and not any(
            requirement.marker.evaluate({**markers, "extra": extra}) for extra in extras | {""}
        ):
            continue
        name = canonicalize_name(requirement.name)
        if name in colab.pins:  # Colab has it: pip keeps it only if the range admits Colab's version
            if not requirement.specifier.contains(colab.pins[name], prereleases=True):
                conflicts.append(f"{parent} asks for {requirement}, Colab has {name} {colab.pins[name]}")
            continue
        if (name, frozenset(requirement.extras)) in done:
            continue
        done.add((name, frozenset(requirement.extras)))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(
                f"{requirement} (from {parent}) is not installed here, so its own requirements are "
                "unknown; run `make install` first."
            )
        downloads[name] = dist
        todo += [(Requirement(r), name, frozenset(requirement.extras)) for r in dist.requires or []]
    return downloads, conflicts


def test_colab_versions_meet_every_dependency_range():
    colab = read_colab()
    downloads, conflicts = on_colab(colab)
    assert not conflicts, (
        f"On Colab (its versions as of {colab.as_of}, tests/colab-constraints.txt) the install cell would "
        "upgrade these packages inside the running kernel: widen the ranges in pyproject.toml (or, if Colab "
        f"has moved on, {REFRESH}):\n  " + "\n  ".join(sorted(conflicts))
    )
    python = Version(colab.python)
    pythons = {name: dist.metadata["Requires-Python"] for name, dist in downloads.items()}
    pythons["fromscratch"] = project_requires_python()
    too_new = [
        f"{name} needs Python {needs}"
        for name, needs in pythons.items()
        if needs and python not in SpecifierSet(needs)
    ]
    assert not too_new, f"Colab's Python is {colab.python}: {too_new}"
    # what Colab lacks is what pip downloads: today bertviz, sacrebleu and theirs, never torch or numpy
    assert {"fromscratch", "torch", "numpy", "ipywidgets", "transformers"}.isdisjoint(downloads)


def install_command(setup: str) -> list[str]:
    """The words after ``%pip`` in the setup cell ``setup`` (fails if it installs otherwise)."""
    lines = [line.strip() for line in setup.splitlines() if line.strip().startswith("%pip ")]
    assert len(lines) == 1, f"the setup cell must install with one `%pip install` line:\n{setup}"
    return shlex.split(lines[0].removeprefix("%pip "))


def test_the_install_cell_keeps_colab_packages_and_shows_pip_errors():
    urls = nbclean.course_urls()
    setup = nbclean.setup_source(urls)
    words = install_command(setup)
    assert words[0] == "install" and words[-1] == "fromscratch @ {url}", words
    assert f'url = "git+{urls.repository}"' in setup
    assert not UPGRADES.intersection(words), f"the install cell must not replace Colab's packages: {words}"
    assert not QUIET.intersection(words), f"the install cell must show pip's messages and errors: {words}"
    assert "%%capture" not in setup and "subprocess" not in setup, "pip's output must reach the cell"
    drive = [
        line.strip() for line in setup.splitlines() if "drive" in line.lower() or "FROMSCRATCH_DATA" in line
    ]
    assert all(line.startswith("#") for line in drive), "mounting Google Drive is an option, commented out"
    assert any("FROMSCRATCH_DATA=/content/drive/" in line for line in drive), drive


def stub_wheel(folder: Path, name: str, version: str, requires: list[str], python: str | None = None) -> Path:
    """A wheel holding only metadata (``Requires-Dist``, ``Requires-Python``): all pip's resolver reads."""
    stem = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Python: {python}"] * bool(python) + [f"Requires-Dist: {r}" for r in requires]
    files = {
        f"{stem}.dist-info/METADATA": "\n".join(lines) + "\n",
        f"{stem}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test_install\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{stem}.dist-info/RECORD"] = "".join(f"{f},,\n" for f in [*files, f"{stem}.dist-info/RECORD"])
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for inner, text in files.items():
            archive.writestr(inner, text)
    return path


def colab_stand_in(where: Path, colab: Colab) -> Path:
    """A fresh environment in which Colab's packages look installed (their metadata only); its python."""
    venv.create(where, with_pip=False, symlinks=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    for name, version in colab.pins.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "INSTALLER").write_text("colab\n")
    return where / "bin" / "python"


def test_pip_resolves_the_install_on_colab_without_upgrading_anything(tmp_path):
    colab = read_colab()
    downloads, _ = on_colab(colab)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    stub_wheel(
        wheels, "fromscratch", "0.0.0", [str(r) for r in project_dependencies()], project_requires_python()
    )
    for name, dist in downloads.items():
        stub_wheel(wheels, name, dist.version, dist.requires or [], dist.metadata["Requires-Python"])
    python = colab_stand_in(tmp_path / "colab", colab)
    report = tmp_path / "report.json"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}  # no local pip settings
    environ.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--dry-run", "--no-index"]
    pip += ["--find-links", str(wheels), "--report", str(report), "-c", str(COLAB), "fromscratch"]
    run = subprocess.run(pip, env=environ, capture_output=True, text=True)
    assert run.returncode == 0, (
        f"pip cannot install the package among Colab's versions ({COLAB.name}, as of {colab.as_of}) without "
        f"replacing some of them:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    planned = {
        canonicalize_name(item["metadata"]["name"]) for item in json.loads(report.read_text())["install"]
    }
    assert planned == {"fromscratch", *downloads}, f"pip plans {sorted(planned)}"
    assert not planned & set(colab.pins), f"pip would replace Colab's {sorted(planned & set(colab.pins))}"


# --- every chapter from the wheel ---------------------------------------------------------------------


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


@pytest.mark.slow
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
