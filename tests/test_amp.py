"""Mixed precision in `train` (chapter 12): one switch, bf16 autocast, fp16 with a gradient scaler.

The choice per device (T4, A100, ... faked) is in test_precision_devices.py; here the loop really
trains in each precision on this machine's CPU.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.training import TrainConfig, precision, train
from fromscratch.training.precision import PRECISIONS, PrecisionWarning, autocast_dtype, describe


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


def recording(seen):
    """A loss that records whether autocast is on and the dtype the model's output came in."""

    def loss_fn(model, batch):
        x, y = batch
        out = model(x)
        seen.append((torch.is_autocast_enabled("cpu"), out.dtype))
        return F.mse_loss(out.float(), y)

    return loss_fn


@pytest.fixture
def no_bf16(monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)


@pytest.fixture
def with_bf16(monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)


def test_precision_is_the_only_switch():
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    assert "precision" in names and "amp" not in names


def test_bf16_on_a_cpu_without_bf16_units_warns_once_and_trains_in_bf16(no_bf16):
    seen = []
    model = make_model()
    with pytest.warns(PrecisionWarning, match="no bf16 matrix units") as caught:
        train(model, make_problem(), recording(seen), TrainConfig(steps=6, precision="bf16", progress=False))
    assert len([w for w in caught if issubclass(w.category, PrecisionWarning)]) == 1
    assert set(seen) == {(True, torch.bfloat16)}  # what was asked for, not silently fp32
    reference = make_model()
    train(reference, make_problem(), mse, TrainConfig(steps=6, precision="fp32", progress=False))
    differ = [not torch.equal(a, b) for a, b in zip(reference.parameters(), model.parameters(), strict=True)]
    assert any(differ)  # a different run from the fp32 one


def test_best_and_auto_pick_fp32_on_such_a_cpu_without_a_word(no_bf16):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert autocast_dtype("cpu", "best") is None
        assert autocast_dtype("cpu", "auto") is None
        assert autocast_dtype("cpu", "fp32") is None
    assert "no bf16 units" in describe("cpu", "best") and "fp32" in describe("cpu", "best")


def test_auto_is_fp32_on_the_cpu_even_with_bf16_units(with_bf16):
    seen = []
    train(make_model(), make_problem(), recording(seen), TrainConfig(steps=2, progress=False))
    assert set(seen) == {(False, torch.float32)}


def test_bf16_autocast_on_a_cpu_with_bf16_units(with_bf16):
    seen = []
    config = TrainConfig(steps=40, lr=1e-2, precision="best", progress=False)
    model = make_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        history = train(model, make_problem(), recording(seen), config)
    assert set(seen) == {(True, torch.bfloat16)}  # linear layers ran in bf16
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the weights stay fp32
    reference = train(
        make_model(), make_problem(), mse, TrainConfig(steps=40, lr=1e-2, precision="fp32", progress=False)
    )
    # the same run to bf16's 2-3 digits: every step's loss within 5 % of the fp32 run's
    assert history.series("loss")[1] == pytest.approx(reference.series("loss")[1], rel=0.05)


def test_fp16_with_its_gradient_scaler_trains_on_the_cpu(tmp_path, no_bf16):
    """The scaler's whole path (scale, unscale for clipping, step, update) as on a T4, on the CPU."""
    seen = []
    file = tmp_path / "fp16.pt"
    config = TrainConfig(steps=40, lr=1e-2, precision="fp16", checkpoint=file, progress=False)
    with pytest.warns(PrecisionWarning, match="fp16"):
        history = train(make_model(), make_problem(), recording(seen), config)
    assert set(seen) == {(True, torch.float16)}
    losses = history.series("loss")[1]
    assert sum(losses[-4:]) < 0.5 * sum(losses[:4])  # the last pass over the 4 batches against the first
    scaler = torch.load(file, weights_only=False)["scaler"]
    assert scaler["scale"] > 1  # the loss really was scaled (GradScaler starts at 2**16)


def test_fp32_has_no_scaler(tmp_path):
    file = tmp_path / "fp32.pt"
    train(
        make_model(),
        make_problem(),
        mse,
        TrainConfig(steps=2, precision="fp32", checkpoint=file, progress=False),
    )
    assert torch.load(file, weights_only=False)["scaler"] == {}  # a disabled GradScaler saves nothing


def test_what_autocast_keeps_in_fp32_on_the_cpu():
    """Matmuls run in bf16; the loss goes up to fp32; softmax and layer norm follow their input."""
    x, w = torch.randn(4, 8), torch.randn(8, 8)
    with precision.Precision(torch.bfloat16, scaler=False).autocast("cpu"):
        y = x @ w
        assert y.dtype == torch.bfloat16
        assert F.cross_entropy(y, torch.zeros(4, dtype=torch.long)).dtype == torch.float32
        assert torch.softmax(y, -1).dtype == torch.bfloat16 and torch.softmax(x, -1).dtype == torch.float32
        assert F.layer_norm(x, (8,)).dtype == torch.float32


def test_unknown_precision_is_a_clear_error():
    with pytest.raises(ValueError, match="precision must be one of") as error:
        train(make_model(), make_problem(), mse, TrainConfig(steps=1, precision="fp17", progress=False))
    assert "'fp17'" in str(error.value) and all(repr(p) in str(error.value) for p in PRECISIONS)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_auto_trains_on_a_real_cuda_gpu():
    model = make_model()
    history = train(model, make_problem(), mse, TrainConfig(steps=20, lr=1e-2, progress=False), device="cuda")
    assert history.series("loss")[1][-1] < history.series("loss")[1][0]
