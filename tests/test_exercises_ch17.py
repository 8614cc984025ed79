"""Chapter 17's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch17_reasoning.checks as ch17
from fromscratch.training.rl import pass_at_k


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch17).failed == 0


def test_check_pass_at_k(capsys):
    def by_hand(n, c, k):
        return 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)

    def plug_in(n, c, k):  # c/n in the formula for independent draws: biased low
        return 1 - (1 - c / n) ** k

    def no_edge(n, c, k):  # forgets that n - c < k means certain success
        return 1 - math.comb(n - c, k) / math.comb(n, k) if n - c >= k else 0.0

    def calls_the_package(n, c, k):
        return pass_at_k(n, c, k)

    assert ch17.check_pass_at_k(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch17.check_pass_at_k(plug_in) is False
    assert "✗" in capsys.readouterr().out
    assert ch17.check_pass_at_k(no_edge) is False
    assert ch17.check_pass_at_k(calls_the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch17.check_pass_at_k(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_rloo(capsys):
    def by_hand(rewards):
        n = rewards.size(1)
        return rewards - (rewards.sum(1, keepdim=True) - rewards) / (n - 1)

    def group_mean(rewards):  # GRPO without the std: the mean includes the sample itself
        return rewards - rewards.mean(1, keepdim=True)

    def whole_batch(rewards):  # leaves one out of the whole batch, not of its row
        flat = rewards.flatten()
        return (flat - (flat.sum() - flat) / (len(flat) - 1)).view_as(rewards)

    assert ch17.check_rloo(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch17.check_rloo(group_mean) is False
    assert "✗" in capsys.readouterr().out
    assert ch17.check_rloo(whole_batch) is False
    assert ch17.check_rloo(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_clip_gradient(capsys):
    def by_hand(ratio, advantage, clip=0.2):
        held = torch.where(advantage > 0, ratio > 1 + clip, ratio < 1 - clip)
        return torch.where(held, torch.zeros_like(ratio), -ratio * advantage)

    def unclipped(ratio, advantage, clip=0.2):  # REINFORCE's gradient everywhere
        return -ratio * advantage

    def both_sides(ratio, advantage, clip=0.2):  # zero outside the band on both sides
        inside = (ratio >= 1 - clip) & (ratio <= 1 + clip)
        return torch.where(inside, -ratio * advantage, torch.zeros_like(ratio))

    def sign_flipped(ratio, advantage, clip=0.2):  # the objective's gradient, not the loss's
        return -by_hand(ratio, advantage, clip)

    assert ch17.check_clip_gradient(by_hand) is True
    assert "✓" in capsys.readouterr().out
    for wrong in (unclipped, both_sides, sign_flipped):
        assert ch17.check_clip_gradient(wrong) is False
        assert "✗" in capsys.readouterr().out
    assert ch17.check_clip_gradient(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_the_reference_gradient_is_minus_ratio_times_advantage_inside_the_band():
    ratio = torch.tensor([0.9, 1.0, 1.1], dtype=torch.float64)
    advantage = torch.tensor([2.0, -1.0, 0.5], dtype=torch.float64)
    assert torch.allclose(ch17.clip_gradient(ratio, advantage), -ratio * advantage)
