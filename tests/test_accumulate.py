"""Gradient accumulation (chapter 12): k micro-batches make the same update as one k-times-larger batch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fromscratch.models import Generator
from fromscratch.training import TrainConfig, train


def lm_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x).transpose(1, 2), y)


@pytest.mark.parametrize("k", [2, 4])
def test_k_micro_batches_equal_one_big_batch(k):
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, 64, (3 * 8, 17), generator=g)  # three optimiser steps of 8 sequences
    big = [(d[:, :-1], d[:, 1:]) for d in data.split(8)]
    small = [(d[:, :-1], d[:, 1:]) for d in data.split(8 // k)]
    models = []
    for batches, accumulate in ((big, 1), (small, k)):
        torch.manual_seed(0)
        model = Generator(vocab_size=64, emb=32, heads=4, depth=2, context=16)
        train(model, batches, lm_loss, TrainConfig(steps=3, lr=1e-2, accumulate=accumulate, progress=False))
        models.append(model)
    for a, b in zip(*(m.parameters() for m in models), strict=True):
        torch.testing.assert_close(a, b, atol=2e-5, rtol=1e-4)


def test_epochs_count_optimiser_steps_of_accumulated_batches():
    batches = [(torch.randint(0, 64, (2, 8)),) * 2 for _ in range(8)]
    history = train(
        Generator(vocab_size=64, emb=16, heads=2, depth=1, context=8),
        batches,
        lm_loss,
        TrainConfig(epochs=1, accumulate=4, progress=False),
    )
    assert len(history.series("loss")[0]) == 2
