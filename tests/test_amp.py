"""Mixed precision in `train` (chapter 12): one switch, bf16 autocast, fp16 with a gradient scaler.

The choice per device (T4, A100, ... faked) is in test_precision_devices.py; here the loop really
trains in each precision on this machine's CPU.
"""

from __future__ import annotations

import dataclasses
import math
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


CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=CUDA)])
def test_auto_trains_on_a_real_cuda_gpu(device):
    """`auto` on a GPU (bf16 from compute capability 8.0, fp16 with its scaler before): the same batch's
    loss falls. The 20 steps cycle over 4 batches, so steps 1 and 17 both saw batch 0 (the last step saw
    batch 3: comparing it with the first compares two batches). The CPU twin runs the same check in fp32."""
    model, batches = make_model(), make_problem()
    with torch.no_grad():
        before = mse(model, batches[0]).item()
    history = train(model, batches, mse, TrainConfig(steps=20, lr=1e-2, progress=False), device=device)
    losses = history.series("loss")[1]
    assert losses[16] < losses[0]  # batch 0 at step 17 against batch 0 at step 1
    with torch.no_grad():
        after = mse(model, [t.to(device) for t in batches[0]]).item()
    assert after < before
    assert all(p.device.type == device and p.dtype == torch.float32 for p in model.parameters())


def failing(steps_with_inf_loss=(), steps_with_nan_gradients=(), seen=None):
    """mse, with an inf loss (finite gradients) or NaN gradients (a finite loss) on the given calls; ``seen``
    gets a copy of the weights at each call."""
    calls = 0

    def loss_fn(model, batch):
        nonlocal calls
        calls += 1
        if seen is not None:
            seen[calls] = [p.detach().clone() for p in model.parameters()]
        loss = mse(model, batch)
        if calls in steps_with_nan_gradients:  # sqrt(0) = 0, but its slope is inf, times 0: NaN
            loss = loss + torch.sqrt((model[0].weight * 0).sum())
        if calls in steps_with_inf_loss:  # an inf that no weight changes: the gradients stay finite
            loss = loss + float("inf")
        return loss

    return loss_fn


def unchanged(before, after):
    return all(torch.equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
def test_fp16_skips_a_step_with_an_inf_loss_and_counts_it(tmp_path):
    seen, file = {}, tmp_path / "fp16.pt"
    loss_fn = failing(steps_with_inf_loss=(3, 4, 5), steps_with_nan_gradients=(10, 11), seen=seen)
    config = TrainConfig(steps=40, lr=1e-2, precision="fp16", checkpoint=file, progress=False)
    history = train(make_model(), make_problem(), loss_fn, config)
    assert unchanged(seen[3], seen[6])  # steps 3-5: no optimiser step, though the gradients were finite
    assert unchanged(seen[10], seen[12])  # steps 10-11: the scaler skipped them itself
    assert history.skipped >= 5  # those five, and any the scaler skipped while its scale settled
    assert history.series("loss")[1][2:5] == [float("inf")] * 3  # the rows say what happened
    losses = history.series("loss")[1]
    assert sum(losses[-4:]) < 0.6 * sum(losses[5:9])  # the run still learned: the last pass, the second
    saved = torch.load(file, weights_only=False)
    assert saved["scaler"]["scale"] == 2.0**16 * 0.5**history.skipped  # halved at each skip
    assert saved["optimizer"]["state"][0]["step"] == 40 - history.skipped  # AdamW counts its updates only


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
def test_fp16_gives_up_after_20_inf_losses_in_a_row():
    config = TrainConfig(steps=60, precision="fp16", progress=False)
    every_other_19 = [s for s in range(1, 61) if s % 20 != 0]  # 19 in a row, then one finite, ...
    history = train(make_model(), make_problem(), failing(every_other_19), config)
    assert sum(not math.isfinite(loss) for loss in history.series("loss")[1]) == 57
    assert history.skipped >= 57  # each of them skipped
    with pytest.raises(FloatingPointError, match=r"at step 24 \(20 in a row under fp16, each step skipped\)"):
        train(make_model(), make_problem(), failing(range(5, 61)), config)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_without_a_scaler_an_inf_loss_ends_the_run_at_once(name, with_bf16):
    config = TrainConfig(steps=10, precision=name, warmup_steps=2, progress=False)
    with pytest.raises(FloatingPointError, match=r"became inf at step 3; lower .* \(now 2 steps\)\.$"):
        train(make_model(), make_problem(), failing((3,)), config)


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
def test_an_interrupted_fp16_run_with_skipped_steps_resumes_exactly(tmp_path):
    config = dict(steps=16, lr=1e-2, precision="fp16", checkpoint_every=4, progress=False)
    reference = train(make_model(), make_problem(), failing((3, 9)), TrainConfig(**config))

    def crashing(model, batch):
        if crashing.calls == 10:  # in step 11, after the checkpoint at step 8
            raise KeyboardInterrupt
        crashing.calls += 1
        return inner(model, batch)

    inner, crashing.calls, ckpt = failing((3, 9)), 0, tmp_path / "run.pt"
    with pytest.raises(KeyboardInterrupt):
        train(make_model(), make_problem(), crashing, TrainConfig(**config, checkpoint=ckpt))
    inner = failing([s - 8 for s in (3, 9)])  # a fresh process: its calls count from the resumed step
    resumed = train(make_model(), make_problem(), inner, TrainConfig(**config, checkpoint=ckpt, resume=True))
    assert resumed.rows == reference.rows and resumed.skipped == reference.skipped


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
@pytest.mark.parametrize(("before", "after"), [("fp32", "fp16"), ("bf16", "fp16"), ("fp16", "fp32")])
def test_a_run_resumes_in_another_precision(tmp_path, with_bf16, before, after):
    """A checkpoint from an A100 or L4 (bf16, no scaler: an empty scaler state) resumed on a T4 (fp16),
    and the reverse: the scaler's state is loaded only where there is one to load into."""
    file = tmp_path / "run.pt"
    config = TrainConfig(steps=4, precision=before, checkpoint=file, progress=False)
    first = train(make_model(), make_problem(), mse, config)
    config = TrainConfig(steps=8, precision=after, checkpoint=file, resume=True, progress=False)
    history = train(make_model(), make_problem(), mse, config)
    assert history.rows[:4] == first.rows and len(history.series("loss")[0]) == 8
    scaler = torch.load(file, weights_only=False)["scaler"]
    assert (scaler["scale"] > 1) if after == "fp16" else scaler == {}


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
def test_the_progress_bar_shows_the_skipped_steps(monkeypatch):
    import tqdm.auto

    shown = []

    class Bar:  # records what tqdm would show
        def __init__(self, total, **_):
            self.n, self.total = 0, total

        def set_postfix(self, postfix, refresh=True):
            shown.append(dict(postfix))

        def update(self, n):
            self.n += n

        def close(self):
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    train(make_model(), make_problem(), mse, TrainConfig(steps=4, precision="fp32"))
    assert not any("skipped" in postfix for postfix in shown)  # nothing skipped, nothing said
    shown.clear()
    history = train(make_model(), make_problem(), failing((2, 3)), TrainConfig(steps=6, precision="fp16"))
    assert shown[-1]["skipped"] == history.skipped >= 2
    assert all(postfix["loss"] != "inf" for postfix in shown)  # the smoothed loss leaves skipped steps out
