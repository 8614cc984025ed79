"""Checkers for chapter 11's exercises (longer contexts: ALiBi, RoPE, sparse patterns).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers.

>>> import torch
>>> def my_alibi(slopes, t):
...     i = torch.arange(t)
...     return -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()
>>> check_alibi_bias(my_alibi)
✓ my_alibi matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.attention.positions import alibi_bias, alibi_slopes, rotate
from fromscratch.attention.sparse import sparse_mask
from fromscratch.chapters import checking

__all__ = ["check_alibi_bias", "check_rotate", "check_strided_mask"]


def _alibi(slopes: Tensor, t: int) -> Tensor:
    return alibi_bias(slopes, t, t)  # (h, t, t)


def check_alibi_bias(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 11.1. Expects a function ``(slopes (h,), t) -> (h, t, t)`` whose entry ``[n, i, j]`` is
    ``-slopes[n] · |i - j|``, as ``positions.alibi_bias(slopes, t, t)``; checked for 1, 4 and 8 heads."""
    inputs = [(alibi_slopes(1), 3), (alibi_slopes(4), 5), (alibi_slopes(8), 9)]
    return checking.check_function(candidate, _alibi, inputs=inputs)


def _rotate(x: Tensor, positions: Tensor) -> Tensor:
    return rotate(x, positions)  # (t, d)


def check_rotate(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 11.2. Expects a function ``(x (t, d), positions (t,)) -> (t, d)`` that turns each pair
    ``(x[p, 2m], x[p, 2m+1])`` by the angle ``positions[p] · 10000^(-2m/d)``, as ``positions.rotate``."""
    generator = torch.Generator().manual_seed(11)
    inputs = [
        (torch.randn(4, 2, generator=generator), torch.arange(4)),
        (torch.randn(6, 8, generator=generator), torch.arange(6) + 100),
        (torch.randn(3, 16, generator=generator), torch.tensor([5, 0, 2])),
    ]
    return checking.check_function(candidate, _rotate, inputs=inputs, atol=1e-4)


def _strided(t: int, stride: int) -> Tensor:
    return sparse_mask("strided", t, stride)  # (t, t)


def check_strided_mask(candidate: Callable[[int, int], Tensor]) -> bool | None:
    """Exercise 11.3. Expects a function ``(t, stride) -> (t, t)`` boolean mask, True where query ``i``
    may attend to key ``j``: ``j <= i`` and (``i - j < stride`` or ``(i - j) % stride == 0``), as
    ``sparse.sparse_mask("strided", t, stride)``."""
    name = getattr(candidate, "__name__", "your function")
    try:
        got = candidate(6, 2)
    except Exception:  # a stub or a failing answer: check_function below says which, kindly
        got = None
    if isinstance(got, Tensor) and got.dtype != torch.bool:
        print(f"✗ {name} must return a boolean mask (True = may attend), got dtype {got.dtype}.")
        return False
    return checking.check_function(candidate, _strided, inputs=[(6, 2), (9, 3), (16, 4), (5, 1)])
