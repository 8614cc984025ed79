"""Chapter 09's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch09_encoder_decoder.checks as ch09
from fromscratch.tokenizers.special import BOS as BOS_ID
from fromscratch.tokenizers.special import EOS as EOS_ID


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch09).failed == 0


def test_check_cross_attention(capsys, global_rng_untouched):
    def right(x, context, wq, wk, wv):
        q, k, v = x @ wq, context @ wk, context @ wv
        return torch.softmax(q @ k.T / math.sqrt(k.size(1)), dim=-1) @ v

    def keys_from_x(x, context, wq, wk, wv):  # self-attention by mistake: only works when tq == tk
        q, k, v = x @ wq, x @ wk, x @ wv
        return torch.softmax(q @ k.T / math.sqrt(k.size(1)), dim=-1) @ v

    def unscaled(x, context, wq, wk, wv):
        return torch.softmax((x @ wq) @ (context @ wk).T, dim=-1) @ (context @ wv)

    assert ch09.check_cross_attention(right) is True
    assert "✓" in capsys.readouterr().out
    assert ch09.check_cross_attention(keys_from_x) is False
    assert "✗" in capsys.readouterr().out
    assert ch09.check_cross_attention(unscaled) is False
    assert ch09.check_cross_attention(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_teacher_forcing(capsys):
    def right(target):
        return torch.tensor([BOS_ID, *target.tolist()]), torch.tensor([*target.tolist(), EOS_ID])

    def not_shifted(target):
        return torch.tensor([BOS_ID, *target.tolist()]), torch.tensor([BOS_ID, *target.tolist()])

    assert ch09.check_teacher_forcing(right) is True
    assert ch09.check_teacher_forcing(not_shifted) is False
    assert "✗" in capsys.readouterr().out
    assert ch09.check_teacher_forcing(stub) is None


def test_check_bahdanau_attention(capsys, global_rng_untouched):
    def right(s, h, W, U, v):
        alpha = torch.softmax(torch.stack([v @ torch.tanh(W @ s + U @ hj) for hj in h]), dim=0)
        return (alpha[:, None] * h).sum(0), alpha

    def dot_product(s, h, W, U, v):  # Luong's "dot" score instead of the additive network
        alpha = torch.softmax(h @ U.T @ (W @ s), dim=0)
        return alpha @ h, alpha

    assert ch09.check_bahdanau_attention(right) is True
    assert ch09.check_bahdanau_attention(dot_product) is False
    assert "✗" in capsys.readouterr().out
    assert ch09.check_bahdanau_attention(stub) is None
