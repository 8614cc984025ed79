"""Fitting chapter 01's matrix factorisation to MovieLens ratings with the course's one training loop."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from fromscratch.data.movielens import Ratings
from fromscratch.models.recommender import MatrixFactorization, rating_loss
from fromscratch.training import History, TrainConfig, train
from fromscratch.utils import count_parameters


def fit(
    model: MatrixFactorization,
    ratings: Ratings,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    l2: float,
    device: torch.device | str = "cpu",
    evaluate: Callable[[nn.Module], dict] | None = None,
    progress: bool = True,
) -> History:
    """Train ``model`` on ``ratings`` with ``fromscratch.training.train`` (Adam, warm-up and decay).

    Each step takes a shuffled batch of b ratings and minimises ``rating_loss`` with penalty ``l2``;
    the order comes from PyTorch's global generator (seeded by ``fromscratch.setup``).
    ``evaluate(model) -> {"name": value}`` is called after every epoch.
    Returns the training history (loss and learning rate by step, evaluations by epoch).
    """
    if count_parameters(model) == 0:
        raise ValueError(
            "This model has nothing to learn (factors=0, biases=False is the global mean); "
            "evaluate it directly instead of fitting it."
        )
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}.")
    steps_per_epoch = -(-len(ratings) // batch_size)  # ceil
    # warm-up over the first epoch (at most 100 steps); the L2 penalty is in the loss, so no weight
    # decay; float32 throughout (dot products of short vectors gain nothing from mixed precision)
    config = TrainConfig(
        steps=epochs * steps_per_epoch,
        lr=lr,
        warmup_steps=min(100, steps_per_epoch),
        weight_decay=0.0,
        grad_clip=None,
        eval_every=steps_per_epoch,
        amp=False,
        progress=progress,
    )
    return train(
        model,
        ratings.batches(batch_size),
        lambda m, b: rating_loss(m, b, l2=l2),
        config,
        device=device,
        evaluate=evaluate,
    )


__all__ = ["fit"]
