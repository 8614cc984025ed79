"""One source for the numbers a chapter's ``cpu`` run measured and other pages quote.

Each chapter folder may hold a committed ``results.json``: the headline numbers of the chapter's last
``cpu`` execution, with the date, the commit and the machine. The chapter writes it at the end of
its run; a later chapter quotes it instead of typing the number twice; ``benchmarks/README.md`` and
``book/instructors.md`` quote it between markers that ``tools/quote_results.py`` refreshes and
``tests/test_quote_results.py`` checks.

- ``record(chapter, prof, **numbers)``: in a chapter, ``results.record("06", prof, bag_accuracy=bag)``.
  Writes ``chapters/chNN_<name>/results.json`` only when the profile is ``cpu`` and the package is an
  editable checkout (a learner's Colab or a ``smoke`` run in CI writes nothing); returns the path
  written, or None.
- ``quoted(chapter, key)``: the number, as stored (``quoted("06", "bag_accuracy")`` -> 0.88).
- ``load(chapter)``: the whole record (``numbers``, ``date``, ``commit``, ``machine``, ``source``).
- ``say(value, spec)``: a number as the pages write it: a ``format`` spec, or one ending in `` %``
  for a share written as a percentage with a space (``say(0.8796, ".1 %")`` -> ``"88.0 %"``).

A record whose ``source`` is ``"seeded"`` was typed from the text of an earlier ``cpu`` execution
(its ``note`` says which) until the chapter runs in ``cpu`` again and writes its own (``"run"``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path

__all__ = ["load", "quoted", "record", "say"]

HERE = Path(__file__).parent
CHECKOUT = HERE.parents[2]  # src/fromscratch/chapters -> the repository root, in an editable checkout


def path(chapter: str) -> Path:
    """The ``results.json`` of chapter ``"NN"`` (in its folder ``chNN_<name>``)."""
    folders = sorted(HERE.glob(f"ch{chapter}_*/"))
    if len(folders) != 1:
        raise ValueError(f"chapter {chapter!r}: no single folder ch{chapter}_* in {HERE}; pass two digits.")
    return folders[0] / "results.json"


def load(chapter: str) -> dict:
    """The record of chapter ``"NN"``: ``{"numbers": {...}, "date", "commit", "machine", "source", ...}``."""
    file = path(chapter)
    if not file.is_file():
        raise FileNotFoundError(f"chapter {chapter} has no {file.name} yet: run it in the cpu profile.")
    return json.loads(file.read_text(encoding="utf-8"))


def quoted(chapter: str, key: str) -> float | int | str:
    """The number ``key`` that chapter ``"NN"``'s last ``cpu`` run recorded."""
    numbers = load(chapter)["numbers"]
    if key not in numbers:
        raise KeyError(f"chapter {chapter} records no {key!r}; it records {sorted(numbers)}.")
    return numbers[key]


def say(value: float | int | str, spec: str = "") -> str:
    """``value`` formatted by ``spec`` (Python's format spec; ``".1 %"``: 100 x value, one decimal, " %")."""
    if spec.endswith(" %"):
        return f"{100 * value:{spec[:-2]}f} %"
    return format(value, spec)


def _plain(value: object) -> float | int | str:
    """A number JSON stores as it is: ints and strings kept, floats (and tensors' items) to 6 digits."""
    if isinstance(value, bool | int | str):
        return value
    return round(float(value), 6)


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=CHECKOUT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def editable_checkout() -> bool:
    """True when the package runs from the repository's ``src/`` (``pip install -e .``), not from a wheel."""
    return (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / ".git").exists()


def record(chapter: str, prof, **numbers: float | int | str) -> Path | None:
    """Write chapter ``"NN"``'s headline ``numbers`` to its ``results.json`` when ``prof`` is the ``cpu``
    profile and the package is an editable checkout; the path written, or None (nothing written)."""
    if prof.name != "cpu" or not editable_checkout():
        return None
    commit = _git("rev-parse", "--short", "HEAD")
    if commit and _git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    data = {
        "chapter": chapter,
        "profile": prof.name,
        "source": "run",
        "date": datetime.date.today().isoformat(),
        "commit": commit,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "numbers": {key: _plain(value) for key, value in numbers.items()},
    }
    file = path(chapter)
    file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return file
