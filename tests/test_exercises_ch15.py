"""Chapter 15's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch15_assistant.checks as ch15
from fromscratch.tokenizers.special import IGNORE


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch15).failed == 0


def test_check_quantize_q4_1(capsys):
    def by_hand(x):
        low, high = x.min(), x.max()
        d = (high - low) / 15
        q = torch.trunc((x - low) * (1 / d) + 0.5).clamp(0, 15).to(torch.uint8)
        header = torch.stack([d, low]).half().view(torch.uint8)
        return torch.cat([header, q[:16] | (q[16:] << 4)])

    def nibbles_swapped(x):  # number j in the high nibble: not llama.cpp's order
        right = by_hand(x)
        return torch.cat([right[:4], (right[4:] >> 4) | (right[4:] << 4)])

    def sixteen_steps(x):  # d = (max - min) / 16
        low, high = x.min(), x.max()
        d = (high - low) / 16
        q = torch.trunc((x - low) / d + 0.5).clamp(0, 15).to(torch.uint8)
        return torch.cat([torch.stack([d, low]).half().view(torch.uint8), q[:16] | (q[16:] << 4)])

    assert ch15.check_quantize_q4_1(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch15.check_quantize_q4_1(nibbles_swapped) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_quantize_q4_1(sixteen_steps) is False
    assert ch15.check_quantize_q4_1(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_assistant_labels(capsys):
    def by_hand(ids, mask):
        return [ids[i + 1] if i + 1 < len(ids) and mask[i + 1] else IGNORE for i in range(len(ids))]

    def not_shifted(ids, mask):  # the token itself instead of the next one
        return [i if m else IGNORE for i, m in zip(ids, mask, strict=True)]

    def everything(ids, mask):  # every next token scored
        return [*ids[1:], IGNORE]

    assert ch15.check_assistant_labels(by_hand) is True
    assert "✓ by_hand" in capsys.readouterr().out
    assert ch15.check_assistant_labels(not_shifted) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_assistant_labels(everything) is False
    assert ch15.check_assistant_labels(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_lora_merge(capsys):
    def by_hand(weight, A, B, alpha, rank):
        return weight + alpha / rank * B @ A

    def unscaled(weight, A, B, alpha, rank):
        return weight + B @ A

    def transposed(weight, A, B, alpha, rank):
        return weight + alpha / rank * (A.T @ B.T).T

    assert ch15.check_lora_merge(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch15.check_lora_merge(unscaled) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_lora_merge(transposed) is True  # the same matrix, written another way
    assert ch15.check_lora_merge(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch15.check_quantize_q4_1(stub)
    ch15.check_assistant_labels(stub)
    ch15.check_lora_merge(stub)
