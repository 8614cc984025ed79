"""requirements.lock pins, with hashes, everything requirements.txt and pyproject.toml ask for (but torch)."""

from __future__ import annotations

import re
from pathlib import Path

import lock
import pytest
from packaging.requirements import Requirement

pytest.importorskip("tomllib")  # Python 3.11+, to read pyproject.toml

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


def pins() -> dict[str, tuple[str, list[str]]]:
    """{package: (version, its hashes)} as the lock file lists them."""
    _, found = lock.blocks(LOCK.read_text())
    pinned = {}
    for name, lines in found:
        version = re.match(r"^[^=]+==([^\s;\\]+)", lines[0])
        assert version, f"{lines[0]!r} is not pinned with =="
        pinned[name] = (version.group(1), re.findall(r"--hash=sha256:([0-9a-f]{64})", "\n".join(lines)))
    return pinned


needs_lock = pytest.mark.skipif(not LOCK.exists(), reason="no requirements.lock yet: make lock")


@needs_lock
def test_lock_satisfies_every_input_requirement():
    pinned = pins()
    for req in lock.inputs():
        name = lock.canonical(req.name)
        if name in lock.LEFT_OUT or (req.marker and not req.marker.evaluate()):
            continue
        assert name in pinned, f"{req} is not in requirements.lock: run `make lock`"
        version = pinned[name][0]
        assert req.specifier.contains(version, prereleases=True), (
            f"the lock pins {name}=={version}, outside {req}"
        )


@needs_lock
def test_every_pin_has_hashes_and_torch_is_left_out():
    pinned = pins()
    assert len(pinned) > 50
    assert not [name for name, (_, hashes) in pinned.items() if not hashes], "pins without --hash"
    assert "torch" not in pinned and not [n for n in pinned if n.startswith("nvidia-")]


def test_only_what_the_inputs_need_without_torch():
    def item(name, version, *requires):
        return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}}

    report = {
        "install": [
            item("bertviz", "1.4.1", "torch>=1.0", "transformers>=2.0", "pytest; extra == 'test'"),
            item("torch", "2.13.0", "sympy", "filelock"),
            item("transformers", "4.57", "filelock"),
            item("sympy", "1.14", "mpmath"),
            item("mpmath", "1.3"),
            item("filelock", "3.20"),
            item("pytest", "9.0"),
            item("jsonschema", "4.26", "fqdn; extra == 'format'"),
            item("fqdn", "1.6"),
        ]
    }
    pins = lock.needed(report, [Requirement("bertviz>=1.4")], {"torch"})
    assert list(pins) == ["bertviz", "filelock", "transformers"]  # not torch, sympy, mpmath, nor the extra
    assert pins["filelock"] == ("3.20", {"transformers"})
    assert list(lock.needed(report, [Requirement("jsonschema[format]")], set())) == ["fqdn", "jsonschema"]
