"""Chapter 19's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import numpy as np

import fromscratch.chapters.ch19_scaling_laws.checks as ch19
from fromscratch.metrics.flops import flops_per_token
from fromscratch.metrics.scaling import compute_optimal


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch19).failed == 0


def _weights(config):
    e, s = config.emb, config.emb // config.heads
    block = 2 * e * e + 2 * e * config.kv_heads * s + 3 * e * config.hidden
    return config.depth * block + config.vocab_size * e


def test_check_flops(capsys):
    def by_hand(config, t):
        return 6 * _weights(config) + 12 * config.depth * t * config.emb

    def six_n_only(config, t):  # forgets attention
        return 6 * _weights(config)

    def scores_only(config, t):  # Kaplan's forward count of the scores, times 3: half the attention
        return 6 * _weights(config) + 6 * config.depth * t * config.emb

    def calls_the_package(config, t):
        return flops_per_token(config, t).total

    assert ch19.check_flops(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch19.check_flops(six_n_only) is False
    assert "✗" in capsys.readouterr().out
    assert ch19.check_flops(scores_only) is False
    assert ch19.check_flops(calls_the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch19.check_flops(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_power_law(capsys):
    def by_hand(x, y):
        p, log_k = np.polyfit(np.log(x), np.log(y), 1)
        return float(np.exp(log_k)), float(p)

    def swapped(x, y):  # returns (p, k)
        k, p = by_hand(x, y)
        return p, k

    def linear(x, y):  # a straight line in x, not in log x
        p, k = np.polyfit(x, y, 1)
        return float(k), float(p)

    assert ch19.check_power_law(by_hand) is True
    assert ch19.check_power_law(swapped) is False
    assert ch19.check_power_law(linear) is False
    assert ch19.check_power_law(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_compute_optimal(capsys):
    def by_hand(law, C):
        a, b = law.alpha, law.beta
        G = (a * law.A / (b * law.B)) ** (1 / (a + b))
        N = G * (C / 6) ** (b / (a + b))
        return N, C / (6 * N)

    def exponents_swapped(law, C):  # N grows as C^(α/(α+β)): the two exponents exchanged
        a, b = law.alpha, law.beta
        G = (a * law.A / (b * law.B)) ** (1 / (a + b))
        N = G * (C / 6) ** (a / (a + b))
        return N, C / (6 * N)

    def calls_the_package(law, C):
        return compute_optimal(law, C)

    assert ch19.check_compute_optimal(by_hand) is True
    assert ch19.check_compute_optimal(exponents_swapped) is False
    assert ch19.check_compute_optimal(calls_the_package) is False
    assert "write it yourself" in capsys.readouterr().out
    assert ch19.check_compute_optimal(stub) is None
