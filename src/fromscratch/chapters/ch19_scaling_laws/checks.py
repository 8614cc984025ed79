"""Checkers for chapter 19's exercises (a decoder's FLOPs per token, a power law fitted in log space, the
compute-optimal split of a budget).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what differs)
or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``. An answer
that only calls the package's own function is turned down: the exercise is to write it.

>>> def my_power_law(x, y):
...     slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
...     return float(np.exp(intercept)), float(slope)
>>> check_power_law(my_power_law)
✓ my_power_law matches the reference on 4 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fromscratch.chapters import checking
from fromscratch.metrics.flops import flops_per_token
from fromscratch.metrics.scaling import LossLaw, compute_optimal, power_law_fit
from fromscratch.models.llama import LlamaConfig

__all__ = ["check_compute_optimal", "check_flops", "check_power_law"]


def _flops(config, t: int) -> int:
    return flops_per_token(config, t).total


def check_flops(candidate: Callable[[LlamaConfig, int], int]) -> bool | None:
    """Exercise 19.1. Expects ``(config, t) -> int``: training FLOPs per token of the Llama ``config`` for
    sequences of ``t`` tokens, ``6 ×`` the weights of its linear layers plus ``12 · depth · t · e``."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"flops_per_token", "training_flops"}):
        return False
    configs = [
        LlamaConfig(vocab_size=256, context=64, emb=32, heads=4, kv_heads=4, depth=2, hidden=88),
        LlamaConfig(vocab_size=512, context=128, emb=64, heads=8, kv_heads=2, depth=3, hidden=172),
        LlamaConfig(
            vocab_size=1000, context=32, emb=48, heads=6, kv_heads=3, depth=1, hidden=128, tied=False
        ),
    ]
    inputs = [(configs[0], 64), (configs[1], 128), (configs[1], 16), (configs[2], 32)]
    return checking.check_function(candidate, _flops, inputs=inputs, atol=0.5, rtol=0.0)


def _power_law(x, y) -> tuple[float, float]:
    law = power_law_fit(x, y)
    return law.coefficient, law.exponent


def check_power_law(candidate: Callable) -> bool | None:
    """Exercise 19.2. Expects ``(x, y) -> (k, p)``: the least-squares fit of ``log y = log k + p log x``."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"power_law_fit"}):
        return False
    rng = np.random.default_rng(192)
    x = np.geomspace(1e11, 1.6e12, 5)
    inputs = [
        (x, 3e-2 * x**0.5),
        (x, 0.1 * x**0.45 * np.exp(rng.normal(0, 0.05, 5))),
        (np.array([1.0, 2.0, 4.0]), np.array([8.0, 4.0, 2.0])),
        (np.geomspace(10, 1e4, 7), 5 * np.geomspace(10, 1e4, 7) ** 0.7 * np.exp(rng.normal(0, 0.1, 7))),
    ]
    return checking.check_function(candidate, _power_law, inputs=inputs, atol=0.0, rtol=1e-6)


def check_compute_optimal(candidate: Callable[[LossLaw, float], tuple[float, float]]) -> bool | None:
    """Exercise 19.3. Expects ``(law, C) -> (N, D)``: the ``N`` and ``D = C / (6 N)`` that minimise
    ``law(N, D)`` at the budget ``C``."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"compute_optimal"}):
        return False
    chinchilla = LossLaw(E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28)
    other = LossLaw(E=1.0, A=50.0, B=900.0, alpha=0.5, beta=0.3)
    inputs = [(chinchilla, 5.76e23), (chinchilla, 1e18), (other, 1e12), (other, 3e15)]
    return checking.check_function(candidate, compute_optimal, inputs=inputs, atol=0.0, rtol=1e-6)
