"""Chapter 17.1: policy gradients on a policy whose exact gradient is known.

A softmax over ``K`` answers, ``π = softmax(θ)``, each answer with a known reward ``r``: the expected
reward is ``J = π · r`` and its gradient is exactly ``∇J = π ⊙ (r - J)``. A group of ``n`` answers drawn
from ``π`` gives an estimate ``(1/n) Σ_i A_i ∇ log π(y_i)``, with ``∇ log π(y) = onehot(y) - π`` and an
advantage ``A_i`` per sample: the reward itself (REINFORCE), the reward less a fixed baseline, less
the mean of the other samples (RLOO), less the group's mean (Dr. GRPO), or that divided by the group's
std (GRPO). Drawing many groups measures each estimate's bias and variance against the exact gradient.
Shapes: ``K`` answers, ``n`` samples per group, ``d`` groups drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from fromscratch.training.rl import group_advantages, rloo_advantages

ESTIMATORS = ("REINFORCE", "fixed baseline", "RLOO", "GRPO, no std", "GRPO")
BASELINE = 0.5  # the fixed baseline: half the largest reward


def exact_gradient(logits: Tensor, rewards: Tensor) -> Tensor:
    """``∇_θ (softmax(θ) · r) = π ⊙ (r - π · r)``: logits ``(K,)``, rewards ``(K,)`` -> ``(K,)``."""
    pi = torch.softmax(logits, dim=-1)
    return pi * (rewards - (pi * rewards).sum())


def advantages(name: str, rewards: Tensor) -> Tensor:
    """The advantages of estimator ``name`` (one of :data:`ESTIMATORS`): rewards ``(d, n)`` -> ``(d, n)``."""
    if name == "REINFORCE":
        return rewards
    if name == "fixed baseline":
        return rewards - BASELINE
    if name == "RLOO":
        return rloo_advantages(rewards)
    if name in ("GRPO, no std", "GRPO"):
        return group_advantages(rewards, scale=name == "GRPO")
    raise ValueError(f"estimator {name!r}: choose one of {ESTIMATORS}.")


def sampled_gradients(
    name: str, logits: Tensor, rewards: Tensor, n: int, draws: int, *, seed: int = 0
) -> Tensor:
    """``draws`` estimates of ``∇J``, each from a group of ``n`` answers drawn from ``softmax(logits)``:
    ``(d, K)``, row ``j`` = ``(1/n) Σ_i A_i (onehot(y_i) - π)``."""
    pi = torch.softmax(logits.double(), dim=-1)  # (K,)
    generator = torch.Generator().manual_seed(seed)
    y = torch.multinomial(pi.expand(draws, -1), n, replacement=True, generator=generator)  # (d, n)
    a = advantages(name, rewards.double()[y])  # (d, n)
    onehot = torch.nn.functional.one_hot(y, len(pi)).double()  # (d, n, K)
    return (a[..., None] * (onehot - pi)).mean(1)  # (d, K)


@dataclass(frozen=True)
class BiasVariance:
    """One estimator at one group size, relative to the exact gradient ``g``: ``bias`` = ``|E[ĝ] - g| / |g|``,
    ``variance`` = ``E|ĝ - E[ĝ]|² / |g|²``; ``scale`` = ``(E[ĝ] · g) / |g|²`` (1 for an unbiased estimate)
    and ``cosine`` between ``E[ĝ]`` and ``g``; ``bias_se`` the standard error of the measured mean's gap."""

    name: str
    n: int
    bias: float
    variance: float
    scale: float
    cosine: float
    bias_se: float


def bias_variance(
    name: str, logits: Tensor, rewards: Tensor, n: int, draws: int, *, seed: int = 0
) -> BiasVariance:
    """Measure estimator ``name`` at group size ``n`` from ``draws`` groups."""
    g = exact_gradient(logits.double(), rewards.double())
    samples = sampled_gradients(name, logits, rewards, n, draws, seed=seed)  # (d, K)
    mean = samples.mean(0)
    norm2 = (g * g).sum()
    spread = ((samples - mean) ** 2).sum(1).mean()
    return BiasVariance(
        name=name,
        n=n,
        bias=float((mean - g).norm() / g.norm()),
        variance=float(spread / norm2),
        scale=float((mean * g).sum() / norm2),
        cosine=float(torch.nn.functional.cosine_similarity(mean, g, dim=0)),
        bias_se=float((spread / draws).sqrt() / g.norm()),
    )


def sweep(logits: Tensor, rewards: Tensor, sizes: Sequence[int], draws: int) -> list[BiasVariance]:
    """:func:`bias_variance` of every estimator at every group size (the same groups for each estimator)."""
    return [bias_variance(name, logits, rewards, n, draws, seed=n) for name in ESTIMATORS for n in sizes]


__all__ = [
    "BASELINE",
    "ESTIMATORS",
    "BiasVariance",
    "advantages",
    "bias_variance",
    "exact_gradient",
    "sampled_gradients",
    "sweep",
]
