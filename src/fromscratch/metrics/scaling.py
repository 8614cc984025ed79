"""Scaling laws fitted to a sweep of runs, as Hoffmann et al. (2022, Chinchilla) fit theirs (chapter 19).

* **Approach 2**, IsoFLOP curves: at each compute budget ``C``, the losses of several model sizes ``N``
  lie on a curve in ``log N``; :func:`isoflop_minimum` fits a parabola and takes its minimum, the optimal
  size of that budget. :func:`power_law_fit` then fits ``N_opt(C) = k · C^a`` (and ``D_opt(C)``) by least
  squares in log space.
* **Approach 3**, the parametric law ``L(N, D) = E + A / N^α + B / D^β`` (:class:`LossLaw`), fitted by
  :func:`fit_loss_law` as the paper does: a Huber loss (``δ = 10⁻³``) between ``log L`` and the model's
  ``log L = LSE(a - α log N, b - β log D, e)`` (``A = eᵃ, B = eᵇ, E = eᵉ``; the log-sum-exp keeps every
  term positive and the arithmetic stable), minimised by BFGS (:data:`METHOD` says why not L-BFGS) from
  every point of a grid of starts, the best kept. :func:`bootstrap_loss_law` refits resampled runs for
  intervals, and :func:`compute_optimal` gives the law's optimal ``N`` and ``D`` for a budget
  ``C = 6 N D`` in closed form.

``N`` and ``D`` are plain numbers here: which parameters ``N`` counts (with the embeddings or without,
:mod:`fromscratch.metrics.flops`) is the caller's choice, and changes the exponents at small ``N``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from scipy.optimize import minimize
from scipy.special import huber

# Starts of fit_loss_law: every combination, 3 · 3 · 3 · 2 · 2 = 108 (Hoffmann et al. take 4,500: e from -1
# to 1 and the exponents from 0 to 2 in steps of 0.5, a and b from 0 to 25 in steps of 5).
GRID = {
    "e": (-1.0, 0.0, 1.0),  # log E
    "a": (0.0, 5.0, 10.0),  # log A
    "b": (0.0, 5.0, 10.0),  # log B
    "alpha": (0.25, 0.75),
    "beta": (0.25, 0.75),
}
# The minimiser. With five parameters BFGS keeps the whole 5 x 5 inverse Hessian that L-BFGS (Hoffmann et
# al.'s) approximates from its last steps: the same minimum. scipy's "L-BFGS-B" calls the threaded BLAS at
# every step, which on a busy two-core machine made the fit five times slower; pass it to compare.
METHOD = "BFGS"


def _positive(name: str, values) -> np.ndarray:
    """``values`` as a 1-d float array, checked to be finite and positive (everything here is logged)."""
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array) & (array > 0)):
        raise ValueError(f"{name} must be finite and positive (they are fitted in log space); got {array}.")
    return array


def _interval(samples: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``samples``."""
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


# --- approach 2: IsoFLOP minima and power laws -----------------------------------------------------------


@dataclass(frozen=True)
class PowerLaw:
    """``y = coefficient · x^exponent``, with bootstrap intervals when asked for."""

    coefficient: float
    exponent: float
    coefficient_interval: tuple[float, float] | None = None  # over resampled points, at ``level``
    exponent_interval: tuple[float, float] | None = None
    level: float | None = None  # e.g. 0.95

    def __call__(self, x):
        return self.coefficient * np.asarray(x, dtype=float) ** self.exponent


def _line(log_x: np.ndarray, log_y: np.ndarray) -> tuple[float, float]:
    """(coefficient, exponent) of the least-squares line through the logged points."""
    exponent, intercept = np.polyfit(log_x, log_y, 1)
    return float(np.exp(intercept)), float(exponent)


def power_law_fit(x, y, *, bootstrap: int = 0, level: float = 0.95, seed: int = 0) -> PowerLaw:
    """Fit ``y = k · x^p`` by least squares on ``(log x, log y)`` (e.g. ``N_opt(C)``, Chinchilla's
    approach 2). ``bootstrap``: that many refits on points drawn with replacement give percentile
    intervals at ``level`` (with 4-5 budgets a coarse guide: each draw keeps only a few distinct points)."""
    log_x, log_y = np.log(_positive("x", x)), np.log(_positive("y", y))
    if len(log_x) != len(log_y) or len(np.unique(log_x)) < 2:
        raise ValueError("a power law needs as many x as y and at least two distinct x; add budgets.")
    coefficient, exponent = _line(log_x, log_y)
    if not bootstrap:
        return PowerLaw(coefficient, exponent)
    rng, fits = np.random.default_rng(seed), []
    while len(fits) < bootstrap:
        pick = rng.integers(0, len(log_x), len(log_x))
        if len(np.unique(log_x[pick])) >= 2:  # a draw of one repeated point has no slope
            fits.append(_line(log_x[pick], log_y[pick]))
    k, p = np.array(fits).T
    return PowerLaw(coefficient, exponent, _interval(k, level), _interval(p, level), level)


@dataclass(frozen=True)
class IsoflopMinimum:
    """The minimum of one IsoFLOP curve: the budget's optimal size and the loss the parabola gives there."""

    size: float
    loss: float
    bracketed: bool  # whether the minimum lies between the smallest and largest size measured


def isoflop_minimum(sizes, losses) -> IsoflopMinimum:
    """The minimum of ``loss = c₂ (log N)² + c₁ log N + c₀`` fitted by least squares to the runs of one
    budget: ``log N_opt = -c₁ / (2 c₂)``. ``bracketed`` is False when that lies outside the sizes measured
    (an extrapolation: the sweep should reach further on that side)."""
    log_n, loss = np.log(_positive("sizes", sizes)), np.asarray(losses, dtype=float).ravel()
    if len(log_n) != len(loss) or len(np.unique(log_n)) < 3:
        raise ValueError("a parabola needs as many losses as sizes and at least three distinct sizes.")
    c2, c1, c0 = np.polyfit(log_n, loss, 2)
    if c2 <= 0:
        raise ValueError(
            "the losses of this budget do not curve upwards in log N (no minimum): add sizes on both "
            "sides of the best one, or check the runs (too short a schedule, a diverged run)."
        )
    best = -c1 / (2 * c2)
    return IsoflopMinimum(
        size=float(np.exp(best)),
        loss=float(c0 - c1**2 / (4 * c2)),
        bracketed=bool(log_n.min() <= best <= log_n.max()),
    )


# --- approach 3: the parametric loss law ---------------------------------------------------------------


@dataclass(frozen=True)
class LossLaw:
    """``L(N, D) = E + A / N^α + B / D^β`` (Hoffmann et al. 2022, eq. 2): ``E`` the loss of a perfect model
    (the entropy of text), the other terms what a finite model and finite data add."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def __call__(self, N, D):
        N, D = np.asarray(N, dtype=float), np.asarray(D, dtype=float)
        return self.E + self.A / N**self.alpha + self.B / D**self.beta


def _huber_objective(theta: np.ndarray, log_n, log_d, log_l, delta: float) -> tuple[float, np.ndarray]:
    """Σ Huber_δ(model − log L) / δ and its gradient in ``theta = (e, a, b, α, β)``."""
    e, a, b, alpha, beta = theta
    terms = np.stack([a - alpha * log_n, b - beta * log_d, np.full_like(log_n, e)])  # (3, runs)
    top = terms.max(axis=0)  # (runs,): the log-sum-exp, written out to give its softmax on the way
    exps = np.exp(terms - top)  # (3, runs), each <= 1: no overflow
    total = exps.sum(axis=0)  # (runs,)
    residual = top + np.log(total) - log_l  # (runs,): LSE(terms) - log L
    weights = exps / total  # (3, runs): d LSE / d term, the softmax of the terms
    slope = np.clip(residual, -delta, delta) / delta  # d Huber / d residual, over δ
    gradient = [
        weights[2] @ slope,  # e
        weights[0] @ slope,  # a
        weights[1] @ slope,  # b
        -(weights[0] * log_n) @ slope,  # α
        -(weights[1] * log_d) @ slope,  # β
    ]
    return float(huber(delta, residual).sum() / delta), np.array(gradient)


def _fit_from(starts, log_n, log_d, log_l, delta: float, method: str) -> LossLaw:
    """The best minimum of the Huber objective over ``starts`` (each ``(e, a, b, α, β)``)."""
    best = None
    for start in starts:
        result = minimize(
            _huber_objective,
            np.asarray(start, dtype=float),
            args=(log_n, log_d, log_l, delta),
            jac=True,
            method=method,
        )
        if np.isfinite(result.fun) and (best is None or result.fun < best.fun):
            best = result
    e, a, b, alpha, beta = best.x
    return LossLaw(float(np.exp(e)), float(np.exp(a)), float(np.exp(b)), float(alpha), float(beta))


def _runs(N, D, L) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    log_n, log_d, log_l = (np.log(_positive(name, v)) for name, v in (("N", N), ("D", D), ("L", L)))
    if not len(log_n) == len(log_d) == len(log_l) or len(log_n) < 5:
        raise ValueError("fit_loss_law needs N, D and L of equal length, at least 5 runs (5 parameters).")
    return log_n, log_d, log_l


def fit_loss_law(
    N,
    D,
    L,
    *,
    grid: Mapping[str, Sequence[float]] = GRID,
    delta: float = 1e-3,
    method: str = METHOD,
) -> LossLaw:
    """Fit :class:`LossLaw` to runs of ``N`` parameters trained on ``D`` tokens reaching loss ``L``
    (Chinchilla's approach 3; the module docstring says how). ``grid``: the starts, every combination of
    the values of ``e = log E, a = log A, b = log B, alpha, beta`` (:data:`GRID` by default); ``delta``:
    the Huber loss's δ; ``method``: scipy's minimiser (:data:`METHOD`, or Hoffmann et al.'s "L-BFGS-B")."""
    missing = {"e", "a", "b", "alpha", "beta"} - set(grid)
    if missing:
        raise ValueError(f"grid needs values for {sorted(missing)} (see scaling.GRID).")
    starts = itertools.product(*(grid[k] for k in ("e", "a", "b", "alpha", "beta")))
    return _fit_from(starts, *_runs(N, D, L), delta, method)


@dataclass(frozen=True)
class LawBootstrap:
    """The fit to every run and the fits to ``len(draws)`` resamplings of them."""

    law: LossLaw
    draws: tuple[LossLaw, ...]
    level: float  # e.g. 0.95

    def interval(self, what: str | Callable[[LossLaw], float]) -> tuple[float, float]:
        """The percentile interval at ``level`` of a parameter (``"alpha"``) or of any number a law gives,
        e.g. a predicted loss: ``boot.interval(lambda law: law(N, D))``."""
        value = (lambda law: getattr(law, what)) if isinstance(what, str) else what
        return _interval(np.array([value(law) for law in self.draws]), self.level)

    def intervals(self) -> dict[str, tuple[float, float]]:
        """Every parameter's interval, by name."""
        return {f.name: self.interval(f.name) for f in fields(LossLaw)}


def bootstrap_loss_law(
    N,
    D,
    L,
    *,
    draws: int = 200,
    seed: int = 0,
    level: float = 0.95,
    grid: Mapping[str, Sequence[float]] = GRID,
    delta: float = 1e-3,
    method: str = METHOD,
) -> LawBootstrap:
    """:func:`fit_loss_law` on the runs, then on ``draws`` resamplings of them (runs drawn with
    replacement), each started from the first fit (one minimisation per draw rather than the whole grid)."""
    law = fit_loss_law(N, D, L, grid=grid, delta=delta, method=method)
    log_n, log_d, log_l = _runs(N, D, L)
    start = [[np.log(law.E), np.log(law.A), np.log(law.B), law.alpha, law.beta]]
    rng, fits = np.random.default_rng(seed), []
    for _ in range(draws):
        pick = rng.integers(0, len(log_n), len(log_n))
        fits.append(_fit_from(start, log_n[pick], log_d[pick], log_l[pick], delta, method))
    return LawBootstrap(law, tuple(fits), level)


def compute_optimal(law: LossLaw, C) -> tuple[np.ndarray | float, np.ndarray | float]:
    """The ``N`` and ``D`` that minimise ``law`` under a budget of ``C = 6 N D`` FLOPs (Hoffmann et al.,
    eq. 4): ``N_opt = G (C/6)^(β/(α+β))``, ``D_opt = (C/6)^(α/(α+β)) / G``, ``G = (α A / (β B))^(1/(α+β))``
    (setting ``dL/dN = 0`` along ``D = C / (6 N)``)."""
    alpha, beta = law.alpha, law.beta
    if alpha <= 0 or beta <= 0:
        raise ValueError(f"an optimum needs positive exponents; this law has alpha={alpha}, beta={beta}.")
    budget = _positive("C", C) / 6
    G = (alpha * law.A / (beta * law.B)) ** (1 / (alpha + beta))
    N, D = G * budget ** (beta / (alpha + beta)), budget ** (alpha / (alpha + beta)) / G
    return (float(N[0]), float(D[0])) if np.ndim(C) == 0 else (N, D)


__all__ = [
    "GRID",
    "IsoflopMinimum",
    "LawBootstrap",
    "LossLaw",
    "PowerLaw",
    "bootstrap_loss_law",
    "compute_optimal",
    "fit_loss_law",
    "isoflop_minimum",
    "power_law_fit",
]
