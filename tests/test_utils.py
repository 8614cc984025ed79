"""The shared helpers: evaluation mode restored, parameters counted, calls timed."""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn

from fromscratch.utils import count_parameters, evaluating, time_call


def net() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5), nn.Linear(3, 2))


@pytest.mark.parametrize("training", [True, False])
def test_evaluating_puts_every_submodule_in_eval_mode_and_restores_the_mode(training):
    model = net().train(training)
    with evaluating(model) as inside:
        assert inside is model
        assert not any(m.training for m in model.modules())
    assert all(m.training == training for m in model.modules())


def test_evaluating_restores_the_mode_when_the_block_raises():
    model = net().train()
    with pytest.raises(RuntimeError, match="boom"), evaluating(model):
        raise RuntimeError("boom")
    assert model.training and model[1].training


def test_evaluating_turns_dropout_off():
    model = net().train()
    x = torch.randn(8, 4)
    with evaluating(model), torch.no_grad():
        first, second = model(x), model(x)
    torch.testing.assert_close(first, second)  # no dropout: the same output twice


def test_evaluating_a_plain_function_does_nothing():
    def double(x):
        return 2 * x

    with evaluating(double) as inside:
        assert inside is double and inside(3) == 6


def test_count_parameters():
    model = net()
    assert count_parameters(model) == (4 * 3 + 3) + (3 * 2 + 2)
    model[0].requires_grad_(False)  # frozen: not trained, still there
    assert count_parameters(model) == 3 * 2 + 2
    assert count_parameters(model, trainable_only=False) == 4 * 3 + 3 + 3 * 2 + 2
    assert count_parameters(nn.ReLU()) == 0


def test_time_call_counts_warmup_and_repeats_and_measures_seconds():
    calls = []

    def sleepy():
        calls.append(None)
        time.sleep(0.01 if len(calls) > 1 else 0.2)  # a slow first (warm-up) call is not timed

    fastest = time_call(sleepy, repeats=3)
    assert len(calls) == 4 and 0.009 < fastest < 0.15
    calls.clear()
    assert time_call(sleepy, repeats=2, warmup=0, statistic="median") > 0.009 and len(calls) == 2


def test_time_call_refuses_bad_arguments():
    with pytest.raises(ValueError, match="repeats"):
        time_call(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="warmup"):
        time_call(lambda: None, repeats=1, warmup=-1)
    with pytest.raises(ValueError, match="statistic"):
        time_call(lambda: None, repeats=1, statistic="mean")
    with pytest.raises(ValueError, match="threads"):
        time_call(lambda: None, repeats=1, threads=0)


def test_time_call_runs_on_the_threads_asked_for_and_restores_them():
    before, seen = torch.get_num_threads(), []
    time_call(lambda: seen.append(torch.get_num_threads()), repeats=2, threads=1)
    assert seen == [1, 1, 1] and torch.get_num_threads() == before
