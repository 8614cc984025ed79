"""The pieces of chapter 19's sweep that the notebook's loop calls: the model of a width, the sizes a budget
trains, a budget turned into steps, and the IsoFLOP minimum of one budget's runs.

The notebook writes the loop itself (every budget, every size, each a ``train`` call that returns at once
from its checkpoint when it already ran); these are the decisions inside it, tested in
``tests/test_ch19_scaling_laws.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from fromscratch.chapters.ch19_scaling_laws.profile import ScalingRun
from fromscratch.metrics.flops import flops_per_token, parameter_count
from fromscratch.metrics.scaling import IsoflopMinimum, isoflop_minimum
from fromscratch.models.llama import LlamaConfig, swiglu_hidden
from fromscratch.training import TrainConfig

HEAD = 8  # every head's width s: a model of width e has e / 8 heads
TOKENS_PER_PARAMETER = 20  # the first guess of where a budget's optimum lies (Hoffmann et al.'s D ≈ 20 N)
SCHEDULE = "cosine10"  # warm-up, then half a cosine down to 10 % of the peak (training.schedule)


def model_config(width: int, size: ScalingRun) -> LlamaConfig:
    """The byte-level Llama of width ``e = width`` (``e / 8`` heads, no grouping of keys and values, SwiGLU
    of width ``8e/3``) with the profile's depth and context."""
    if width < HEAD or width % HEAD:
        raise ValueError(f"width={width}: give a positive multiple of {HEAD} (each head is {HEAD} wide).")
    heads = width // HEAD
    return LlamaConfig(
        vocab_size=256,
        context=size.context,
        emb=width,
        heads=heads,
        kv_heads=heads,
        depth=size.depth,
        hidden=swiglu_hidden(width),
        rope_theta=10_000.0,
    )


@cache  # a model built on the meta device per call: width_for asks for hundreds
def parameters(width: int, size: ScalingRun) -> int:
    """Every parameter of the model of ``width`` (Chinchilla's ``N``; the tied embedding counted once)."""
    return parameter_count(model_config(width, size)).total


def first_guess(budget: float) -> float:
    """The ``N`` with ``C = 6 N D`` and ``D = 20 N``: ``sqrt(C / 120)``, only to centre a budget's sizes."""
    return math.sqrt(budget / (6 * TOKENS_PER_PARAMETER))


def widths_for(budget: float, size: ScalingRun) -> tuple[int, ...]:
    """The ``size.per_budget`` widths whose ``N`` lies nearest (in ``log N``) the first guess of the budget's
    optimum, in increasing order: each IsoFLOP curve spans the sizes around its own minimum."""
    guess = math.log(first_guess(budget))
    nearest = sorted(size.widths, key=lambda w: abs(math.log(parameters(w, size)) - guess))
    return tuple(sorted(nearest[: size.per_budget]))


def width_for(n: float, size: ScalingRun, *, largest: int = 2_048) -> int:
    """The width (a multiple of 8) whose model has the ``N`` nearest ``n`` (in ``log N``): the size a
    predicted optimum asks for."""
    widths = range(HEAD, largest + 1, HEAD)
    return min(widths, key=lambda w: abs(math.log(parameters(w, size)) - math.log(n)))


def train_config(config: LlamaConfig, budget: float, size: ScalingRun, lr: float) -> TrainConfig:
    """The run that spends ``budget`` FLOPs on ``config``: ``C / (FLOPs per token × tokens per step)``
    steps, a warm-up of ``size.warmup`` of them, then the cosine to 10 % (no checkpoint yet)."""
    tokens_per_step = size.batch_size * size.context
    steps = max(2, round(budget / (flops_per_token(config).total * tokens_per_step)))
    return TrainConfig(
        steps=steps,
        lr=lr,
        warmup_steps=max(1, round(size.warmup * steps)),
        schedule=SCHEDULE,
        progress=False,
    )


@dataclass(frozen=True)
class Run:
    """One finished run of the sweep."""

    width: int
    budget: float  # the nominal budget C it was sized for
    N: int  # every parameter
    N_non_embedding: int  # Kaplan's N
    D: int  # tokens (bytes) trained on: steps x batch x context
    flops: float  # its training FLOPs, 19.1's count (the nominal budget, up to the rounding of steps)
    loss: float  # held-out bits per byte


@dataclass(frozen=True)
class Prediction:
    """What the fits say about a run before it trains (19.4)."""

    budget: float  # its compute C
    ratio: float  # C over the sweep's largest budget
    n_opt: float  # the optimal N the IsoFLOP minima's power law gives at C
    width: int  # the width of the model nearest n_opt
    N: int  # that model's parameters
    D: int  # the tokens C buys it
    value: float  # the loss law's prediction at (N, D)
    low: float  # ... its bootstrap interval
    high: float
    line: float  # the minima's losses, a power law in C, carried to C


def minimum(runs: Sequence[Run], n: str = "N") -> IsoflopMinimum:
    """The IsoFLOP minimum of one budget's runs in ``log N`` (``n``: ``"N"`` or ``"N_non_embedding"``).
    Where the parabola's minimum lies outside the sizes measured, or the losses do not curve upwards at
    all, the best run measured stands in, marked not bracketed: a bound (the optimum is at least that far
    out), never a vertex extrapolated from a nearly straight line."""
    sizes, losses = [getattr(r, n) for r in runs], [r.loss for r in runs]
    try:
        with np.errstate(over="ignore"):  # a nearly straight line puts its vertex far out: discarded below
            found = isoflop_minimum(sizes, losses)
    except ValueError:
        found = None
    if found is not None and found.bracketed:
        return found
    best = min(range(len(runs)), key=lambda i: losses[i])
    return IsoflopMinimum(size=float(sizes[best]), loss=float(losses[best]), bracketed=False)


__all__ = [
    "HEAD",
    "Prediction",
    "Run",
    "SCHEDULE",
    "first_guess",
    "minimum",
    "model_config",
    "parameters",
    "train_config",
    "width_for",
    "widths_for",
]
