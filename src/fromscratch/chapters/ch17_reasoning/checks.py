"""Checkers for chapter 17's exercises (the pass@k estimator, RLOO's advantages, the clipped loss's
gradient at the clip).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what differs)
or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``. An answer
that only calls the package's own function is turned down: the exercise is to write it.

>>> import math
>>> def my_pass_at_k(n, c, k):
...     return 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)
>>> check_pass_at_k(my_pass_at_k)
✓ my_pass_at_k matches the reference on 9 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.training.rl import clipped_policy_loss, pass_at_k, rloo_advantages

__all__ = ["check_clip_gradient", "check_pass_at_k", "check_rloo", "clip_gradient"]


def check_pass_at_k(candidate: Callable[[int, int, int], float]) -> bool | None:
    """Exercise 17.1. Expects ``(n, c, k) -> float``: the unbiased pass@k of ``n`` samples of which ``c``
    are right, ``1 - C(n - c, k) / C(n, k)``, and 1 when ``n - c < k``."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"pass_at_k"}):
        return False
    cases = [
        (16, 0, 1),
        (16, 1, 1),
        (16, 3, 4),
        (16, 8, 8),
        (16, 12, 8),
        (10, 10, 1),
        (200, 7, 100),
        (8, 1, 8),
        (5, 2, 3),
    ]
    return checking.check_function(candidate, pass_at_k, inputs=cases, atol=1e-9, rtol=1e-9)


def check_rloo(candidate: Callable[[Tensor], Tensor]) -> bool | None:
    """Exercise 17.2. Expects ``rewards (g, n) -> (g, n)``: each reward minus the mean of the other
    ``n - 1`` rewards of its row."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"rloo_advantages"}):
        return False
    generator = torch.Generator().manual_seed(172)
    inputs = [
        ((torch.rand(3, 8, generator=generator) < 0.4).float(),),
        (torch.randn(2, 5, generator=generator),),
        (torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]]),),
        (torch.rand(4, 2, generator=generator),),
    ]
    return checking.check_function(candidate, rloo_advantages, inputs=inputs, atol=1e-6)


def clip_gradient(ratio: Tensor, advantage: Tensor, clip: float = 0.2) -> Tensor:
    """The reference: ``d loss / d log π`` of each token's clipped loss ``-min(ρA, clip(ρ, 1-ε, 1+ε)A)``,
    by autograd through :func:`~fromscratch.training.rl.clipped_policy_loss` (``m`` samples of one token
    each); ``(m,)`` in, ``(m,)`` out."""
    m = len(ratio)
    logprobs = ratio.double().log().view(1, m, 1).requires_grad_(True)  # (g, n, t) = (1, m, 1)
    old = torch.zeros(1, m, 1, dtype=torch.float64)  # log π_old = 0: the ratio is exp(logprobs)
    mask = torch.ones(1, m, 1, dtype=torch.bool)
    losses = clipped_policy_loss(
        logprobs, old, advantage.double().view(1, m), mask, clip=clip, aggregate="none"
    )
    (gradient,) = torch.autograd.grad(losses.sum(), logprobs)
    return gradient.view(m).to(ratio.dtype)


def check_clip_gradient(candidate: Callable[[Tensor, Tensor, float], Tensor]) -> bool | None:
    """Exercise 17.3. Expects ``(ratio (m,), advantage (m,), clip) -> (m,)``: the derivative of each
    token's loss ``-min(ρA, clip(ρ, 1-ε, 1+ε) A)`` with respect to its log-probability ``log π``
    (``ρ = π / π_old``, so ``dρ / d log π = ρ``)."""
    if not checking.is_stub(candidate) and checking.refuses(
        candidate, {"clipped_policy_loss", "clip_gradient"}
    ):
        return False
    ratios = torch.tensor([0.5, 0.7, 0.9, 1.0, 1.1, 1.3, 1.6], dtype=torch.float64)
    inputs = [
        (ratios, torch.ones(7, dtype=torch.float64), 0.2),
        (ratios, -torch.ones(7, dtype=torch.float64), 0.2),
        (ratios, torch.tensor([2.0, -0.5, 1.5, -1.0, 0.3, -2.0, 1.0], dtype=torch.float64), 0.2),
        (ratios, torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0], dtype=torch.float64), 0.45),
    ]
    return checking.check_function(candidate, clip_gradient, inputs=inputs, atol=1e-9)
