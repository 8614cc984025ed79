"""Benchmarks that cannot rot: every script in ``benchmarks/`` (not ``benchmarks/gpu/``) answers ``--help``,
and the ones with a ``--smoke`` mode run it, each in its own process, offline (a connection to the
network raises), failing with the script's stderr. A renamed import breaks ``--help`` at once."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
SMOKE = [path for path in SCRIPTS if '"--smoke"' in path.read_text()]

# Run a script as `python script.py ...` would (its folder first on sys.path, for sibling imports), with
# every internet connection refused.
OFFLINE = """
import os, runpy, socket, sys

connect, connect_ex = socket.socket.connect, socket.socket.connect_ex


def offline(method):
    def refuse(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"tests/test_benchmarks.py runs the benchmarks offline, no connection to {address}")
        return method(self, address)

    return refuse


socket.socket.connect, socket.socket.connect_ex = offline(connect), offline(connect_ex)
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(sys.argv[0])
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _run(script: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MPLBACKEND": "Agg"}
    command = [sys.executable, "-c", OFFLINE, str(script), *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def _said(result: subprocess.CompletedProcess) -> str:
    return f"exit status {result.returncode}; stderr:\n{result.stderr[-4000:]}"


@pytest.fixture(scope="module")
def helps() -> dict[str, subprocess.CompletedProcess]:
    """Every script's ``--help``, run side by side (each mostly imports torch and the package)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = pool.map(lambda script: _run(script, "--help", timeout=300), SCRIPTS)
        return {script.name: result for script, result in zip(SCRIPTS, results, strict=True)}


def test_the_benchmarks_are_found():
    assert len(SCRIPTS) >= 10 and ROOT / "benchmarks" / "flash_attention.py" in SMOKE


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_every_benchmark_answers_help(script, helps):
    result = helps[script.name]
    assert result.returncode == 0, f"python benchmarks/{script.name} --help failed: {_said(result)}"
    assert "usage:" in result.stdout
    assert ("--smoke" in result.stdout) == (script in SMOKE), "--smoke in the source but not in --help"


@pytest.mark.parametrize("script", SMOKE, ids=lambda path: path.name)
def test_the_smoke_modes_run_in_seconds(script):
    result = _run(script, "--smoke", timeout=300)
    assert result.returncode == 0, f"python benchmarks/{script.name} --smoke failed: {_said(result)}"
    assert result.stdout.strip(), "--smoke printed nothing"
