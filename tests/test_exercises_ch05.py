"""Chapter 05's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch05_transformer_block.checks as ch05


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch05).failed == 0


def test_check_layer_norm(capsys):
    def by_hand(x, weight, bias, eps=1e-5):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return weight * (x - mean) / torch.sqrt(var + eps) + bias

    assert ch05.check_layer_norm(by_hand) is True
    assert "✓" in capsys.readouterr().out

    def unbiased(x, weight, bias):  # torch.var's default divides by e - 1
        mean = x.mean(dim=-1, keepdim=True)
        return weight * (x - mean) / torch.sqrt(x.var(dim=-1, keepdim=True) + 1e-5) + bias

    assert ch05.check_layer_norm(unbiased) is False
    assert "✗ unbiased differs from the reference" in capsys.readouterr().out
    assert ch05.check_layer_norm(lambda x, w, b: (x - x.mean(dim=1, keepdim=True)) * w + b) is False
    assert "✗" in capsys.readouterr().out  # normalises over the positions, not the embedding
    assert ch05.check_layer_norm(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_sinusoids(capsys):
    def loops(context, emb):
        table = torch.zeros(context, emb)
        for p in range(context):
            for i in range(emb // 2):
                angle = p / 10_000 ** (2 * i / emb)
                table[p, 2 * i], table[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
        return table

    assert ch05.check_sinusoids(loops) is True
    assert "✓" in capsys.readouterr().out

    def swapped(context, emb):  # cos in the even dimensions, sin in the odd ones
        return loops(context, emb).view(context, emb // 2, 2).flip(-1).reshape(context, emb)

    assert ch05.check_sinusoids(swapped) is False
    assert "✗ swapped differs" in capsys.readouterr().out
    assert ch05.check_sinusoids(lambda context, emb: torch.zeros(context, emb + 1)) is False
    assert "expected shape (10, 8), got (10, 9)" in capsys.readouterr().out
    assert ch05.check_sinusoids(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_pre_norm(capsys):
    def pre_norm(block, x):
        x = x + block.attention(block.norm1(x))
        return x + block.ff(block.norm2(x))

    assert ch05.check_pre_norm(pre_norm) is True
    assert "✓ pre_norm matches the reference on 2 test inputs" in capsys.readouterr().out

    def post_norm(block, x):
        x = block.norm1(x + block.attention(x))
        return block.norm2(x + block.ff(x))

    def norms_swapped(block, x):
        x = x + block.attention(block.norm2(x))
        return x + block.ff(block.norm1(x))

    def no_residual(block, x):
        return block.ff(block.norm2(block.attention(block.norm1(x))))

    for wrong in (post_norm, norms_swapped, no_residual):
        assert ch05.check_pre_norm(wrong) is False
        assert f"✗ {wrong.__name__} differs" in capsys.readouterr().out
    assert ch05.check_pre_norm(lambda block, x: block.missing(x)) is False
    assert "raised AttributeError" in capsys.readouterr().out
    assert ch05.check_pre_norm(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch05.check_layer_norm(stub)
    ch05.check_sinusoids(stub)
    ch05.check_pre_norm(stub)
