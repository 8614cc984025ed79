"""Checkers for chapter 09's exercises (encoder-decoders and translation).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes the
notebook's random numbers.

>>> import torch
>>> def my_teacher_forcing(target):
...     target = torch.as_tensor(target)
...     return torch.cat([torch.tensor([3]), target]), torch.cat([target, torch.tensor([4])])
>>> check_teacher_forcing(my_teacher_forcing)
✓ my_teacher_forcing matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.tokenizers.special import BOS, EOS

__all__ = ["check_bahdanau_attention", "check_cross_attention", "check_teacher_forcing"]


def _cross_attention(x: Tensor, context: Tensor, wq: Tensor, wk: Tensor, wv: Tensor) -> Tensor:
    """One head of cross-attention: queries from ``x (tq, e)``, keys and values from ``context (tk, e)``."""
    q, k, v = x @ wq, context @ wk, context @ wv  # (tq, d), (tk, d), (tk, d)
    weights = torch.softmax(q @ k.T / math.sqrt(q.size(-1)), dim=-1)  # (tq, tk)
    return weights @ v  # (tq, d)


def check_cross_attention(candidate: Callable[..., Tensor]) -> bool | None:
    """Exercise 9.1. Expects ``(x (tq, e), context (tk, e), wq, wk, wv (e, d)) -> (tq, d)``: queries
    ``x @ wq``, keys ``context @ wk`` and values ``context @ wv``, weights ``softmax(q kᵀ / sqrt(d))``
    over the context's positions. Checked with ``tq != tk`` (3 and 5, 1 and 4, 6 and 2)."""
    generator = torch.Generator().manual_seed(9)

    def case(tq: int, tk: int, e: int, d: int):
        return (
            torch.randn(tq, e, generator=generator),
            torch.randn(tk, e, generator=generator),
            *(torch.randn(e, d, generator=generator) for _ in range(3)),
        )

    inputs = [case(3, 5, 4, 4), case(1, 4, 6, 2), case(6, 2, 3, 5)]
    return checking.check_function(candidate, _cross_attention, inputs=inputs)


def _teacher_forcing(target) -> tuple[Tensor, Tensor]:
    target = torch.as_tensor(target, dtype=torch.long)
    return torch.cat([torch.tensor([BOS]), target]), torch.cat([target, torch.tensor([EOS])])


def check_teacher_forcing(candidate: Callable) -> bool | None:
    """Exercise 9.2. Expects ``target ids (t,) -> (decoder input (t + 1,), labels (t + 1,))``: the input
    is ``<s>`` (id 3, ``tokenizers.special.BOS``) followed by the target, the labels are the target followed
    by ``</s>`` (id 4, ``EOS``)."""
    inputs = [(torch.tensor([17, 4, 99]),), (torch.tensor([5]),), (torch.tensor([8, 8, 8, 8, 40]),)]
    return checking.check_function(candidate, _teacher_forcing, inputs=inputs)


def _bahdanau(state: Tensor, states: Tensor, W: Tensor, U: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    scores = torch.tanh(state @ W.T + states @ U.T) @ v  # (ts,): e_j = vᵀ tanh(W s + U h_j)
    alpha = torch.softmax(scores, dim=0)  # (ts,)
    return alpha @ states, alpha  # (2H,), (ts,)


def check_bahdanau_attention(candidate: Callable) -> bool | None:
    """Exercise 9.3. Expects ``(s (H,), h (ts, D), W (A, H), U (A, D), v (A,)) -> (context (D,), α (ts,))``
    with ``e_j = vᵀ tanh(W s + U h_j)``, ``α = softmax(e)`` and ``context = Σ_j α_j h_j``."""
    generator = torch.Generator().manual_seed(9)

    def case(ts: int, H: int, D: int, A: int):
        shapes = [(H,), (ts, D), (A, H), (A, D), (A,)]  # s, h, W, U, v
        return tuple(torch.randn(*shape, generator=generator) for shape in shapes)

    inputs = [case(5, 4, 6, 3), case(1, 2, 2, 2), case(7, 3, 4, 5)]
    return checking.check_function(candidate, _bahdanau, inputs=inputs)
