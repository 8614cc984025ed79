"""Chapter 02's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch02_basic_self_attention.checks as ch02

EMBEDDING = {  # the chapter's hand-chosen features: animal, moving, place, article
    "the": [-0.5, -0.5, -0.5, 1.0],
    "cat": [1.5, 1.0, 0.0, 0.0],
    "walks": [1.0, 1.5, 0.5, 0.0],
    "on": [0.0, 0.0, 1.0, 0.5],
    "street": [0.0, 0.5, 1.5, 0.0],
}
TOKENS = ["the", "cat", "walks", "on", "the", "street"]


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch02).failed == 0


def test_check_basic_attention(capsys):
    def loops(x):
        y = torch.zeros_like(x)
        for n in range(x.shape[0]):
            for i in range(x.shape[1]):
                w = torch.softmax(torch.stack([x[n, i] @ x[n, j] for j in range(x.shape[1])]), dim=0)
                y[n, i] = sum(w[j] * x[n, j] for j in range(x.shape[1]))
        return y

    assert ch02.check_basic_attention(loops) is True
    assert "✓" in capsys.readouterr().out
    assert ch02.check_basic_attention(lambda x: torch.softmax(x @ x.transpose(1, 2), dim=1) @ x) is False
    assert "✗" in capsys.readouterr().out  # softmax over the wrong dimension
    assert ch02.check_basic_attention(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_the_attends_to_cat(capsys):
    assert ch02.check_the_attends_to_cat([1.0, 0.5, 0.0, 0.2], EMBEDDING, TOKENS) is True
    assert "✓" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat(EMBEDDING["the"], EMBEDDING, TOKENS) is False
    assert "expected 'cat', got 'the'" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat([0.0, 1.0, 0.0, 0.0], EMBEDDING, TOKENS) is False  # walks wins
    assert "got 'walks'" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat([0.0, 0.0, 0.0, 0.0], EMBEDDING, TOKENS) is False  # all tie
    assert "(a tie)" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat([1.0, 0.5], EMBEDDING, TOKENS) is False
    assert "✗ your vector for 'the' needs 4 numbers" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat("cat", EMBEDDING, TOKENS) is False
    assert "must be a list of numbers" in capsys.readouterr().out
    assert ch02.check_the_attends_to_cat(..., EMBEDDING, TOKENS) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_temperature(capsys):
    def with_temperature(x, tau):
        return torch.softmax(x @ x.transpose(1, 2) / tau, dim=2) @ x

    assert ch02.check_temperature(with_temperature) is True
    assert "✓" in capsys.readouterr().out
    assert (
        ch02.check_temperature(lambda x, tau: torch.softmax(x @ x.transpose(1, 2) * tau, dim=2) @ x) is False
    )
    assert "✗" in capsys.readouterr().out  # multiplies by tau: right only for tau = 1
    assert ch02.check_temperature(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch02.check_basic_attention(stub)
    ch02.check_temperature(stub)
