"""Chapter 11's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch11_longer_contexts.checks as ch11


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch11).failed == 0


def test_check_alibi_bias(capsys):
    def with_loops(slopes, t):
        return torch.tensor([[[-float(m) * abs(i - j) for j in range(t)] for i in range(t)] for m in slopes])

    assert ch11.check_alibi_bias(with_loops) is True
    assert "✓" in capsys.readouterr().out
    assert (
        ch11.check_alibi_bias(lambda slopes, t: with_loops(slopes, t).neg()) is False
    )  # a bonus, not a penalty
    assert "✗" in capsys.readouterr().out
    assert ch11.check_alibi_bias(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_rotate(capsys):
    def with_complex_numbers(x, positions):
        d = x.size(-1)
        theta = 10_000 ** (-torch.arange(0, d, 2) / d)  # (d/2,)
        turn = torch.polar(torch.ones(len(positions), d // 2), positions[:, None].float() * theta)  # (t, d/2)
        pairs = torch.view_as_complex(x.reshape(len(positions), d // 2, 2).contiguous())
        return torch.view_as_real(pairs * turn).flatten(-2)

    def half_split(x, positions):  # GPT-NeoX's layout rotates (x_m, x_{m+d/2}): another valid RoPE
        d = x.size(-1)
        theta = 10_000 ** (-torch.arange(0, d, 2) / d)
        angle = positions[:, None].float() * theta
        a, b = x[:, : d // 2], x[:, d // 2 :]
        return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1)

    assert ch11.check_rotate(with_complex_numbers) is True
    assert "✓" in capsys.readouterr().out
    assert ch11.check_rotate(half_split) is False
    assert "✗" in capsys.readouterr().out
    assert ch11.check_rotate(lambda x, p: x * math.cos(1.0)) is False
    assert ch11.check_rotate(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_strided_mask(capsys):
    def by_formula(t, stride):
        i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
        return (j <= i) & ((i - j < stride) | ((i - j) % stride == 0))

    assert ch11.check_strided_mask(by_formula) is True
    assert "✓" in capsys.readouterr().out
    assert ch11.check_strided_mask(lambda t, s: by_formula(t, s).T) is False  # keys after the query
    assert "✗" in capsys.readouterr().out
    assert ch11.check_strided_mask(lambda t, s: by_formula(t, s).int()) is False
    assert "must return a boolean mask" in capsys.readouterr().out
    assert ch11.check_strided_mask(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch11.check_alibi_bias(stub)
    ch11.check_rotate(stub)
    ch11.check_strided_mask(stub)
