"""Checkers for chapter 02's exercises (basic self-attention).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The test inputs are drawn from a fixed seed with a private generator, so checking an answer never
changes the notebook's random numbers.

>>> import torch
>>> def my_attention(x):
...     return torch.softmax(x @ x.transpose(1, 2), dim=2) @ x
>>> check_basic_attention(my_attention)
✓ my_attention matches the reference on 2 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fromscratch.attention import basic_self_attention
from fromscratch.chapters import checking

__all__ = ["check_basic_attention", "check_the_attends_to_cat", "check_temperature"]


def _batches(*shapes: tuple[int, int, int]) -> list[Tensor]:
    """Random batches ``(b, t, e)`` of the given shapes, the same at every call."""
    generator = torch.Generator().manual_seed(2)
    return [torch.randn(*shape, generator=generator) for shape in shapes]


def check_basic_attention(candidate: Callable[[Tensor], Tensor]) -> bool | None:
    """Exercise 2.1. Expects a function ``x (b, t, e) -> y (b, t, e)`` that computes basic
    self-attention ``softmax(x xᵀ) x`` (with loops or not), as ``attention.basic_self_attention``."""
    inputs = [(x,) for x in _batches((2, 5, 4), (1, 3, 2))]
    return checking.check_function(candidate, basic_self_attention, inputs=inputs)


def check_the_attends_to_cat(
    vector: Any, embedding: Mapping[str, Sequence[float]], tokens: Sequence[str]
) -> bool | None:
    """Exercise 2.2. Expects a new feature vector for *the* (a list of ``e`` numbers) such that,
    in the sentence ``tokens`` embedded by ``embedding`` with only *the* changed, the first *the*
    gives its largest basic self-attention weight to *cat* (a tie does not count)."""
    name = "your vector for 'the'"
    if checking.is_stub(vector):
        return checking.not_attempted(name)
    try:
        the = torch.as_tensor(vector, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        print(f"✗ {name} must be a list of numbers, got {vector!r}.")
        return False
    width = len(embedding["the"])
    if the.shape != (width,):
        print(f"✗ {name} needs {width} numbers, got shape {tuple(the.shape)}.")
        return False
    vectors = {word: torch.tensor(v, dtype=torch.float32) for word, v in embedding.items()}
    vectors["the"] = the
    x = torch.stack([vectors[word] for word in tokens])  # (t, e)
    weights = torch.softmax(x @ x.T, dim=1)  # (t, t)
    row = weights[list(tokens).index("the")]  # (t,): the first *the*'s weights
    best = row.max().item()
    winners = sorted({word for word, w in zip(tokens, row.tolist(), strict=True) if w == best})
    top = winners[0] if len(winners) == 1 else " and ".join(winners) + " (a tie)"
    return checking.check_value(top, "cat", name="the word 'the' attends to most")


def _attention_with_temperature(x: Tensor, tau: float) -> Tensor:
    """``softmax(x xᵀ / tau) x``: x ``(b, t, e)`` -> ``(b, t, e)``."""
    scores = x @ x.transpose(1, 2) / tau  # (b, t, t)
    return torch.softmax(scores, dim=2) @ x  # (b, t, e)


def check_temperature(candidate: Callable[[Tensor, float], Tensor]) -> bool | None:
    """Exercise 2.3. Expects a function ``(x (b, t, e), tau) -> (b, t, e)`` computing
    ``softmax(x xᵀ / tau) x``; checked for tau = 0.5, 1 (basic self-attention) and 10."""
    x1, x2, x3 = _batches((2, 4, 3), (2, 4, 3), (1, 5, 2))
    inputs = [(x1, 0.5), (x2, 1.0), (x3, 10.0)]
    return checking.check_function(candidate, _attention_with_temperature, inputs=inputs)
