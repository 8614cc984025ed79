"""Numbers quoted from the chapters' cpu runs: one source (``chapters/chNN_*/results.json``), and the pages
that quote them (``benchmarks/README.md``, ``book/instructors.md``) agree with it."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

import pytest
from quote_results import MARKER, PAGES, refresh

from fromscratch.chapters import results

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_quoted_number_agrees_with_its_results_file(page):
    text = page.read_text(encoding="utf-8")
    assert MARKER.search(text), f"{page.name} quotes no chapter result: is the marker syntax intact?"
    _, changed = refresh(text)
    assert not changed, (
        f"{page.name} quotes numbers its chapters' results files no longer hold: "
        f"{changed}; run python tools/quote_results.py"
    )


def test_refresh_rewrites_only_the_number():
    text = "bag <!-- quote 06 bag_accuracy .1 % -->87.9 %<!-- /quote -->"
    text += " and 4 <!-- quote 08 n -->3<!-- /quote -->."
    numbers = {("06", "bag_accuracy"): 0.88, ("08", "n"): 3}
    new, changed = refresh(text, lambda chapter, key: numbers[chapter, key])
    assert new == text.replace("87.9 %", "88.0 %")
    assert changed == ["06 bag_accuracy: 87.9 % -> 88.0 %"]
    assert refresh(new, lambda chapter, key: numbers[chapter, key]) == (new, [])


def test_say_formats():
    assert results.say(0.8796, ".1 %") == "88.0 %"
    assert results.say(0.8796, ".1%") == "88.0%"
    assert results.say(22.94, ".1f") == "22.9"
    assert results.say(24000, ",") == "24,000"
    assert results.say("cpu") == "cpu"


def test_every_results_file_is_well_formed_and_shipped():
    found = sorted(ROOT.glob("src/fromscratch/chapters/ch*/results.json"))
    assert found, "no chapter has a results.json"
    for file in found:
        chapter = file.parent.name[2:4]
        record = results.load(chapter)
        assert record["chapter"] == chapter and record["profile"] == "cpu"
        assert record["source"] in ("run", "seeded"), file
        assert {"date", "commit", "machine", "numbers"} <= set(record), file
        assert all(isinstance(v, int | float | str) for v in record["numbers"].values()), file
        if record["source"] == "seeded":
            assert record.get("note"), f"{file}: say where the seeded numbers come from"
    # package data: the wheel carries them (pyproject's package-data)
    shipped = files("fromscratch") / "chapters" / found[0].parent.name / "results.json"
    assert json.loads(shipped.read_text(encoding="utf-8"))["chapter"] == found[0].parent.name[2:4]
    assert '"chapters/*/results.json"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_quoted_and_its_errors():
    assert results.quoted("06", "bag_accuracy") == pytest.approx(0.88, abs=0.05)
    with pytest.raises(KeyError, match="records no"):
        results.quoted("06", "no_such_number")
    with pytest.raises(ValueError, match="two digits"):
        results.path("6")


def test_record_writes_only_in_cpu_from_a_checkout(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "HERE", tmp_path)
    (tmp_path / "ch99_test").mkdir()
    assert results.record("99", SimpleNamespace(name="smoke"), x=1.0) is None
    assert results.record("99", SimpleNamespace(name="gpu"), x=1.0) is None
    monkeypatch.setattr(results, "editable_checkout", lambda: False)
    assert results.record("99", SimpleNamespace(name="cpu"), x=1.0) is None
    monkeypatch.setattr(results, "editable_checkout", lambda: True)
    written = results.record("99", SimpleNamespace(name="cpu"), accuracy=0.87654321, n=25_000, name="bag")
    assert written == tmp_path / "ch99_test" / "results.json"
    record = results.load("99")
    assert record["numbers"] == {"accuracy": 0.876543, "n": 25_000, "name": "bag"}
    assert record["source"] == "run" and record["profile"] == "cpu" and record["date"]
    with pytest.raises(FileNotFoundError, match="cpu profile"):
        (tmp_path / "ch98_other").mkdir()
        results.load("98")
