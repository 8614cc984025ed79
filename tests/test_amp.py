"""Mixed precision in `train` (chapter 12): bf16 autocast on CPU and CUDA, fp16 + scaler on CUDA, fallbacks."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.training import TrainConfig, precision, train
from fromscratch.training.precision import PrecisionWarning, autocast_dtype, describe


def make_problem():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    return [(x[i : i + 16], x[i : i + 16].sum(1, keepdim=True)) for i in range(0, 64, 16)]


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def mse(model, batch):
    x, y = batch
    return F.mse_loss(model(x).float(), y)


@pytest.fixture
def no_bf16(monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)


@pytest.fixture
def with_bf16(monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)


def test_bf16_on_a_cpu_without_bf16_units_falls_back_to_fp32_with_one_warning(no_bf16):
    reference = make_model()
    train(reference, make_problem(), mse, TrainConfig(steps=6, precision="fp32", progress=False))
    model = make_model()
    with pytest.warns(PrecisionWarning, match="no bf16 matrix units") as caught:
        train(model, make_problem(), mse, TrainConfig(steps=6, precision="bf16", progress=False))
    assert len([w for w in caught if issubclass(w.category, PrecisionWarning)]) == 1
    for a, b in zip(reference.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=0, rtol=0)  # exactly the fp32 run


def test_best_and_auto_pick_fp32_on_such_a_cpu_without_a_word(no_bf16):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert autocast_dtype("cpu", "best") is None
        assert autocast_dtype("cpu", "auto") is None
        assert autocast_dtype("cpu", "fp32") is None
    assert "no bf16 units" in describe("cpu", "best") and "fp32" in describe("cpu", "best")


def test_bf16_autocast_on_a_cpu_with_bf16_units(with_bf16):
    seen = []

    def loss_fn(model, batch):
        x, y = batch
        out = model(x)
        seen.append((torch.is_autocast_enabled("cpu"), out.dtype))
        return F.mse_loss(out.float(), y)

    config = TrainConfig(steps=40, lr=1e-2, precision="best", progress=False)
    model = make_model()
    history = train(model, make_problem(), loss_fn, config)
    assert set(seen) == {(True, torch.bfloat16)}  # linear layers ran in bf16
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the weights stay fp32
    reference = train(
        make_model(), make_problem(), mse, TrainConfig(steps=40, lr=1e-2, precision="fp32", progress=False)
    )
    # the same run to bf16's 2-3 digits: every step's loss within 5 % of the fp32 run's
    assert history.series("loss")[1] == pytest.approx(reference.series("loss")[1], rel=0.05)
    assert autocast_dtype("cpu", "bf16") == torch.bfloat16


def test_what_autocast_keeps_in_fp32_on_the_cpu():
    """Matmuls run in bf16; the loss goes up to fp32; softmax and layer norm follow their input."""
    x, w = torch.randn(4, 8), torch.randn(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
        assert y.dtype == torch.bfloat16
        assert F.cross_entropy(y, torch.zeros(4, dtype=torch.long)).dtype == torch.float32
        assert torch.softmax(y, -1).dtype == torch.bfloat16 and torch.softmax(x, -1).dtype == torch.float32
        assert F.layer_norm(x, (8,)).dtype == torch.float32


def test_fp16_is_for_cuda(no_bf16):
    with pytest.warns(PrecisionWarning, match="CUDA"):
        assert autocast_dtype("cpu", "fp16") is None


def test_unknown_precision_is_a_clear_error():
    with pytest.raises(ValueError, match="precision must be one of"):
        train(make_model(), make_problem(), mse, TrainConfig(steps=1, precision="half", progress=False))


def test_amp_false_still_means_fp32(with_bf16):
    seen = []

    def loss_fn(model, batch):
        seen.append(torch.is_autocast_enabled("cpu"))
        return mse(model, batch)

    train(
        make_model(),
        make_problem(),
        loss_fn,
        TrainConfig(steps=2, precision="bf16", amp=False, progress=False),
    )
    assert seen == [False, False]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_fp16_with_a_scaler_on_cuda():
    model = make_model()
    history = train(
        model,
        make_problem(),
        mse,
        TrainConfig(steps=20, lr=1e-2, precision="fp16", progress=False),
        device="cuda",
    )
    assert history.series("loss")[1][-1] < history.series("loss")[1][0]
