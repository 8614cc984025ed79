"""``make lock``: pin what ``make install`` installs, with hashes, into ``requirements.lock``.

The loose inputs are ``requirements.txt`` and the dependencies of ``pyproject.toml``; pip's own resolver
(``pip install --dry-run --report``) resolves them; every package needed is pinned, and the sha256 of
every file of its release (wheels for all platforms and the sdist) comes from the package index's
simple API (PEP 691 JSON or PEP 503 links), nothing downloaded, so that ``pip install -r
requirements.lock`` installs exactly what CI tested on any platform and checks each download.
Resolving needs the index (the network, or a local mirror).

torch is left out, with the packages that only torch needs (sympy, networkx, its CUDA libraries, …):
the Makefile installs torch first (2.13.0, or keeps the one already there, e.g. Colab's), and pip then
finds the lock's requirement on torch already satisfied. The installed torch is pinned while resolving,
so that resolving does not fetch another torch (gigabytes).

By default the lock pins the running environment (``make install``'s, the one CI tests) plus what pip
would add to it for a new requirement (``pip install --dry-run``), so that refreshing the lock after
adding a requirement only adds what is new; ``--upgrade`` resolves everything afresh (slow: pip
fetches every package's metadata).

    python tools/lock.py                      # write requirements.lock
    python tools/lock.py --upgrade            # the newest releases of everything
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = {"torch"}  # installed by the Makefile before the lock, never pinned by it
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # PEP 691: the index's file list, with hashes


def canonical(name: str) -> str:
    """PEP 503's normal form of a package name (``Sphinx_Book-Theme`` -> ``sphinx-book-theme``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def inputs(root: Path = ROOT) -> list[Requirement]:
    """The loose requirements: requirements.txt's lines and pyproject.toml's dependencies."""
    # Python 3.11+ (make lock and the lock's test), imported here so that 3.10 can import the module
    import tomllib

    lines = [line.split("#")[0].strip() for line in (root / "requirements.txt").read_text().splitlines()]
    found = [Requirement(line) for line in lines if line and not line.startswith("-")]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    return found + [Requirement(dep) for dep in project["dependencies"]]


def blocks(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Split a lock file into its header lines and one (name, lines) block per pinned package."""
    header, found = [], []
    for line in text.splitlines():
        if re.match(r"^[A-Za-z0-9]", line):
            found.append((canonical(re.split(r"[=<>!~\[ ;]", line, maxsplit=1)[0]), [line]))
        elif found:
            found[-1][1].append(line)
        else:
            header.append(line)
    return header, found


def needed(report: dict, roots: list[Requirement], left_out: set[str]) -> dict[str, tuple[str, set[str]]]:
    """{package: (version, the packages that need it)} for what ``roots`` need of pip's install report, with
    the extras they ask for (``jsonschema[format-nongpl]``), without ``left_out`` and what only they need
    (the walk does not go through them)."""
    env = default_environment()
    picked = {canonical(item["metadata"]["name"]): item["metadata"] for item in report["install"]}
    requires = {
        name: [Requirement(r) for r in meta.get("requires_dist") or []] for name, meta in picked.items()
    }
    via: dict[str, set[str]] = {}
    expanded: dict[str, set[str]] = {}  # the extras of each package whose requirements were followed
    todo = [
        (canonical(r.name), set(r.extras), "requirements")
        for r in roots
        if not r.marker or r.marker.evaluate()
    ]
    while todo:
        name, extras, parent = todo.pop()
        if name in left_out or name not in picked:
            continue
        via.setdefault(name, set()).add(parent)
        new = ({""} | extras) - expanded.get(name, set())
        expanded[name] = expanded.get(name, set()) | new
        for req in requires[name]:
            if any(not req.marker or req.marker.evaluate({**env, "extra": extra}) for extra in new):
                todo.append((canonical(req.name), set(req.extras), name))
    return {name: (picked[name]["version"], parents) for name, parents in sorted(via.items())}


def known_hashes(lock_file: Path) -> dict[tuple[str, str], list[str]]:
    """{(package, version): hashes} of an existing lock file, reused when a pin does not change."""
    if not lock_file.exists():
        return {}
    _, found = blocks(lock_file.read_text())
    known = {}
    for name, lines in found:
        version = re.match(r"^[^=]+==([^\s;]+)", lines[0]).group(1)
        known[(name, version)] = re.findall(r"--hash=sha256:([0-9a-f]{64})", "\n".join(lines))
    return known


def release_hashes(name: str, version: str, index_url: str) -> list[str]:
    """The sha256 of every file (wheels for all platforms, sdist) of ``name==version`` on the index, from its
    simple API (PEP 691 JSON, or PEP 503 HTML links): the hashes the index publishes, nothing downloaded."""
    request = urllib.request.Request(f"{index_url.rstrip('/')}/{name}/", headers={"Accept": SIMPLE_JSON})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read().decode("utf-8")
        is_json = "json" in response.headers.get("Content-Type", "")
    if is_json:
        files = json.loads(body)["files"]
    else:  # PEP 503 HTML: <a href="...<filename>#sha256=<hash>">
        links = re.findall(r'href="[^"]*/([^/"#]+)#sha256=([0-9a-f]{64})"', body)
        files = [{"filename": html.unescape(f), "hashes": {"sha256": h}} for f, h in links]
    found = []
    for file in files:
        filename = file["filename"]
        try:
            if filename.endswith(".whl"):
                file_version = parse_wheel_filename(filename)[1]
            elif filename.endswith((".tar.gz", ".zip")):
                file_version = parse_sdist_filename(filename)[1]
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if file_version == Version(version) and "sha256" in file.get("hashes", {}):
            found.append(file["hashes"]["sha256"])
    return sorted(set(found))


def render(pins: dict[str, tuple[str, set[str]]], hashes: dict[str, list[str]]) -> str:
    """The lock file: a header, then each pin with its hashes and what needs it."""
    lines = [
        (
            "# requirements.lock: written by `make lock` (tools/lock.py) from requirements.txt and "
            "pyproject.toml."
        ),
        (
            "# Every release is pinned with the sha256 of all its files. Left out, installed before the "
            "lock by the"
        ),
        f"# Makefile: {', '.join(sorted(LEFT_OUT))} and what only it needs.",
    ]
    for name, (version, parents) in pins.items():
        lines.append(f"{name}=={version} \\")
        lines += [f"    --hash=sha256:{h} \\" for h in hashes[name][:-1]] + [
            f"    --hash=sha256:{hashes[name][-1]}"
        ]
        lines.append(f"    # via {', '.join(sorted(parents))}")
    return "\n".join(lines) + "\n"


def torch_pin() -> list[str]:
    """The installed torch as a constraint (e.g. ``torch==2.13.0+cpu``); empty when torch is not installed."""
    try:
        return [f"torch=={metadata.version('torch')}"]
    except metadata.PackageNotFoundError:
        return []


def pip_report(*, fresh: bool) -> dict:
    """pip's install report for the inputs as ``pip install --dry-run`` finds it: with ``fresh``, for an empty
    environment (slow: every package's metadata is fetched), else only what the running one lacks."""
    with tempfile.TemporaryDirectory() as tmp:
        constraints, report = Path(tmp) / "constraints.txt", Path(tmp) / "report.json"
        constraints.write_text("\n".join(torch_pin()) + "\n")
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report)]
        command += ["-c", str(constraints), "-r", str(ROOT / "requirements.txt"), str(ROOT)]
        subprocess.run(command + (["--ignore-installed"] if fresh else []), check=True, cwd=ROOT)
        return json.loads(report.read_text())


def environment_report(missing: dict) -> dict:
    """An install report of the running environment (what CI tests) plus ``missing``, pip's report of the
    packages it lacks: the lock then pins exactly the versions in use."""
    items = [
        {"metadata": {"name": d.metadata["Name"], "version": d.version, "requires_dist": d.requires or []}}
        for d in metadata.distributions()
        if d.metadata["Name"]
    ]
    return {"install": items + missing.get("install", [])}


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", type=Path, default=ROOT / "requirements.lock")
    parser.add_argument(
        "--upgrade", action="store_true", help="resolve afresh instead of keeping installed versions"
    )
    parser.add_argument("--index-url", default=os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple"))
    parser.add_argument(
        "--missing", type=Path, help="pip's report of what the environment lacks (saves a run)"
    )
    args = parser.parse_args(argv)
    if args.upgrade:
        report = pip_report(fresh=True)
    else:
        missing = json.loads(args.missing.read_text()) if args.missing else pip_report(fresh=False)
        report = environment_report(missing)
    pins = needed(report, inputs(), LEFT_OUT)
    hashes, known = {}, known_hashes(args.output)
    for name, (version, _) in pins.items():
        hashes[name] = known.get((name, version)) or release_hashes(name, version, args.index_url)
        if not hashes[name]:
            raise SystemExit(f"the index {args.index_url} lists no files with hashes for {name}=={version}")
    args.output.write_text(render(pins, hashes))
    print(f"wrote {args.output}: {len(pins)} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
