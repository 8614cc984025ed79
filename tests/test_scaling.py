"""metrics.scaling recovers planted laws, with Chinchilla's fit (Hoffmann et al. 2022, approach 3) as truth.

The runs: 5 IsoFLOP budgets from 1e18 to 1e22 FLOPs, 7 sizes each spread over a factor of 25 around the
budget's optimum, ``D = C / (6 N)``, and losses from the planted law times ``exp(noise)``, noise normal
with a standard deviation of 0.5 % (a seed's spread in a small sweep).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from fromscratch.metrics.scaling import (
    LossLaw,
    bootstrap_loss_law,
    compute_optimal,
    fit_loss_law,
    isoflop_minimum,
    power_law_fit,
)
from fromscratch.utils import loglog_slope

CHINCHILLA = LossLaw(E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28)
BUDGETS = np.logspace(18, 22, 5)
SIZES_PER_BUDGET = 7
NOISE = 0.005  # standard deviation of log L
# tolerances of the recovery from noisy runs: E within 3 %, the exponents within 0.02
E_TOLERANCE, EXPONENT_TOLERANCE = 0.03, 0.02
SMALL_GRID = {
    "e": (0.0, 1.0),
    "a": (0.0, 10.0),
    "b": (0.0, 10.0),
    "alpha": (0.25, 0.75),
    "beta": (0.25, 0.75),
}


def sweep(law: LossLaw = CHINCHILLA, noise: float = NOISE, seed: int = 0):
    """N, D, L of an IsoFLOP sweep around ``law``'s optimum at each budget, with lognormal noise."""
    optimum = np.array([compute_optimal(law, c)[0] for c in BUDGETS])
    N = np.concatenate([n * np.logspace(-0.7, 0.7, SIZES_PER_BUDGET) for n in optimum])
    C = np.repeat(BUDGETS, SIZES_PER_BUDGET)
    D = C / (6 * N)
    L = law(N, D) * np.exp(np.random.default_rng(seed).normal(0, noise, len(N)))
    return N, D, L


def test_fit_loss_law_recovers_the_planted_law_exactly_without_noise():
    law = fit_loss_law(*sweep(noise=0.0), grid=SMALL_GRID)
    for name in ("E", "A", "B", "alpha", "beta"):
        assert getattr(law, name) == pytest.approx(getattr(CHINCHILLA, name), rel=1e-4), name


def test_fit_loss_law_recovers_chinchillas_parameters_from_noisy_runs():
    N, D, L = sweep()
    law = fit_loss_law(N, D, L)
    assert abs(law.E / CHINCHILLA.E - 1) < E_TOLERANCE
    assert abs(law.alpha - CHINCHILLA.alpha) < EXPONENT_TOLERANCE
    assert abs(law.beta - CHINCHILLA.beta) < EXPONENT_TOLERANCE
    # A and B trade off against the exponents (a small change of α moves A a lot): within a factor 1.5
    assert 1 / 1.5 < law.A / CHINCHILLA.A < 1.5 and 1 / 1.5 < law.B / CHINCHILLA.B < 1.5
    # what matters for a prediction: the law's loss, here and at a budget 10 times the largest
    assert law(N, D) == pytest.approx(CHINCHILLA(N, D), rel=0.005)
    far = compute_optimal(CHINCHILLA, 10 * BUDGETS[-1])
    assert law(*far) == pytest.approx(CHINCHILLA(*far), rel=0.01)


def test_bootstrap_intervals_hold_the_fit_and_the_truth():
    N, D, L = sweep()
    boot = bootstrap_loss_law(N, D, L, draws=20, seed=0, grid=SMALL_GRID)
    assert len(boot.draws) == 20 and len(set(boot.draws)) > 1
    intervals = boot.intervals()
    for name in ("alpha", "beta"):
        low, high = intervals[name]
        assert low < getattr(boot.law, name) < high and low < getattr(CHINCHILLA, name) < high
    far = compute_optimal(CHINCHILLA, 10 * BUDGETS[-1])
    low, high = boot.interval(lambda law: law(*far))  # a predicted loss, with its interval
    assert low < boot.law(*far) < high


def test_compute_optimal_spends_the_budget_at_the_laws_minimum():
    for budget in (1e18, 3.2e20, 5.8e23):
        n, d = compute_optimal(CHINCHILLA, budget)
        assert 6 * n * d == pytest.approx(budget, rel=1e-12)
        # the loss along the IsoFLOP line D = C / (6 N), minimised numerically in log N
        along = minimize_scalar(
            lambda log_n, budget=budget: CHINCHILLA(np.exp(log_n), budget / (6 * np.exp(log_n))),
            bracket=(np.log(n) - 1, np.log(n) + 1),
            tol=1e-10,
        )
        assert np.exp(along.x) == pytest.approx(n, rel=1e-4)
    # Chinchilla's own figure: 5.76e23 FLOPs (Gopher's budget) -> about 40 B parameters, 1.5 T tokens
    # at these fitted parameters (the paper's Table 3 quotes 67 B from approach 3's unrounded fit)
    n, d = compute_optimal(CHINCHILLA, np.array([5.76e23]))
    assert 3e10 < n[0] < 5e10 and 1e12 < d[0] < 3e12


def test_isoflop_minima_and_the_power_law_recover_the_optimal_exponent():
    N, _, L = sweep()
    curves = zip(N.reshape(len(BUDGETS), -1), L.reshape(len(BUDGETS), -1), strict=True)  # a budget a row
    minima = [isoflop_minimum(sizes, losses) for sizes, losses in curves]
    assert all(m.bracketed for m in minima)
    truth = [compute_optimal(CHINCHILLA, c)[0] for c in BUDGETS]
    assert [m.size for m in minima] == pytest.approx(truth, rel=0.15)
    fit = power_law_fit(BUDGETS, [m.size for m in minima], bootstrap=200)
    a = CHINCHILLA.beta / (CHINCHILLA.alpha + CHINCHILLA.beta)  # N_opt ∝ C^a
    assert fit.exponent == pytest.approx(a, abs=EXPONENT_TOLERANCE)
    low, high = fit.exponent_interval
    assert low <= fit.exponent <= high


def test_power_law_fit_recovers_a_planted_exponent():
    rng = np.random.default_rng(1)
    x = np.logspace(1, 5, 12)
    y = 3.0 * x**0.5 * np.exp(rng.normal(0, 0.02, len(x)))
    fit = power_law_fit(x, y, bootstrap=300, seed=2)
    assert fit.exponent == pytest.approx(0.5, abs=0.01)
    assert fit.coefficient == pytest.approx(3.0, rel=0.1)
    assert fit.exponent == pytest.approx(loglog_slope(x, y), abs=1e-12)  # the house's one slope
    low, high = fit.exponent_interval
    assert low < 0.5 < high and fit.level == 0.95
    assert fit(100.0) == pytest.approx(fit.coefficient * 100**fit.exponent)


def test_bad_runs_are_refused_with_what_to_do():
    with pytest.raises(ValueError, match="curve upwards"):
        isoflop_minimum([1e6, 1e7, 1e8], [3.0, 3.5, 3.0])
    with pytest.raises(ValueError, match="three distinct sizes"):
        isoflop_minimum([1e6, 1e7], [3.0, 2.9])
    assert not isoflop_minimum([1e6, 1e7, 1e8], [3.0, 2.5, 2.2]).bracketed  # the minimum lies beyond 1e8
    with pytest.raises(ValueError, match="positive"):
        power_law_fit([1.0, -2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 5 runs"):
        fit_loss_law([1e6] * 3, [1e8] * 3, [3.0] * 3)
    with pytest.raises(ValueError, match="grid needs"):
        fit_loss_law(*sweep(), grid={"e": (0.0,)})
