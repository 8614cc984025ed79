"""Chapter 03's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch03_queries_keys_values.checks as ch03
from fromscratch.attention import causal_mask, padding_mask


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch03).failed == 0


def test_check_attention(capsys):
    def attention(q, k, v):
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights

    assert ch03.check_attention(attention) is True
    assert "✓" in capsys.readouterr().out

    def unscaled(q, k, v):
        weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return weights @ v, weights

    assert ch03.check_attention(unscaled) is False
    assert "✗" in capsys.readouterr().out
    assert ch03.check_attention(lambda q, k, v: attention(q, k, v)[0]) is False  # no weights returned
    assert "expected a sequence of 2 items" in capsys.readouterr().out
    assert ch03.check_attention(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_doubled_width(capsys):
    assert ch03.check_doubled_width(math.sqrt(2)) is True
    assert "✓ the factor is right" in capsys.readouterr().out
    assert ch03.check_doubled_width(2.0) is False  # the unscaled scores' factor
    assert "✗ the factor is not right yet: expected 1.4142, got 2.0" in capsys.readouterr().out
    assert ch03.check_doubled_width(...) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_katze_without_danced(capsys):
    assert ch03.check_katze_without_danced([-2.50, -0.51]) is True  # two decimals are enough
    assert "✓" in capsys.readouterr().out
    assert ch03.check_katze_without_danced(torch.tensor([-2.4988, -0.5086])) is True
    assert "✓" in capsys.readouterr().out
    assert ch03.check_katze_without_danced([4.5, 2.5]) is False  # danced was not hidden
    assert "✗ Katze's output is not right yet" in capsys.readouterr().out
    assert ch03.check_katze_without_danced([-2.5, -0.5, 0.0]) is False
    assert "expected shape (2,)" in capsys.readouterr().out
    assert ch03.check_katze_without_danced("cat") is False
    assert "must be a tensor or a list of numbers" in capsys.readouterr().out
    assert ch03.check_katze_without_danced(...) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_padded_causal_mask(capsys):
    def right(lengths, t):
        return padding_mask(lengths, t)[:, None, :] & causal_mask(t)

    assert ch03.check_padded_causal_mask(right) is True
    assert "✓" in capsys.readouterr().out
    assert (
        ch03.check_padded_causal_mask(lambda lengths, t: causal_mask(t).expand(len(lengths), t, t)) is False
    )
    assert "✗" in capsys.readouterr().out  # forgets the padding
    assert ch03.check_padded_causal_mask(lambda lengths, t: padding_mask(lengths, t)[:, None, :]) is False
    assert "expected shape" in capsys.readouterr().out  # (b, 1, t) broadcasts, but is not (b, t, t)
    assert ch03.check_padded_causal_mask(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch03.check_attention(stub)
    ch03.check_padded_causal_mask(stub)
