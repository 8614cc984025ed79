"""Checkers for chapter 14's exercises (modern decoders: RMSNorm, SwiGLU, grouped-query heads).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.exercises``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers.

>>> import torch
>>> def my_rms_norm(x, weight, eps=1e-5):
...     return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
>>> check_rms_norm(my_rms_norm)
✓ my_rms_norm matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from fromscratch import exercises
from fromscratch.attention.grouped import expand_kv_heads

__all__ = ["check_expand_kv_heads", "check_rms_norm", "check_swiglu"]


def _rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-5) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight  # (..., e), as F.rms_norm


def check_rms_norm(candidate: Callable[..., Tensor]) -> bool | None:
    """Exercise 14.1. Expects a function ``(x (..., e), weight (e,), eps) -> (..., e)`` returning
    ``x / sqrt(mean(x²) + eps) · weight``, the mean over the last dimension (``F.rms_norm``, PyTorch 2.4+)."""
    generator = torch.Generator().manual_seed(14)
    inputs = [
        (torch.randn(4, 8, generator=generator), torch.ones(8), 1e-5),
        (3 + 2 * torch.randn(2, 5, 16, generator=generator), torch.randn(16, generator=generator), 1e-5),
        (torch.randn(3, 6, generator=generator) * 1e-3, torch.randn(6, generator=generator), 1e-2),
    ]
    return exercises.check_function(candidate, _rms_norm, inputs=inputs, atol=1e-5)


def _swiglu(x: Tensor, w_gate: Tensor, w_up: Tensor, w_down: Tensor) -> Tensor:
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)  # (..., e)


def check_swiglu(candidate: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 14.2. Expects a function ``(x (..., e), w_gate (hidden, e), w_up (hidden, e), w_down
    (e, hidden)) -> (..., e)`` returning ``(silu(x w_gateᵀ) ⊙ x w_upᵀ) w_downᵀ`` (weights stored as
    ``nn.Linear.weight``, no biases)."""
    generator = torch.Generator().manual_seed(15)

    def case(*x_shape: int, hidden: int) -> tuple[Tensor, ...]:
        e = x_shape[-1]
        return (
            torch.randn(*x_shape, generator=generator),
            torch.randn(hidden, e, generator=generator) / e**0.5,
            torch.randn(hidden, e, generator=generator) / e**0.5,
            torch.randn(e, hidden, generator=generator) / hidden**0.5,
        )

    inputs = [case(3, 4, hidden=6), case(2, 5, 12, hidden=32), case(7, 8, hidden=21)]
    return exercises.check_function(candidate, _swiglu, inputs=inputs, atol=1e-5)


def check_expand_kv_heads(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 14.3. Expects a function ``(k (b, hk, t, d), groups) -> (b, hk·groups, t, d)`` that repeats
    each key/value head ``groups`` times *next to itself*, so query head ``j`` finds head ``j // groups``
    (as ``attention.grouped.expand_kv_heads``; ``k.repeat(1, groups, 1, 1)`` would tile them instead)."""
    generator = torch.Generator().manual_seed(16)
    inputs = [
        (torch.randn(1, 2, 3, 4, generator=generator), 2),
        (torch.randn(2, 4, 5, 8, generator=generator), 2),
        (torch.randn(2, 1, 3, 4, generator=generator), 8),
        (torch.randn(1, 3, 2, 2, generator=generator), 1),
    ]
    return exercises.check_function(candidate, expand_kv_heads, inputs=inputs)
