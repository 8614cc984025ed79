"""Chapter 04's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch04_multi_head_attention.checks as ch04
from fromscratch.attention import SelfAttention

PAPER = {"W_Q": (512, 64), "W_K": (512, 64), "W_V": (512, 64), "W_O": (512, 512), "parameters": 1_048_576}


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch04).failed == 0


def folded(attention, x, *, scale=True):
    b, t, e = x.shape
    h = attention.heads
    s = e // h
    q, k, v = (
        f(x).view(b, t, h, s).transpose(1, 2).reshape(b * h, t, s)
        for f in (attention.to_queries, attention.to_keys, attention.to_values)
    )
    w = torch.softmax(q @ k.transpose(1, 2) / (math.sqrt(s) if scale else 1.0), dim=2)
    return attention.unify_heads((w @ v).view(b, h, t, s).transpose(1, 2).reshape(b, t, e))


def test_check_multi_head(capsys):
    assert ch04.check_multi_head(folded) is True
    assert "✓" in capsys.readouterr().out
    assert ch04.check_multi_head(lambda attention, x: folded(attention, x, scale=False)) is False
    assert "✗" in capsys.readouterr().out

    def reshaped_without_transpose(attention, x):  # mixes tokens and heads
        b, t, e = x.shape
        h = attention.heads
        q, k, v = (
            f(x).reshape(b * h, t, e // h)
            for f in (attention.to_queries, attention.to_keys, attention.to_values)
        )
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(e // h), dim=2)
        return attention.unify_heads((w @ v).reshape(b, t, e))

    assert ch04.check_multi_head(reshaped_without_transpose) is False
    assert "✗" in capsys.readouterr().out
    assert ch04.check_multi_head(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_wide_parameters(capsys):
    assert ch04.check_wide_parameters(3 * 128 * 1024 + 1024 * 128 + 128) is True
    assert "✓" in capsys.readouterr().out
    assert ch04.check_wide_parameters(3 * 128 * 1024 + 1024 * 128) is False  # forgot the bias
    assert "expected 524416, got 524288" in capsys.readouterr().out
    assert ch04.check_wide_parameters(...) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_paper_shapes(capsys):
    assert ch04.check_paper_shapes(PAPER) is True
    assert "✓ the paper's shapes are right: four shapes and 1,048,576 weights" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict(PAPER, W_O=(512, 64))) is False  # the lecture notes' slip
    assert "W_O is not right yet" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict(PAPER, W_Q=(64, 512))) is False
    assert "nn.Linear's layout" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict(PAPER, parameters=1_050_624)) is False  # with biases
    assert "the number of weights is not yet" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict(PAPER, W_K="512x64")) is False
    assert "must be a shape" in capsys.readouterr().out
    assert ch04.check_paper_shapes({"W_Q": (512, 64)}) is False
    assert "exactly the keys" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict(PAPER, parameters=...)) is None
    assert "parameters still to fill in" in capsys.readouterr().out
    assert ch04.check_paper_shapes(dict.fromkeys(PAPER, ...)) is None
    assert "… the paper's shapes: not attempted yet" in capsys.readouterr().out
    assert ch04.check_paper_shapes(...) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_standard_copy(capsys):
    def block_diagonal(narrow):
        standard = SelfAttention(narrow.emb, narrow.heads)
        with torch.no_grad():
            for name in ("to_queries", "to_keys", "to_values"):
                getattr(standard, name).weight.copy_(torch.block_diag(*getattr(narrow, name).weight))
            standard.unify_heads.load_state_dict(narrow.unify_heads.state_dict())
        return standard

    assert ch04.check_standard_copy(block_diagonal) is True
    assert "✓" in capsys.readouterr().out

    def only_unify(narrow):  # leaves the projections random
        standard = SelfAttention(narrow.emb, narrow.heads)
        standard.unify_heads.load_state_dict(narrow.unify_heads.state_dict())
        return standard

    assert ch04.check_standard_copy(only_unify) is False
    assert "✗" in capsys.readouterr().out
    assert ch04.check_standard_copy(lambda narrow: narrow) is False
    assert "standard heads" in capsys.readouterr().out
    assert ch04.check_standard_copy(lambda narrow: 1 / 0) is False
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    assert ch04.check_standard_copy(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch04.check_multi_head(stub)
    ch04.check_wide_parameters(...)
    ch04.check_paper_shapes(PAPER)
    ch04.check_standard_copy(stub)
