"""Chapter 15's checkers: a right answer passes, a wrong one is reported, an untouched stub waits, and an
answer that only calls the package's own function is turned down."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch15_assistant.checks as ch15
from fromscratch.interop import quant
from fromscratch.tokenizers.special import IGNORE
from fromscratch.training import dpo


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

    def the_package(x):
        return quant.quantize_q4_1(x)

    assert ch15.check_quantize_q4_1(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch15.check_quantize_q4_1(nibbles_swapped) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_quantize_q4_1(sixteen_steps) is False
    assert ch15.check_quantize_q4_1(the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch15.check_quantize_q4_1(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_sequence_logprob(capsys):
    def by_hand(logits, labels):
        logp = torch.log_softmax(logits, dim=-1)
        rows = []
        for row, lab in zip(logp, labels, strict=True):
            rows.append(sum(row[i, t] for i, t in enumerate(lab.tolist()) if t != IGNORE))
        return torch.stack([torch.as_tensor(r, dtype=torch.float32) for r in rows])

    def mean_not_sum(logits, labels):
        scored = labels != IGNORE
        logp = torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp(min=0)[..., None])[..., 0]
        return (logp * scored).sum(-1) / scored.sum(-1).clamp(min=1)

    def every_position(logits, labels):  # IGNORE not skipped
        return torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp(min=0)[..., None])[..., 0].sum(-1)

    def the_package(logits, labels):
        return dpo.sequence_logprobs(logits, labels)

    assert ch15.check_sequence_logprob(by_hand) is True
    assert "✓ by_hand" in capsys.readouterr().out
    assert ch15.check_sequence_logprob(mean_not_sum) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_sequence_logprob(every_position) is False
    assert ch15.check_sequence_logprob(the_package) is False
    assert ch15.check_sequence_logprob(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_calibrate(capsys):
    def by_hand(logits, content_free):
        p = torch.softmax(logits, dim=-1)
        prior = torch.softmax(content_free, dim=-1).mean(0)
        return (p / prior).argmax(-1)

    def uncalibrated(logits, content_free):
        return logits.argmax(-1)

    def subtract_logits(logits, content_free):  # the mean of the logits, not of the probabilities
        return (logits - content_free.mean(0)).argmax(-1)

    assert ch15.check_calibrate(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch15.check_calibrate(uncalibrated) is False
    assert "✗" in capsys.readouterr().out
    assert ch15.check_calibrate(subtract_logits) is False
    assert ch15.check_calibrate(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_dpo_loss(capsys):
    def by_hand(pc, pr, rc, rr, beta):
        margin = (pc - rc) - (pr - rr)
        return -torch.nn.functional.logsigmoid(beta * margin).mean()

    def no_reference(pc, pr, rc, rr, beta):  # the policy's margin alone: not DPO
        return -torch.nn.functional.logsigmoid(beta * (pc - pr)).mean()

    def sign_flipped(pc, pr, rc, rr, beta):  # prefers the rejected answer
        return -torch.nn.functional.logsigmoid(-beta * ((pc - rc) - (pr - rr))).mean()

    def summed(pc, pr, rc, rr, beta):  # a sum over the pairs, not the mean
        return -torch.nn.functional.logsigmoid(beta * ((pc - rc) - (pr - rr))).sum()

    def overflows(pc, pr, rc, rr, beta):  # log(sigmoid(x)) written out: -inf for a large negative margin
        return -torch.log(1 / (1 + torch.exp(-beta * ((pc - rc) - (pr - rr))))).mean()

    def the_package(pc, pr, rc, rr, beta):
        return dpo.dpo_loss(pc, pr, rc, rr, beta=beta)

    assert ch15.check_dpo_loss(by_hand) is True
    assert "✓ by_hand" in capsys.readouterr().out
    for wrong in (no_reference, sign_flipped, summed, overflows):
        assert ch15.check_dpo_loss(wrong) is False, wrong.__name__
        assert "✗" in capsys.readouterr().out
    assert ch15.check_dpo_loss(the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch15.check_dpo_loss(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch15.check_quantize_q4_1(stub)
    ch15.check_sequence_logprob(stub)
    ch15.check_calibrate(stub)
    ch15.check_dpo_loss(stub)
