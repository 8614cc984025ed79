"""The general checkers of ``fromscratch.chapters.checking``: right, wrong and untouched answers."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
import torch

import fromscratch.chapters as chapters
import fromscratch.chapters.checking as exercises
from fromscratch.chapters.checking import check_function, check_value


def reference(x):
    return x.softmax(dim=-1)


def test_the_module_docstring_runs():
    assert doctest.testmod(exercises).failed == 0


def test_check_function_right_wrong_and_not_attempted(capsys):
    inputs = [(torch.randn(2, 3),), (torch.randn(4, 5),)]
    assert (
        check_function(lambda x: torch.exp(x) / torch.exp(x).sum(-1, keepdim=True), reference, inputs) is True
    )
    assert "✓" in capsys.readouterr().out
    assert check_function(lambda x: x.softmax(dim=0), reference, inputs) is False
    assert "differs from the reference on test input 1" in capsys.readouterr().out
    assert check_function(lambda x: x.softmax(dim=-1)[..., :2], reference, inputs) is False
    assert "expected shape" in capsys.readouterr().out


@pytest.mark.parametrize(
    "stub", [lambda x: None, lambda x: ..., lambda x: (_ for _ in ()).throw(NotImplementedError)]
)
def test_an_untouched_stub_is_not_attempted_never_an_error(stub, capsys):
    assert check_function(stub, reference, [(torch.randn(2, 3),)]) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_a_crashing_answer_is_reported_not_raised(capsys):
    assert check_function(lambda x: x @ x, reference, [(torch.randn(2, 3),)]) is False
    assert "raised RuntimeError" in capsys.readouterr().out


def test_check_function_needs_inputs():
    with pytest.raises(ValueError, match="at least one input"):
        check_function(reference, reference, [])


def test_check_value(capsys):
    assert check_value(0.931, 0.93, atol=0.01, name="RMSE") is True
    assert check_value(1.2, 0.93, atol=0.01, name="RMSE") is False
    assert check_value("cat", "cat") is True
    assert check_value("the", "cat") is False
    assert check_value((torch.ones(2), 3), (torch.ones(2), 3)) is True
    assert check_value(..., 0.93) is None
    assert check_value(None, 0.93) is None
    out = capsys.readouterr().out
    assert out.count("✓") == 3 and out.count("✗") == 2 and out.count("not attempted yet") == 2


def test_every_chapter_has_a_checker_module_with_a_wrong_answer_test():
    """Each chapter's checkers live in chapters/chNN_<name>/checks.py and are tested against wrong answers."""
    from pathlib import Path

    folders = sorted(m.name for m in pkgutil.iter_modules(chapters.__path__) if m.name[2:4].isdigit())
    assert len(folders) >= 15, folders
    tests = Path(__file__).parent
    for folder in folders:
        name = folder[:4]  # ch07
        module = importlib.import_module(f"fromscratch.chapters.{folder}.checks")
        checkers = [n for n in dir(module) if n.startswith("check_")]
        assert len(checkers) >= 3, f"{name} has fewer than three checkers: {checkers}"
        test_file = tests / f"test_exercises_{name}.py"
        assert test_file.is_file(), f"{test_file.name} (right/wrong/untouched answers for {name}) is missing"
        source = test_file.read_text()
        for checker in checkers:
            assert checker in source, f"{test_file.name} does not test {checker}"
