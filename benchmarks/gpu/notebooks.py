"""Run every chapter as a notebook (nbclient): on a GPU machine, here to build its pack, or to record.

    python benchmarks/gpu/notebooks.py --pack gpu_notebooks.tgz      # here: run the chapters in smoke, pack
    python benchmarks/gpu/notebooks.py --from gpu_notebooks.tgz      # there: every chapter on CUDA, smoke
    python benchmarks/gpu/notebooks.py --from gpu_notebooks.tgz --quick   # here: the same on the CPU
    python benchmarks/gpu/notebooks.py --record records.jsonl --profile gpu   # here: record the gpu size

``--pack`` runs the chapters in ``smoke`` with the course's mirror and an empty data cache, watching
which files their kernels open (an audit hook), and packs exactly those: the mirror's (``mirror/``, with
their ``SHA256SUMS`` lines; an archive the cache holds unpacked stays out, its unpacked files travel;
MiniLM's weights at 8 bits and MNIST's first 10,000 digits, :func:`_slim`),
the cache's (``cache/``: unpacked data, token caches, tokenizers, the chat models; no checkpoints, so
every run trains again) and the wheels of the packages the GPU image lacks (``wheels/``, cp312
manylinux, fetched with pip; ``--no-wheels`` leaves them out). One tar.gz, at most 60 MiB.

``--from`` unpacks it into a fresh directory, installs the wheels there when this Python lacks the
notebook stack, and executes every chapter with nbclient in ``smoke`` on the device ``setup()`` finds
(CUDA there), recording its runs (``record.py``'s first cell): per chapter ok or the failing cell, seconds
and peak memory (the GPU's, else the kernel's resident memory), and last
``GPU notebooks: <n> chapters, <k> failed``. ``--quick`` does it on the CPU with no network
(``unshare -rn`` where allowed, else HTTP proxies that lead nowhere) and only the pack's data.

``--record`` runs the chapters at ``--profile``, each ``train`` call recorded after one step by
``record.py``'s wrapper, with the course's mirror and data cache (or an empty one); a cell slower than
``--cell-timeout`` is interrupted and the chapter goes on, errors too (only the record counts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
Record = tuple[Path, bool] | None  # the record file, and whether each train call stops after one step
LIMIT_MIB = 60
# What the GPU image (KINDS.md: torch 2.11, Python 3.12, 2026-11-17) lacks of the package's and the runner's
# dependencies, in this venv's versions (bertviz's boto3, ipywidgets' front ends, and ipykernel's debugger
# and IPython's completion, debugpy and jedi, are never imported).
WHEELS = """asttokens bertviz comm executing fastjsonschema gguf ipykernel ipython ipython-pygments-lexers
    ipywidgets jsonschema jsonschema-specifications jupyter-client jupyter-core matplotlib-inline nbclient
    nbformat nest-asyncio2 pexpect platformdirs pooch prompt-toolkit ptyprocess pure-eval pyzmq referencing
    rpds-py stack-data tornado traitlets wcwidth"""
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
)
AUDIT = """import os, sys
def _opened(event, args, log=os.environ["FROMSCRATCH_AUDIT"]):
    if event == "open" and isinstance(args[0], str) and (args[1] is None or "r" in str(args[1])):
        with open(log, "a") as f:
            f.write(os.path.abspath(args[0]) + "\\n")
sys.addaudithook(_opened)
"""
PEAK = """import json, resource, torch
cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
peak = torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
print("PEAK " + json.dumps({"mib": peak / 2**20, "device": "cuda" if cuda else "cpu, resident"}))"""
RECORDER = """import sys

sys.path.insert(0, {here!r})
import record

record.install({file!r}, {chapter!r}, only={only!r})"""  # record.py: train replaced by its wrapper


def chapters(only: list[str]) -> list[Path]:
    found = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not only or p.name[:2] in only]


def run_chapter(
    path: Path, env: dict[str, str], workdir: Path, timeout: int, keep_going: bool, record: Record
) -> dict:
    """Execute one chapter in a fresh kernel: ok, or its failing code cell; seconds; peak memory.
    ``record``: ``(file, only)`` to record its ``train`` calls into (``record.py``), or None."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PEAK))
    if record:  # before the chapter's own cells: train replaced by the recording wrapper
        file, only = record
        first = RECORDER.format(here=str(HERE), file=str(file), chapter=path.stem, only=only)
        nb.cells.insert(0, nbformat.v4.new_code_cell(first))
    where = {"metadata": {"path": str(workdir)}}
    client = NotebookClient(
        nb, timeout=timeout, allow_errors=keep_going, interrupt_on_timeout=keep_going, resources=where
    )
    started, result = time.perf_counter(), {"chapter": path.stem}
    try:
        client.execute(env=env)
    except Exception as error:  # a cell's error (its output says which), a timeout, a dead kernel
        result["error"] = (str(error).strip().splitlines() or [type(error).__name__])[-1][:300]
    code = [c for c in nb.cells[1 if record else 0 :] if c.cell_type == "code"]  # the chapter's own
    for i, cell in enumerate(code):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors and "cell" not in result:
            result.update(cell=i + 1, error=f"{errors[0]['ename']}: {errors[0]['evalue']}"[:300])
        peak = [o["text"] for o in cell.get("outputs", []) if o.get("text", "").startswith("PEAK ")]
        if peak:
            result["peak"] = json.loads(peak[0][5:])
    return {**result, "seconds": time.perf_counter() - started}


def run_all(
    paths: list[Path],
    env: dict[str, str],
    workdir: Path,
    timeout: int,
    keep_going: bool = False,
    record: Record = None,
) -> int:
    failed = 0
    for path in paths:
        r = run_chapter(path, env, workdir, timeout, keep_going, record)
        memory = f"peak {r['peak']['mib']:,.0f} MiB ({r['peak']['device']})" if "peak" in r else "peak ?"
        where = f"code cell {r['cell']}" if "cell" in r else "the kernel"
        said = f"FAILED at {where}: {r['error']}" if "error" in r else "ok"
        print(f"  {r['chapter']}: {said}, {r['seconds']:.0f} s, {memory}", flush=True)
        failed += "error" in r
    print(f"GPU notebooks: {len(paths)} chapters, {failed} failed", flush=True)
    return failed


def kernel_env(data: Path, mirror: Path | None, profile: str, *first: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FROMSCRATCH_")}
    path = os.pathsep.join(filter(None, [*map(str, first), str(ROOT / "src"), env.get("PYTHONPATH")]))
    env.update(FROMSCRATCH_DATA=str(data), FROMSCRATCH_PROFILE=profile, PYTHONPATH=path, MPLBACKEND="agg")
    env.update(HF_HUB_OFFLINE="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env | ({"FROMSCRATCH_MIRROR": str(mirror)} if mirror else {})


def pack(out: Path, only: list[str], timeout: int, wheels: bool) -> None:
    """Run the chapters here, watching what they open, and pack it (see the module's docstring)."""
    mirror = Path(os.environ["FROMSCRATCH_MIRROR"]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data, hook, log = tmp / "cache", tmp / "hook", tmp / "opened.txt"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(AUDIT)
        env = {**kernel_env(data, mirror, "smoke", hook), "FROMSCRATCH_AUDIT": str(log)}
        failed = run_all(chapters(only), env, tmp, timeout)
        opened = {Path(p) for p in log.read_text().splitlines()} if log.exists() else set()
        cache = sorted(
            p for p in opened if p.is_relative_to(data) and p.is_file() and "checkpoints" not in p.parts
        )
        unpacked = {
            p.relative_to(data).parts[1] for p in cache if p.relative_to(data).parts[0] == "extracted"
        }
        sums = (mirror / "SHA256SUMS").read_text().splitlines()
        mirrored = {p.relative_to(mirror) for p in opened if p.is_relative_to(mirror)}
        mirrored &= {Path(line.split()[-1].lstrip("*")) for line in sums}  # the data, not SHA256SUMS itself
        with tarfile.open(out, "w:gz") as tar:
            listed = ""
            for path in sorted(p for p in mirrored if _dataset(p.name) not in unpacked):
                slim = _slim(mirror / path, tmp / path.name)
                tar.add(slim, f"mirror/{path.parent / slim.name}")
                listed += "" if slim.suffix == ".q8" else f"{_sha256(slim)}  {path}\n"  # .q8: at unpacking
            (tmp / "SHA256SUMS").write_text(listed)
            tar.add(tmp / "SHA256SUMS", "mirror/SHA256SUMS")
            for path in cache:
                tar.add(path, f"cache/{path.relative_to(data)}")
            pip = shlex.split(
                f"'{sys.executable}' -m pip download -q --no-deps --only-binary=:all: --implementation cp "
                f"--python-version 3.12 -d '{tmp}' " + " ".join(f"--platform {p}" for p in PLATFORMS)
            )
            if wheels:
                subprocess.run([*pip, *[f"{name}=={version(name)}" for name in WHEELS.split()]], check=True)
            for wheel in sorted(tmp.glob("*.whl")):
                tar.add(wheel, f"wheels/{wheel.name}")
    mib = out.stat().st_size / 2**20
    print(
        f"pack: {out} {mib:.1f} MiB: {len(mirrored)} mirror files, {len(cache)} cache files, wheels: {wheels}"
    )
    if mib > LIMIT_MIB or failed:
        sys.exit(f"over {LIMIT_MIB} MiB" if mib > LIMIT_MIB else f"{failed} chapters failed: reads missing")


def _slim(path: Path, out: Path) -> Path:
    """A smaller copy of a mirror file where one is enough for ``smoke``: a safetensors file's matrices at 8
    bits a weight and a scale a row (``.q8``: made fp32 again on unpacking, its numbers off in the third
    digit), MNIST's first 10,000 training digits (``smoke`` reads 2,000); else the file itself."""
    import gzip

    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file

    if path.suffix == ".safetensors":
        small = {}
        for k, t in load_file(path).items():
            if t.dim() == 2 and t.is_floating_point():
                scale = t.abs().amax(1, keepdim=True).clamp_min(1e-12) / 127
                small[f"{k}.q8"], small[f"{k}.scale"] = (t / scale).round().to(torch.int8), scale
            else:
                small[k] = t
        save_file(small, out.with_name(out.name + ".q8"))
        return out.with_name(out.name + ".q8")
    if path.name.startswith("train-") and "idx" in path.name and "fashion" not in str(path):
        raw = gzip.decompress(path.read_bytes())
        ndim = raw[3]
        shape = np.frombuffer(raw, ">i4", ndim, 4).copy()
        item = int(np.prod(shape[1:]))
        shape[0] = min(shape[0], 10_000)
        out.write_bytes(
            gzip.compress(raw[:4] + shape.astype(">i4").tobytes() + raw[4 + 4 * ndim :][: shape[0] * item])
        )
        return out
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unslim(mirror: Path) -> None:
    """Make the ``.q8`` files of a pack's mirror full-size again, and list them in its SHA256SUMS."""
    from safetensors.torch import load_file, save_file

    for q8 in mirror.rglob("*.q8"):
        state = load_file(q8)
        full = {k[:-3]: t.float() * state[f"{k[:-3]}.scale"] for k, t in state.items() if k.endswith(".q8")}
        full.update({k: t for k, t in state.items() if not k.endswith((".q8", ".scale"))})
        save_file(full, q8.with_suffix(""))
        with open(mirror / "SHA256SUMS", "a") as sums:
            sums.write(f"{_sha256(q8.with_suffix(''))}  {q8.with_suffix('').relative_to(mirror)}\n")


def _dataset(fname: str) -> str | None:
    """The registry's name of the dataset whose file is ``fname`` (every loader imported first)."""
    import importlib
    import pkgutil

    import fromscratch.data
    from fromscratch.data.registry import REGISTRY

    for module in pkgutil.iter_modules(fromscratch.data.__path__):
        importlib.import_module(f"fromscratch.data.{module.name}")
    return next((d.name for d in REGISTRY.values() if d.fname == fname), None)


def from_pack(source: Path, only: list[str], timeout: int, quick: bool, record: Path | None) -> int:
    """Unpack the pack into a fresh directory and run every chapter from it (smoke)."""
    work = Path(tempfile.mkdtemp(prefix="gpu-notebooks-"))
    with tarfile.open(source) as tar:
        tar.extractall(work, filter="data")
    _unslim(work / "mirror")
    site = []
    try:
        import nbclient  # noqa: F401
        import pooch  # noqa: F401
    except ImportError:  # the GPU image: the pack's wheels beside it, for this process and the kernels
        wheels = sorted(map(str, (work / "wheels").glob("*.whl")))
        pip = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--target",
            str(work / "site"),
        ]
        subprocess.run(pip + wheels, check=True)
        site = [work / "site"]
        sys.path.insert(0, str(site[0]))
    env = kernel_env(work / "cache", work / "mirror", "smoke", *site)
    file = record.resolve() if record else work / "records.jsonl"
    if quick:  # the CPU, and no way out even where unshare is not allowed
        env.update(CUDA_VISIBLE_DEVICES="", http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")
        env.update(HTTP_PROXY=env["http_proxy"], HTTPS_PROXY=env["https_proxy"])
    network = (
        "no network (unshare -rn)" if os.environ.get("_GPU_NOTEBOOKS_UNSHARED") else "proxies to nowhere"
    )
    print(
        f"from {source} in {work}: " + (f"the CPU, {network}" if quick else "the device setup() finds"),
        flush=True,
    )
    return 1 if run_all(chapters(only), env, work, timeout, record=(file, False)) else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pack", type=Path, help="build the pack (here, with $FROMSCRATCH_MIRROR)")
    parser.add_argument("--no-wheels", action="store_true", help="with --pack: leave the wheels out")
    parser.add_argument("--from", dest="source", type=Path, help="run every chapter from this pack")
    parser.add_argument("--quick", action="store_true", help="with --from: on the CPU, no network")
    parser.add_argument("--record", type=Path, help="record the chapters' train calls into this file")
    parser.add_argument("--profile", default="gpu", help="with --record alone: the run size (default gpu)")
    parser.add_argument("--chapters", nargs="*", default=[], help="two-digit numbers, e.g. 01 07 (all)")
    parser.add_argument("--cell-timeout", type=int, default=600, help="seconds a cell may take")
    args = parser.parse_args()
    if args.pack:
        pack(args.pack, args.chapters, args.cell_timeout, not args.no_wheels)
    elif args.source and args.quick and not os.environ.get("_GPU_NOTEBOOKS_UNSHARED") and _unshare_works():
        inner = f"ip link set lo up 2>/dev/null; exec {shlex.join([sys.executable, *sys.argv])}"
        env = {**os.environ, "_GPU_NOTEBOOKS_UNSHARED": "1"}
        sys.exit(subprocess.run(["unshare", "-rn", "sh", "-c", inner], env=env).returncode)
    elif args.source:
        sys.exit(from_pack(args.source, args.chapters, args.cell_timeout, args.quick, args.record))
    elif args.record:
        mirror, cache = os.environ.get("FROMSCRATCH_MIRROR"), os.environ.get("FROMSCRATCH_DATA")
        with tempfile.TemporaryDirectory() as tmp:  # the data cache, if set: no run resumes in this mode
            env = kernel_env(
                Path(cache or Path(tmp) / "cache"), Path(mirror) if mirror else None, args.profile
            )
            record = (args.record.resolve(), True)  # one step a call, then recorded
            run_all(
                chapters(args.chapters), env, Path(tmp), args.cell_timeout, keep_going=True, record=record
            )
    else:
        parser.error("give --pack, --from or --record")


def _unshare_works() -> bool:
    return (
        bool(shutil.which("unshare"))
        and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    )


if __name__ == "__main__":
    main()
