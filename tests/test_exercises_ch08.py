"""Chapter 08's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch08_design_considerations.checks as ch08


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch08).failed == 0


def test_check_cnn_depth_measures_the_answer(capsys):
    assert ch08.check_cnn_depth(100, 7) is True
    out = capsys.readouterr().out
    assert "✓ plain: 100 blocks see 100 positions back (measured); 99 see only 99" in out
    assert "✓ dilated: 7 blocks see 127 positions back (measured); 6 see only 63" in out
    assert ch08.check_cnn_depth(50, 7) is False  # the pooled answer, not the one asked for
    assert "✗ plain: 50 blocks see 50 positions back (measured): too few" in capsys.readouterr().out
    assert ch08.check_cnn_depth(100, 8) is False
    assert "more than needed" in capsys.readouterr().out
    assert ch08.check_cnn_depth(100, 6.5) is False
    assert "whole number" in capsys.readouterr().out
    assert ch08.check_cnn_depth(..., 7) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_soft_lookup(capsys):
    def with_a_loop(query, keys, values):
        scores = torch.stack([key @ query for key in keys])  # (n,)
        weights = scores.exp() / scores.exp().sum()
        return sum(w * v for w, v in zip(weights, values, strict=True))

    def hard(query, keys, values):  # the dict lookup: only the best key's value
        return values[(keys @ query).argmax()]

    assert ch08.check_soft_lookup(with_a_loop) is True
    assert "✓" in capsys.readouterr().out
    assert ch08.check_soft_lookup(hard) is False
    assert "✗" in capsys.readouterr().out
    assert ch08.check_soft_lookup(lambda q, k, v: torch.softmax(k @ q, dim=0) @ k) is False  # returns keys
    assert "✗" in capsys.readouterr().out
    assert ch08.check_soft_lookup(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_nonlinearity_count(capsys):
    assert ch08.blog_counts() == (6, 6, 12)
    assert ch08.check_nonlinearity_count((6, 6, 12)) is True
    assert "✓" in capsys.readouterr().out
    assert ch08.check_nonlinearity_count((2, 6, 12)) is False  # one block's softmax, not six
    assert "✗" in capsys.readouterr().out
    assert ch08.check_nonlinearity_count((6, 6, ...)) is None
    assert ch08.check_nonlinearity_count(...) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch08.check_cnn_depth(3, 2)
    ch08.check_soft_lookup(stub)
    ch08.check_nonlinearity_count((1, 1, 1))
