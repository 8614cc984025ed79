"""Chapter 07's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch
import torch.nn.functional as F

import fromscratch.chapters.ch07_masking_generation.checks as ch07


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch07).failed == 0


def test_check_causal_mask(capsys):
    def with_loops(t):
        return torch.tensor([[j <= i for j in range(t)] for i in range(t)])  # (t, t)

    assert ch07.check_causal_mask(with_loops) is True
    assert "✓" in capsys.readouterr().out
    assert ch07.check_causal_mask(lambda t: torch.ones(t, t, dtype=torch.bool).triu()) is False
    assert "✗" in capsys.readouterr().out  # the wrong triangle: queries may see the future
    assert ch07.check_causal_mask(lambda t: torch.ones(t, t).tril()) is False
    assert "must return a boolean mask" in capsys.readouterr().out  # 1.0 / 0.0 floats
    assert ch07.check_causal_mask(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_bits_per_byte(capsys):
    def window_by_window(model, stream, context):
        total = 0.0
        for start in range(0, len(stream) - 1, context):
            chunk = stream[start : start + context + 1].long()  # (t + 1,)
            logits = model(chunk[None, :-1])[0]  # (t, V)
            total += F.cross_entropy(logits, chunk[1:], reduction="sum").item()
        return total / (len(stream) - 1) / math.log(2)

    def in_nats(model, stream, context):
        return window_by_window(model, stream, context) * math.log(2)

    def no_shift(model, stream, context):  # predicts each byte from itself and what precedes it
        inputs = stream[:-1].long().view(-1, context)  # (k, t)
        logits = model(inputs)  # (k, t, V)
        return F.cross_entropy(logits.transpose(1, 2), inputs).item() / math.log(2)

    assert ch07.check_bits_per_byte(window_by_window) is True
    assert "✓" in capsys.readouterr().out
    assert ch07.check_bits_per_byte(in_nats) is False
    assert "✗" in capsys.readouterr().out
    assert ch07.check_bits_per_byte(no_shift) is False
    assert "✗" in capsys.readouterr().out
    assert ch07.check_bits_per_byte(lambda model, stream, context: model(stream)) is False
    assert "raised ValueError" in capsys.readouterr().out  # a 1-d stream is not a (b, t) batch
    assert ch07.check_bits_per_byte(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_probabilities(capsys):
    def cut_and_renormalise(logits, temperature, top_k):
        p = torch.softmax(logits / temperature, dim=-1)  # (b, V)
        if top_k is None:
            return p
        kth = p.sort(dim=-1, descending=True).values[:, top_k - 1 : top_k]  # (b, 1)
        p = p * (p >= kth)
        return p / p.sum(dim=-1, keepdim=True)

    def top_k_after_softmax_of_all(logits, temperature, top_k):  # forgets to renormalise
        p = torch.softmax(logits / temperature, dim=-1)
        if top_k is not None:
            kth = p.topk(top_k, dim=-1).values[:, -1:]
            p = p.masked_fill(p < kth, 0.0)
        return p

    assert ch07.check_probabilities(cut_and_renormalise) is True
    assert "✓" in capsys.readouterr().out
    assert ch07.check_probabilities(lambda z, temperature, k: torch.softmax(z * temperature, -1)) is False
    assert "✗" in capsys.readouterr().out  # multiplies by T instead of dividing
    assert ch07.check_probabilities(top_k_after_softmax_of_all) is False
    assert "✗" in capsys.readouterr().out
    assert ch07.check_probabilities(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch07.check_causal_mask(stub)
    ch07.check_bits_per_byte(stub)
    ch07.check_probabilities(stub)
