"""Checkers for chapter 03's exercises (queries, keys, values, scaling and masks).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The expected values are computed here, from the lecture slides' example and the package's
``scaled_dot_product_attention``, ``padding_mask`` and ``causal_mask``. Random test inputs come
from a private generator, so checking an answer never changes the notebook's random numbers.

>>> import math, torch
>>> def my_attention(q, k, v):
...     weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
...     return weights @ v, weights
>>> check_attention(my_attention)
✓ my_attention matches the reference on 3 test inputs.
True
>>> check_doubled_width(2.0)
✗ the factor is not right yet: expected 1.4142, got 2.0.
False
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from fromscratch.attention import causal_mask, padding_mask, scaled_dot_product_attention
from fromscratch.chapters import checking

__all__ = ["check_attention", "check_doubled_width", "check_katze_without_danced", "check_padded_causal_mask"]

# The slides' example: the queries "die", "Katze"; the keys (and values) "the", "cat", "danced".
SLIDES_QUERIES = ((-1.0, -2.5), (4.0, 3.0))
SLIDES_KEYS = ((-2.0, -4.0), (-2.5, -0.5), (4.5, 2.5))


def _slides() -> tuple[Tensor, Tensor, Tensor]:
    """The slides' ``Q (tq, d) = (2, 2)``, ``K (tk, d) = (3, 2)`` and ``V = K``."""
    keys = torch.tensor(SLIDES_KEYS)
    return torch.tensor(SLIDES_QUERIES), keys, keys.clone()


def _as_tensor(answer: Any, name: str) -> Tensor | None:
    """``answer`` as a float tensor, or None (after saying why) when it is not a list of numbers."""
    try:
        return torch.as_tensor(answer, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        print(f"✗ {name} must be a tensor or a list of numbers, got {answer!r}.")
        return None


def check_attention(candidate: Callable[[Tensor, Tensor, Tensor], Any]) -> bool | None:
    """Exercise 3.1. Expects ``my_attention(q, k, v) -> (out, weights)`` without a mask: q
    ``(..., tq, d)``, k ``(..., tk, d)``, v ``(..., tk, dv)`` -> out ``(..., tq, dv)``, weights
    ``(..., tq, tk)``, as ``attention.scaled_dot_product_attention``. Checked on the slides'
    example, on a batch with ``tq != tk`` and on a ``(b, h, ...)`` input."""
    generator = torch.Generator().manual_seed(3)

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator)

    inputs = [
        _slides(),
        (randn(2, 4, 8), randn(2, 6, 8), randn(2, 6, 3)),
        (randn(2, 3, 5, 4), randn(2, 3, 7, 4), randn(2, 3, 7, 4)),
    ]
    return checking.check_function(candidate, scaled_dot_product_attention, inputs=inputs)


def check_doubled_width(answer: Any) -> bool | None:
    """Exercise 3.2. Expects the factor (a number) by which the slides' *scaled* scores change when
    every query and key is repeated to twice its width and scaled by ``1/sqrt`` of the new width."""
    q, k, _ = _slides()
    scaled = q @ k.T / math.sqrt(q.shape[1])  # (tq, tk)
    q2, k2 = torch.cat([q, q], dim=1), torch.cat([k, k], dim=1)  # (tq, 2d), (tk, 2d)
    scaled2 = q2 @ k2.T / math.sqrt(q2.shape[1])  # (tq, tk)
    factor = round((scaled2 / scaled).mean().item(), 4)  # the same in every entry
    return checking.check_value(answer, factor, atol=1e-3, name="the factor")


def check_katze_without_danced(answer: Any) -> bool | None:
    """Exercise 3.3. Expects *Katze*'s output vector (two numbers) in the slides' example when a mask
    hides *danced* from *Katze* (and *die* may see every key)."""
    name = "Katze's output"
    if checking.is_stub(answer):
        return checking.not_attempted(name)
    got = _as_tensor(answer, name)
    if got is None:
        return False
    q, k, v = _slides()
    mask = torch.tensor([[True, True, True], [True, True, False]])  # (tq, tk): Katze may not see danced
    out, _ = scaled_dot_product_attention(q, k, v, mask)  # (tq, d)
    return checking.check_value(got, out[1], atol=5e-3, name=name)  # two decimals are enough


def _padded_causal_mask(lengths: Tensor, t: int) -> Tensor:
    """Query ``i`` may see key ``j`` if ``j <= i`` and ``j`` is a real token: bool ``(b, t, t)``."""
    return padding_mask(lengths, t)[:, None, :] & causal_mask(t)  # (b, t, t)


def check_padded_causal_mask(candidate: Callable[[Tensor, int], Any]) -> bool | None:
    """Exercise 3.4. Expects ``my_padded_causal_mask(lengths, t)``: lengths int ``(b,)`` -> a bool
    ``(b, t, t)`` mask, True where query ``i`` may see key ``j``: ``j <= i`` and ``j < lengths[n]``."""
    inputs = [(torch.tensor([4, 2, 0]), 4), (torch.tensor([3]), 5), (torch.tensor([1, 6]), 6)]
    return checking.check_function(candidate, _padded_causal_mask, inputs=inputs)
