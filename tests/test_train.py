"""The training loop: it learns, its schedule is right, and an interrupted run resumes exactly."""

from __future__ import annotations

from itertools import pairwise

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from fromscratch.data.registry import cache_dir
from fromscratch.training import History, TrainConfig, checkpoint_path, load_checkpoint, lr_factor, train
from fromscratch.training.schedule import Schedule


def make_problem(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 8, generator=g)
    y = x @ torch.randn(8, 1, generator=g) + 0.01 * torch.randn(256, 1, generator=g)
    return TensorDataset(x, y)


def mse(model, batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


def make_model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.ReLU(), nn.Linear(16, 1))


def test_loss_falls_and_history_records_evaluations():
    model = make_model()
    loader = DataLoader(make_problem(), batch_size=32, shuffle=True)

    def evaluate(m):
        return {"val_mse": float(mse(m, make_problem()[:]))}

    history = train(
        model, loader, mse, TrainConfig(epochs=20, lr=1e-2, eval_every=40, progress=False), evaluate=evaluate
    )
    steps, losses = history.series("loss")
    assert len(steps) == 20 * 8
    assert sum(losses[-8:]) / 8 < 0.2 * sum(losses[:8]) / 8
    eval_steps, _ = history.series("val_mse")
    assert eval_steps == [40, 80, 120, 160]
    assert history.last("val_mse") < 0.1


def test_schedule_warms_up_then_decays_to_zero():
    factors = [lr_factor(s, warmup_steps=4, total_steps=10) for s in range(10)]
    assert factors[:4] == [0.25, 0.5, 0.75, 1.0]
    assert factors[4] == 1.0 and factors[-1] == pytest.approx(1 / 6)
    assert all(a >= b for a, b in pairwise(factors[3:]))
    assert lr_factor(10, 4, 10) == 0.0


def test_schedule_by_steps_equals_lr_factor():
    schedule = Schedule(warmup_steps=4, total_steps=10, seconds=None)
    assert [schedule(s) for s in range(11)] == pytest.approx([lr_factor(s, 4, 10) for s in range(11)])


def test_schedule_by_time_decays_with_the_seconds_spent():
    schedule = Schedule(warmup_steps=2, total_steps=None, seconds=10.0)
    assert [schedule(0), schedule(1)] == [0.5, 1.0]
    schedule.elapsed = 2.0  # the warm-up took 2 s: the decay spans the 8 s left
    assert schedule(2) == 1.0
    schedule.elapsed = 6.0
    assert schedule(7) == pytest.approx(0.5) and not schedule.finished(7)
    schedule.elapsed = 10.0
    assert schedule(9) == 0.0 and schedule.finished(9)
    both = Schedule(warmup_steps=0, total_steps=4, seconds=100.0)  # whichever end comes first
    assert both(2) == 0.5 and both.finished(4)
    with pytest.raises(ValueError, match="needs an end"):
        Schedule(warmup_steps=0, total_steps=None, seconds=None)


def test_a_time_budget_ends_the_run_with_the_learning_rate_at_zero():
    loader = DataLoader(make_problem(), batch_size=32, shuffle=True)
    history = train(
        make_model(), loader, mse, TrainConfig(minutes=0.01, lr=1e-2, warmup_steps=3, progress=False)
    )
    steps, lrs = history.series("lr")
    assert len(steps) > 5  # 0.6 s of steps that each take about a millisecond
    assert lrs[3] > lrs[-1] and lrs[-1] < 0.2 * 1e-2
    capped = train(make_model(), loader, mse, TrainConfig(minutes=5, steps=7, lr=1e-2, progress=False))
    assert len(capped.series("loss")[0]) == 7


def test_accumulation_equals_one_big_batch():
    data = make_problem()
    big, small = make_model(), make_model()
    big[1].p = small[1].p = 0.0  # no dropout: the two runs must see identical computations
    train(big, DataLoader(data, batch_size=64), mse, TrainConfig(steps=4, lr=1e-2, progress=False))
    train(
        small,
        DataLoader(data, batch_size=32),
        mse,
        TrainConfig(steps=4, lr=1e-2, accumulate=2, progress=False),
    )
    for a, b in zip(big.parameters(), small.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)


class Interrupt(Exception):
    pass


def test_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    config = dict(steps=30, lr=1e-2, warmup_steps=5, checkpoint_every=7, progress=False)
    loader = DataLoader(make_problem(), batch_size=48, shuffle=True)  # 6 batches: epochs roll over

    torch.manual_seed(123)
    reference = make_model()
    ref_history = train(reference, loader, mse, TrainConfig(**config, checkpoint=tmp_path / "ref.pt"))

    calls = 0

    def crashing_loss(model, batch):
        nonlocal calls
        calls += 1
        if calls == 17:  # in the middle of step 17, after the checkpoint at step 14
            raise Interrupt
        return mse(model, batch)

    torch.manual_seed(123)
    model = make_model()
    ckpt = tmp_path / "run.pt"
    with pytest.raises(Interrupt):
        train(model, loader, crashing_loss, TrainConfig(**config, checkpoint=ckpt))
    assert load_checkpoint(ckpt)["step"] == 14

    torch.manual_seed(999)  # a fresh process: other random state, fresh weights
    resumed = make_model(seed=5)
    history = train(resumed, loader, mse, TrainConfig(**config, checkpoint=ckpt, resume=True))

    for a, b in zip(reference.parameters(), resumed.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
    assert history.rows == ref_history.rows
    assert not list(tmp_path.glob(".*tmp*")), "no temporary checkpoint file may be left behind"


def test_resuming_a_finished_run_trains_no_more(tmp_path):
    model = make_model()
    loader = DataLoader(make_problem(), batch_size=32)
    cfg = TrainConfig(steps=5, checkpoint=tmp_path / "c.pt", resume=True, progress=False)
    first = train(model, loader, mse, cfg)
    before = [p.clone() for p in model.parameters()]
    again = train(model, loader, mse, cfg)
    assert again.rows == first.rows
    for a, b in zip(before, model.parameters(), strict=True):
        torch.testing.assert_close(a, b)


def test_clear_errors():
    with pytest.raises(ValueError, match="Say how long to train"):
        train(make_model(), [], mse, TrainConfig(progress=False))
    with pytest.raises(ValueError, match="endless stream"):
        train(make_model(), lambda: iter([]), mse, TrainConfig(epochs=1, progress=False))
    with pytest.raises(ValueError, match="positive time budget"):
        train(make_model(), [], mse, TrainConfig(minutes=0, progress=False))


def test_history_plot_draws_each_metric():
    history = History(
        [
            {"step": 1, "loss": 1.0, "lr": 0.1},
            {"step": 2, "loss": 0.5, "lr": 0.1},
            {"step": 2, "accuracy": 0.7},
        ]
    )
    fig = history.plot()
    assert [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes] == [
        ("step", "training loss"),
        ("step", "accuracy"),
    ]
    assert len(fig.axes[1].lines) == 1 and list(fig.axes[1].lines[0].get_ydata()) == [0.7]
    assert history.last("accuracy") == 0.7


def test_evaluation_runs_in_eval_mode_and_training_goes_on_in_train_mode():
    modes = {"loss": set(), "evaluate": set()}

    def loss_fn(model, batch):
        modes["loss"].add(model.training)
        return mse(model, batch)

    def evaluate(model):
        modes["evaluate"].add(model.training)
        return {"val_mse": 0.0}

    model = make_model()
    train(
        model,
        DataLoader(make_problem(), batch_size=64),
        loss_fn,
        TrainConfig(steps=6, eval_every=2, progress=False),
        evaluate=evaluate,
    )
    assert modes == {"loss": {True}, "evaluate": {False}}  # dropout on while training, off while evaluating
    assert model.training


def test_checkpoints_go_under_the_data_cache(empty_data_env):
    path = checkpoint_path("07_generator.pt")
    assert path == cache_dir() / "checkpoints" / "07_generator.pt" and path.is_relative_to(empty_data_env)
    train(
        make_model(),
        DataLoader(make_problem(), batch_size=64),
        mse,
        TrainConfig(steps=2, checkpoint=path, progress=False),
    )
    assert load_checkpoint(path)["step"] == 2
    for bad in ("", "/tmp/run.pt", "../run.pt"):
        with pytest.raises(ValueError, match="file name"):
            checkpoint_path(bad)


def test_an_out_of_memory_error_says_what_to_do():
    """On a GPU an out-of-memory error in a step comes back with its step and the ways out (faked here:
    the loss raises what CUDA raises)."""

    def too_big(model, batch):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    with pytest.raises(torch.OutOfMemoryError, match=r"Training step 1 did not fit .*accumulate=k") as error:
        train(
            make_model(),
            DataLoader(make_problem(), batch_size=32),
            too_big,
            TrainConfig(steps=3, progress=False),
        )
    assert "Tried to allocate 20.00 GiB" in str(error.value.__cause__)


def test_the_loop_imports_no_model_and_needs_only_torch_and_numpy():
    """`fromscratch.training` (and `fromscratch`, `fromscratch.data`) import with torch and numpy alone:
    what downloads (pooch, platformdirs), draws (matplotlib) or shows a bar (tqdm) is imported where it is
    used, and a GPU image without them still trains. The loop imports no model and no memory estimate."""
    import subprocess
    import sys

    script = """
import sys
for name in ("pooch", "platformdirs", "tqdm", "matplotlib", "IPython", "ipywidgets", "transformers",
             "safetensors", "tokenizers", "regex", "sacrebleu", "tiktoken", "networkx", "gguf", "accelerate",
             "peft", "bertviz", "pandas", "scipy", "PIL", "nbformat", "nbclient"):
    sys.modules[name] = None  # `import name` now fails as if it were not installed
import torch
import fromscratch, fromscratch.data, fromscratch.training
from fromscratch.training import TrainConfig, train
model = torch.nn.Linear(4, 1)
batches = [(torch.randn(8, 4), torch.randn(8, 1))]
loss = lambda m, b: ((m(b[0]) - b[1]) ** 2).mean()
history = train(model, batches, loss, TrainConfig(steps=3, progress=False))
assert len(history.rows) == 3
loaded = sorted(m for m in sys.modules if m.startswith("fromscratch."))
print(" ".join(loaded))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = done.stdout.split()
    assert "fromscratch.training.loop" in loaded
    assert not [m for m in loaded if m.startswith(("fromscratch.models", "fromscratch.chapters"))], loaded
    assert "fromscratch.training.memory" not in loaded and "fromscratch.training.fits" not in loaded
