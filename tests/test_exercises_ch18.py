"""Chapter 18's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch18_interpretability.checks as ch18
from fromscratch.interp import induction_score, patch, sae_loss


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch18).failed == 0


def test_check_induction_score(capsys):
    def by_hand(weights, period):
        t = weights.size(-1)
        queries = torch.arange(period, t)
        return weights[:, :, queries, queries - period + 1].mean(dim=(0, 2))

    def same_token(weights, period):  # the previous occurrence itself: a duplicate-token head's score
        t = weights.size(-1)
        queries = torch.arange(period, t)
        return weights[:, :, queries, queries - period].mean(dim=(0, 2))

    def calls_the_package(weights, period):
        return induction_score(weights, period)

    assert ch18.check_induction_score(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch18.check_induction_score(same_token) is False
    assert "✗" in capsys.readouterr().out
    assert ch18.check_induction_score(calls_the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch18.check_induction_score(stub) is None
    assert "not attempted" in capsys.readouterr().out


def test_check_zero_ablation(capsys):
    def right(model, tokens, name):
        with torch.no_grad(), patch(model, {name: torch.zeros_like}):
            return model(tokens)

    def nothing_ablated(model, tokens, name):
        with torch.no_grad():
            return model(tokens)

    def leaves_a_hook(model, tokens, name):
        module = model.get_submodule(name)
        module.register_forward_hook(lambda m, inputs, out: torch.zeros_like(out))  # never removed
        with torch.no_grad():
            return model(tokens)

    assert ch18.check_zero_ablation(right) is True
    assert "✓" in capsys.readouterr().out
    assert ch18.check_zero_ablation(nothing_ablated) is False
    assert "✗" in capsys.readouterr().out
    assert ch18.check_zero_ablation(leaves_a_hook) is False
    assert ch18.check_zero_ablation(stub) is None


def test_check_sae_loss(capsys):
    def right(sae, x, l1):
        reconstruction, z = sae(x)
        return (reconstruction - x).pow(2).sum(dim=1).mean() + l1 * z.abs().sum(dim=1).mean()

    def mean_over_dims(sae, x, l1):  # the error averaged over d, not summed
        reconstruction, z = sae(x)
        return (reconstruction - x).pow(2).mean() + l1 * z.abs().sum(dim=1).mean()

    def calls_the_package(sae, x, l1):
        return sae_loss(sae, x, l1)

    assert ch18.check_sae_loss(right) is True
    assert ch18.check_sae_loss(mean_over_dims) is False
    assert "✗" in capsys.readouterr().out
    assert ch18.check_sae_loss(calls_the_package) is False
    assert ch18.check_sae_loss(stub) is None
