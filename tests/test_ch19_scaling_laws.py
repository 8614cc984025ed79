"""Chapter 19's sweep: the models of a width, the sizes of a budget, a budget turned into steps, the minima,
the cosine to 10 %, and its figures drawn from synthetic runs."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch19_scaling_laws import figures, sweep
from fromscratch.metrics.flops import flops_per_token
from fromscratch.metrics.scaling import LossLaw, compute_optimal, power_law_fit
from fromscratch.training import Schedule

PROFILES = {name: get_profile(name).ch19 for name in ("smoke", "cpu", "gpu")}


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_budget_trains_its_sizes_around_the_first_guess(name):
    size = PROFILES[name]
    assert list(size.budgets) == sorted(size.budgets) and list(size.widths) == sorted(size.widths)
    for budget in size.budgets:
        widths = sweep.widths_for(budget, size)
        assert len(widths) == size.per_budget and set(widths) <= set(size.widths)
        for width in widths:
            config = sweep.model_config(width, size)
            plan = sweep.train_config(config, budget, size, lr=1e-3)
            spent = plan.steps * size.batch_size * size.context * flops_per_token(config).total
            assert spent == pytest.approx(budget, rel=0.5 / plan.steps + 1e-9)  # up to the rounding of steps
            assert plan.schedule == "cosine10" and 1 <= plan.warmup_steps < plan.steps
    assert size.lr_width in size.widths and size.lr_budget in size.budgets


def test_the_cpu_sweep_is_the_size_the_brief_asks():
    size = PROFILES["cpu"]
    assert 4 <= len(size.budgets) <= 5 and 5 <= size.per_budget <= 7
    assert 3 <= size.verify <= 10


def test_model_config_checks_the_width():
    size = PROFILES["cpu"]
    config = sweep.model_config(48, size)
    assert (config.emb, config.heads, config.kv_heads, config.vocab_size) == (48, 6, 6, 256)
    with pytest.raises(ValueError, match="multiple of 8"):
        sweep.model_config(20, size)


def test_width_for_finds_the_nearest_size():
    size = PROFILES["cpu"]
    for width in (16, 40, 96, 200):
        assert sweep.width_for(sweep.parameters(width, size), size) == width
    assert sweep.first_guess(120 * 1e6) == pytest.approx(1e3)


def test_the_schedule_ends_at_a_tenth():
    schedule = Schedule(2, 20, None, shape="cosine10")
    factors = [schedule(step) for step in range(21)]
    assert factors[:3] == [0.5, 1.0, 1.0]
    assert factors[20] == pytest.approx(0.1) and min(factors) == pytest.approx(0.1)
    assert all(a >= b for a, b in zip(factors[2:], factors[3:], strict=False))
    assert Schedule(2, 20, None, shape="cosine")(20) == pytest.approx(0.0)


def _runs(law: LossLaw, size):
    runs = {}
    for budget in size.budgets:
        for width in sweep.widths_for(budget, size):
            config = sweep.model_config(width, size)
            n = sweep.parameters(width, size)
            d = int(budget / flops_per_token(config).total)
            runs.setdefault(budget, []).append(
                sweep.Run(width, budget, n, n // 2, d, budget, float(law(n, d)))
            )
    return runs


def test_minimum_finds_a_planted_optimum_and_falls_back_without_one():
    size = PROFILES["cpu"]
    law = LossLaw(E=1.0, A=30.0, B=60.0, alpha=0.4, beta=0.35)
    runs = _runs(law, size)
    for rows in runs.values():
        best = sweep.minimum(rows)
        measured = min(r.loss for r in rows)
        assert best.loss <= measured + 1e-3
    flat = [sweep.Run(16, 1.0, n, n, 10, 1.0, loss) for n, loss in ((10, 3.0), (20, 2.0), (40, 1.0))]
    fallback = sweep.minimum(flat)  # falling losses: no minimum, the best run, not bracketed
    assert (fallback.size, fallback.loss, fallback.bracketed) == (40.0, 1.0, False)


def test_the_figures_draw():
    size = PROFILES["cpu"]
    law = LossLaw(E=1.0, A=30.0, B=60.0, alpha=0.4, beta=0.35)
    runs = _runs(law, size)
    minima = {c: sweep.minimum(rows) for c, rows in runs.items()}
    budgets = sorted(minima)
    n_opt = [minima[c].size for c in budgets]
    n_law = power_law_fit(budgets, n_opt, bootstrap=20)
    d_law = power_law_fit(budgets, [c / (6 * n) for c, n in zip(budgets, n_opt, strict=True)], bootstrap=20)
    verify = size.verify * budgets[-1]
    c = np.geomspace(budgets[0], verify, 5)
    optimal = [compute_optimal(law, x) for x in c]
    loss = [float(law(n, d)) for n, d in optimal]
    figs = [
        figures.lr_plot(size.lrs, [3.0, 2.9, 2.95, 3.1], chosen=size.lrs[1]),
        figures.isoflop_plot(runs, minima),
        figures.frontier_plot(budgets, n_opt, [6.0 * n for n in n_opt], n_law, d_law, verify=verify),
        figures.prediction_plot(
            budgets,
            [m.loss for m in minima.values()],
            (c, loss, [x - 0.1 for x in loss], [x + 0.1 for x in loss]),
            verify=verify,
            predicted=(2.0, 1.9, 2.1),
            measured=2.05,
        ),
        figures.budget_frame(
            law, verify, n=[1e4, 1e5], d=[1e7, 1e6], runs=runs[budgets[0]], optimum=(1e4, 1e7)
        ),
    ]
    for fig in figs:
        assert fig.axes
        plt.close(fig)
    assert math.isfinite(n_law.exponent)
