"""Checkers for chapter 06's exercises (the IMDb classifier: pooling, accuracy, padding).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The test inputs are made up and drawn from fixed seeds with a private generator (no training
result is needed), so checking an answer never changes the notebook's random numbers.

>>> import torch
>>> def my_mean_pool(x, padding_mask):
...     keep = padding_mask[..., None].float()
...     return (x * keep).sum(dim=1) / keep.sum(dim=1)
>>> check_mean_pool(my_mean_pool)
✓ my_mean_pool matches the reference on 2 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from fromscratch.attention.masks import padding_mask
from fromscratch.chapters import checking
from fromscratch.data.batching import pad_batch
from fromscratch.metrics import Predictions, accuracy

__all__ = ["check_accuracy_by_stars", "check_mean_pool", "check_pad_batch"]

RATINGS = (1, 2, 3, 4, 7, 8, 9, 10)  # the stars an IMDb review of the data set can have


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _loop_mean_pool(x: Tensor, mask: Tensor) -> Tensor:
    """The reference: each sequence's mean over its real positions.

    x ``(b, t, e)``, mask ``(b, t)`` -> ``(b, e)``.
    """
    return torch.stack([x[row][mask[row]].mean(dim=0) for row in range(len(x))])


def check_mean_pool(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 6.1. Expects a function ``(x (b, t, e), padding_mask (b, t)) -> (b, e)``: the mean of
    each sequence's vectors over the positions where ``padding_mask`` is True (its real tokens)."""
    gen = _generator(6)
    inputs = [
        (torch.randn(3, 7, 4, generator=gen), padding_mask(torch.tensor([5, 2, 7]), 7)),
        (torch.randn(2, 4, 3, generator=gen), padding_mask(torch.tensor([1, 4]), 4)),
    ]
    return checking.check_function(candidate, _loop_mean_pool, inputs=inputs)


def _made_up_predictions(n: int, seed: int) -> tuple[Predictions, Tensor]:
    """Predictions of a pretend classifier on ``n`` pretend reviews, and their ratings ``(n,)``."""
    gen = _generator(seed)
    ratings = torch.tensor(RATINGS)[torch.randint(len(RATINGS), (n,), generator=gen)]  # (n,)
    labels = (ratings >= 7).long()  # (n,): positive from 7 stars on, as in the data set
    probs = torch.randn(n, 2, generator=gen).softmax(dim=-1)  # (n, 2)
    return Predictions(probs=probs, labels=labels), ratings


def _accuracy_by_stars(predictions: Predictions, ratings: Tensor, stars: Sequence[int]) -> float:
    """The reference: accuracy on the examples whose rating is one of ``stars``."""
    chosen = torch.isin(ratings, torch.tensor(list(stars)))  # (n,)
    return accuracy(predictions.probs[chosen], predictions.labels[chosen])


def check_accuracy_by_stars(candidate: Callable[[Predictions, Tensor, Sequence[int]], float]) -> bool | None:
    """Exercise 6.2. Expects a function ``(predictions, ratings (n,), stars) -> float``: the accuracy
    of ``predictions`` (a ``metrics.Predictions``) on only the examples whose rating is one of
    ``stars`` (a tuple such as ``(1, 10)``), checked on made-up predictions."""
    first, second = _made_up_predictions(60, seed=7), _made_up_predictions(25, seed=8)
    inputs = [(*first, (1, 10)), (*first, (4, 7)), (*second, (2,))]
    return checking.check_function(candidate, _accuracy_by_stars, inputs=inputs, atol=1e-6)


def check_pad_batch(candidate: Callable[[list[Tensor]], tuple[Tensor, Tensor]]) -> bool | None:
    """Exercise 6.3. Expects a function ``seqs -> (tokens (b, t), padding_mask (b, t))`` for a list of
    1-D token tensors: padded with id 0 to the longest, the mask True at real tokens, as
    ``data.batching.pad_batch``."""
    seqs = [torch.tensor([5, 6, 7]), torch.tensor([8]), torch.tensor([9, 10])]
    inputs = [(seqs,), (seqs[:1],), ([torch.tensor([3]), torch.tensor([4, 4, 4, 4])],)]
    return checking.check_function(candidate, pad_batch, inputs=inputs)
