"""``training.time_step``: the one way to time a training step (no timed assertions: a shared machine)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from fromscratch.training import time_step
from fromscratch.training.losses import next_token_loss
from fromscratch.training.precision import PrecisionWarning


class Tiny(nn.Module):
    """A language model small enough to step in milliseconds; counts its forward passes."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.out = nn.Embedding(11, 8), nn.Linear(8, 11)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.out(self.embed(x))


def tokens():
    return torch.randint(0, 11, (4, 9), generator=torch.Generator().manual_seed(0))


def test_it_runs_the_step_and_returns_positive_seconds():
    torch.manual_seed(0)
    model = Tiny()
    before = model.out.weight.detach().clone()
    seconds = time_step(model, tokens(), next_token_loss, repeats=2, warmup=1)
    assert seconds > 0 and model.calls == 3  # one warm-up and two timed steps
    assert not torch.equal(model.out.weight, before)  # the AdamW update ran
    assert model.out.weight.grad is not None


def test_gradients_alone_leave_the_weights():
    model = Tiny()
    before = model.out.weight.detach().clone()
    assert time_step(model, tokens(), next_token_loss, update=False, repeats=1) > 0
    assert torch.equal(model.out.weight, before) and model.out.weight.grad is not None


def test_accumulation_runs_a_backward_pass_per_micro_batch():
    model = Tiny()
    time_step(model, tokens(), next_token_loss, accumulate=3, repeats=1, warmup=0, grad_clip=1.0)
    assert model.calls == 3


@pytest.mark.parametrize("training", [True, False])
def test_it_leaves_the_model_in_its_mode(training):
    model = Tiny().train(training)
    time_step(model, tokens(), next_token_loss, repeats=1, warmup=0)
    assert model.training is training


def test_it_trains_in_train_mode():
    model = Tiny().eval()
    modes = []
    model.register_forward_hook(lambda module, args, out: modes.append(module.training))
    time_step(model, tokens(), next_token_loss, repeats=1, warmup=0)
    assert modes == [True]


@pytest.mark.parametrize("precision", ["fp32", "auto", "best", "bf16", "fp16"])
def test_every_precision_runs_on_the_cpu(precision):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)  # bf16 and fp16 are emulated on most CPUs
        seconds = time_step(Tiny(), tokens(), next_token_loss, precision=precision, repeats=1)
    assert seconds > 0


def test_only_trainable_weights_are_updated():
    model = Tiny()
    model.embed.weight.requires_grad_(False)
    frozen = model.embed.weight.detach().clone()
    time_step(model, tokens(), next_token_loss, repeats=1, warmup=0)
    assert torch.equal(model.embed.weight, frozen)


def test_bad_arguments_say_what_to_do():
    frozen = Tiny().requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        time_step(frozen, tokens(), next_token_loss)
    with pytest.raises(ValueError, match="accumulate"):
        time_step(Tiny(), tokens(), next_token_loss, accumulate=0)
    with pytest.raises(ValueError, match="precision"):
        time_step(Tiny(), tokens(), next_token_loss, precision="fp8")
