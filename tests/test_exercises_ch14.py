"""Chapter 14's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch
import torch.nn.functional as F

import fromscratch.exercises.ch14 as ch14


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch14).failed == 0


def test_check_rms_norm(capsys):
    def by_hand(x, weight, eps=1e-5):
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight

    def layer_norm(x, weight, eps=1e-5):  # subtracts the mean: not RMSNorm
        return F.layer_norm(x, (x.size(-1),), weight, eps=eps)

    def eps_outside(x, weight, eps=1e-5):  # sqrt(mean) + eps instead of sqrt(mean + eps)
        return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps) * weight

    assert ch14.check_rms_norm(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_rms_norm(layer_norm) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_rms_norm(eps_outside) is False
    assert ch14.check_rms_norm(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_swiglu(capsys):
    def by_hand(x, w_gate, w_up, w_down):
        gate = x @ w_gate.T
        return (gate * torch.sigmoid(gate) * (x @ w_up.T)) @ w_down.T

    def swapped(x, w_gate, w_up, w_down):  # the gate on the wrong projection
        return by_hand(x, w_up, w_gate, w_down)

    def gelu(x, w_gate, w_up, w_down):
        return (F.gelu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T

    assert ch14.check_swiglu(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_swiglu(swapped) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_swiglu(gelu) is False
    assert ch14.check_swiglu(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_expand_kv_heads(capsys):
    def by_index(k, groups):
        return k[:, torch.arange(k.size(1) * groups) // groups]

    def tiled(k, groups):  # head order 0, 1, 0, 1 instead of 0, 0, 1, 1
        return k.repeat(1, groups, 1, 1)

    assert ch14.check_expand_kv_heads(by_index) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_expand_kv_heads(tiled) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_expand_kv_heads(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch14.check_rms_norm(stub)
    ch14.check_swiglu(stub)
    ch14.check_expand_kv_heads(stub)
