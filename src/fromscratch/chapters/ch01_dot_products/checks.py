"""Checkers for chapter 01's exercises (dot products and matrix factorisation).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from a private generator with a fixed seed, so checking an answer never changes
the notebook's random numbers.

>>> check_dee((0.3, -1.0), {"Titanic": (0.9, 0.3), "Die Hard": (-0.5, 0.9),
...     "Mr. & Mrs. Smith": (0.7, 0.8), "March of the Penguins": (-0.3, -0.9)})
✓ Dee's ranking is right.
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.models.recommender import MatrixFactorization, rmse

__all__ = ["DEE_RANKING", "check_dee", "check_predict_by_hand", "check_rmse", "check_test_rmse"]

DEE_RANKING = ("March of the Penguins", "Titanic", "Mr. & Mrs. Smith", "Die Hard")  # best first


def _cpu_tensor_answers(candidate: Callable) -> Callable:
    """``candidate`` whose answers come back as CPU tensors: a plain number becomes a 0-dim tensor,
    a tensor on the GPU is copied over (stubs and anything else pass through unchanged)."""

    @functools.wraps(candidate)
    def wrapped(*args):
        got = candidate(*args)
        if isinstance(got, (int, float)):
            return torch.tensor(float(got))
        return got.detach().cpu() if isinstance(got, Tensor) else got

    return wrapped


def _one_number(answer: Any, name: str) -> float | None:
    """``answer`` as a float, or None after saying why it is not one number."""
    try:
        if isinstance(answer, Tensor) and answer.numel() != 1:
            raise ValueError(f"a tensor of shape {tuple(answer.shape)}")
        return float(answer)
    except (TypeError, ValueError) as error:
        print(f"✗ {name} must be one number, got {error}.")
        return None


def check_dee(taste: Any, movies: Mapping[str, Sequence[float]]) -> bool | None:
    """Exercise 1.1. Expects Dee's two tastes ``(likes romance, likes action)``, each between -1
    and 1, whose dot products with the chapter's ``movies`` (name -> (romance, action)) rank them
    as ``DEE_RANKING``: March of the Penguins, Titanic, Mr. & Mrs. Smith, Die Hard (no ties)."""
    name = "Dee's ranking"
    if checking.is_stub(taste):
        return checking.not_attempted("Dee's tastes")
    try:
        dee = torch.as_tensor(taste, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        print(f"✗ Dee's tastes must be two numbers, got {taste!r}.")
        return False
    if dee.shape != (2,):
        print(f"✗ Dee's tastes must be two numbers (romance, action), got shape {tuple(dee.shape)}.")
        return False
    if dee.abs().max() > 1:
        print(f"✗ Dee's tastes must lie between -1 and 1, got {dee.tolist()}.")
        return False
    scores = torch.tensor([list(v) for v in movies.values()]) @ dee  # (movies,)
    if len(set(scores.tolist())) < len(scores):
        print("✗ two movies get the same score for Dee: the ranking has a tie.")
        return False
    ranking = [list(movies)[j] for j in scores.argsort(descending=True).tolist()]
    return checking.check_value(ranking, list(DEE_RANKING), name=name)


def check_predict_by_hand(candidate: Callable, model: MatrixFactorization) -> bool | None:
    """Exercise 1.2. Expects a function ``(model, u, i) -> predicted rating`` (a number or a 0-dim
    tensor) computing ``mu + b_u + b_i + p_u . q_i`` from ``model``'s tables, as ``model`` does;
    tried on the first, the last and a few random (user, movie) pairs of ``model``."""
    n_users, n_items = model.user_vectors.num_embeddings, model.item_vectors.num_embeddings
    generator = torch.Generator().manual_seed(1)
    users = [0, n_users - 1, *torch.randint(n_users, (3,), generator=generator).tolist()]
    items = [0, n_items - 1, *torch.randint(n_items, (3,), generator=generator).tolist()]

    def reference(model: MatrixFactorization, u: int, i: int) -> Tensor:
        device = model.global_mean.device
        with torch.no_grad():
            return model(torch.tensor([u], device=device), torch.tensor([i], device=device))[0].cpu()  # ()

    inputs = [(model, u, i) for u, i in zip(users, items, strict=True)]
    return checking.check_function(_cpu_tensor_answers(candidate), reference, inputs=inputs)


def check_rmse(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 1.3. Expects a function ``(predicted (n,), actual (n,)) -> RMSE`` (a number or a
    0-dim tensor), the root of the mean squared difference."""
    generator = torch.Generator().manual_seed(3)
    stars = [1 + 4 * torch.rand(n, generator=generator) for n in (10, 10, 1, 1)]  # (n,) each
    inputs = [(stars[0], stars[1]), (stars[2], stars[3])]

    def reference(predicted: Tensor, actual: Tensor) -> Tensor:
        return (predicted - actual).pow(2).mean().sqrt()  # ()

    return checking.check_function(_cpu_tensor_answers(candidate), reference, inputs=inputs)


def check_test_rmse(answer: Any, model: MatrixFactorization, ratings) -> bool | None:
    """Exercise 1.4. Expects ``model``'s RMSE on ``ratings`` (one number, in stars), as
    ``recommend.rmse(model, ratings)`` computes it."""
    name = "the test RMSE"
    if checking.is_stub(answer):
        return checking.not_attempted(name)
    value = _one_number(answer, name)
    if value is None:
        return False
    return checking.check_value(value, rmse(model, ratings), atol=1e-4, name=name)
