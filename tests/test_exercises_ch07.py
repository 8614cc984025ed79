"""Chapter 07's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch
import torch.nn.functional as F

import fromscratch.exercises.ch07 as ch07


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch07).failed == 0


def test_check_causal_mask(capsys):
    def by_comparison(t):
        positions = torch.arange(t)
        return positions[None, :] <= positions[:, None]  # (t, t): key j <= query i

    assert ch07.check_causal_mask(by_comparison) is True
    assert "✓" in capsys.readouterr().out
    assert ch07.check_causal_mask(lambda t: torch.ones(t, t, dtype=torch.bool).triu()) is False
    assert "✗" in capsys.readouterr().out  # the wrong triangle: queries may see the future
    assert ch07.check_causal_mask(lambda t: torch.ones(t, t).tril()) is False
    assert "must return a boolean mask" in capsys.readouterr().out  # 1.0 / 0.0 floats
    assert ch07.check_causal_mask(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_bits_per_byte(capsys):
    def by_hand(model, stream, context):
        stream = stream.long()
        inputs = stream[:-1].view(-1, context)  # (k, t)
        targets = stream[1:].view(-1, context)  # (k, t)
        with torch.no_grad():
            logits = model(inputs)  # (k, t, V)
        return F.cross_entropy(logits.transpose(1, 2), targets).item() / math.log(2)

    def in_nats(model, stream, context):
        return by_hand(model, stream, context) * math.log(2)

    def no_shift(model, stream, context):  # predicts each byte from itself and what precedes it
        inputs = stream[:-1].long().view(-1, context)  # (k, t)
        logits = model(inputs)  # (k, t, V)
        return F.cross_entropy(logits.transpose(1, 2), inputs).item() / math.log(2)

    assert ch07.check_bits_per_byte(by_hand) is True
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
    def sharpened(logits, temperature, top_k):
        if top_k is not None:
            kth = logits.topk(top_k, dim=-1).values[:, -1:]  # (b, 1)
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.softmax(logits / temperature, dim=-1)  # (b, V)

    def top_k_after_softmax_of_all(logits, temperature, top_k):  # forgets to renormalise
        p = torch.softmax(logits / temperature, dim=-1)
        if top_k is not None:
            kth = p.topk(top_k, dim=-1).values[:, -1:]
            p = p.masked_fill(p < kth, 0.0)
        return p

    assert ch07.check_probabilities(sharpened) is True
    assert "✓" in capsys.readouterr().out
    assert ch07.check_probabilities(lambda z, temperature, k: torch.softmax(z * temperature, -1)) is False
    assert "✗" in capsys.readouterr().out  # multiplies by T instead of dividing
    assert ch07.check_probabilities(top_k_after_softmax_of_all) is False
    assert "✗" in capsys.readouterr().out
    assert ch07.check_probabilities(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone():
    state = torch.random.get_rng_state()
    ch07.check_causal_mask(stub)
    ch07.check_bits_per_byte(stub)
    ch07.check_probabilities(stub)
    assert torch.equal(torch.random.get_rng_state(), state)
