"""Chapter 19's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict (and
with the ``smoke`` profile's caveat)."""

from __future__ import annotations

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch19_scaling_laws import prose, sweep
from fromscratch.metrics.scaling import IsoflopMinimum, LawBootstrap, LossLaw, PowerLaw

SIZE = get_profile("gpu").ch19
SMOKE = get_profile("smoke").ch19
BOTH = [SIZE, SMOKE]  # a sweep large enough to read, and one too small (the caveat)


def flat(text):
    return " ".join(text.split())


def test_embeddings():
    total = [sweep.parameters(w, SIZE) for w in SIZE.widths]
    non = [t - 256 * w for t, w in zip(total, SIZE.widths, strict=True)]
    assert_reads(prose.embeddings(SIZE.widths, total, non))


@pytest.mark.parametrize("best, said", [(0, "at the edge"), (1, "inside the range"), (3, "at the edge")])
def test_lr_choice(best, said):
    losses = [3.0 if i != best else 2.5 for i in range(len(SIZE.lrs))]
    text = prose.lr_choice(losses, SIZE)
    assert_reads(text)
    assert said in text


@pytest.mark.parametrize("size", BOTH)
@pytest.mark.parametrize("outside", [0, 1, 2])
def test_isoflop(size, outside):
    minima = {
        c: IsoflopMinimum(size=1e5, loss=2.0, bracketed=i >= outside) for i, c in enumerate(size.budgets)
    }
    text = prose.isoflop(minima, size)
    assert_reads(text, never_together=[("every optimum is measured", "stands in")])
    assert ("stands in" in text) == bool(outside)
    assert ("mean anything" in text) == (not prose.meaningful(size))
    assert prose.meaningful(SIZE) and not prose.meaningful(SMOKE)


def _law(a: float, interval: tuple[float, float]) -> PowerLaw:
    return PowerLaw(1.0, a, (0.5, 1.5), interval, 0.95)


@pytest.mark.parametrize("size", BOTH)
@pytest.mark.parametrize(
    "interval, chinchilla, kaplan",
    [
        ((0.40, 0.60), "inside", "above"),
        ((0.60, 0.80), "below", "inside"),
        ((0.20, 0.45), "above", "above"),
        ((0.80, 0.95), "below", "below"),
    ],
)
def test_exponents(size, interval, chinchilla, kaplan):
    a = sum(interval) / 2
    d_law = _law(1 - a, (1 - interval[1], 1 - interval[0]))
    text = prose.exponents(_law(a, interval), d_law, _law(a + 0.1, interval), size)
    assert_reads(text)
    assert f"a = 0.50 is {chinchilla} the interval" in flat(text)
    assert f"a = 0.73 {kaplan} the interval" in flat(text)
    assert "off by more than a tenth" not in text  # a + b = 1 here


def test_exponents_that_do_not_add_up_to_one_say_why():
    size = BOTH[0]
    text = prose.exponents(_law(0.65, (0.4, 1.0)), _law(0.53, (-0.1, 1.0)), _law(0.77, (0.5, 1.1)), size)
    assert_reads(text)
    assert "1.18 here, off by more than a tenth" in flat(text)


@pytest.mark.parametrize("size", BOTH)
def test_law(size):
    law = LossLaw(E=1.2, A=40.0, B=300.0, alpha=0.4, beta=0.3)
    draws = tuple(LossLaw(1.2 + 0.01 * i, 40.0, 300.0, 0.4 + 0.01 * i, 0.3) for i in range(-5, 6))
    text = prose.law(LawBootstrap(law, draws, 0.95), size)
    assert_reads(text)
    assert "C^0.43" in text


def _forecast(size=SIZE) -> sweep.Prediction:
    width = sweep.width_for(3e6, size)
    verify = size.verify * size.budgets[-1]
    return sweep.Prediction(
        verify, size.verify, 3e6, width, sweep.parameters(width, size), 60_000_000, 1.234, 1.2, 1.27, 1.25
    )


def test_prediction():
    assert_reads(prose.prediction(_forecast()))


@pytest.mark.parametrize("size", BOTH)
@pytest.mark.parametrize("measured, said", [(1.25, "inside"), (1.40, "above"), (1.10, "below")])
def test_verification(size, measured, said):
    text = prose.verification(_forecast(size), measured, size)
    assert_reads(text)
    assert f"{said} the predicted interval" in text
    assert "one run" in text


@pytest.mark.parametrize("size", BOTH)
def test_summary(size):
    assert_reads(prose.summary(_law(0.5, (0.4, 0.6)), _forecast(size), 1.25, 1890.0, size))
    assert prose.runs(size) == len(size.lrs) + len(size.budgets) * size.per_budget + 1
