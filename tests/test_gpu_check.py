"""The GPU path stays runnable between the rare loans of a GPU machine (benchmarks/gpu/, issue 41).

On the CPU: the check's ``--quick`` (every run of the committed record of the chapters at ``gpu`` size,
rebuilt from the record and trained through ``train`` on one example), the pack's rebuilding of models
and batches, the plan's arithmetic on a measured check, and two chapters run from a notebook pack alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import next_token_loss

ROOT = Path(__file__).parents[1]
GPU = ROOT / "benchmarks" / "gpu"
sys.path.insert(0, str(GPU))

import pack  # noqa: E402  (benchmarks/gpu/pack.py)
import record  # noqa: E402
import report  # noqa: E402
from record import describe_batch  # noqa: E402


def run(script: str, *args: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(GPU / script), *args], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_the_check_quick_runs_every_recorded_run(tmp_path):
    out = tmp_path / "check.json"
    env = {**os.environ, "FROMSCRATCH_DATA": str(tmp_path / "cache")}
    lines = run("check.py", "--quick", "--json", str(out), env=env).stdout.strip().splitlines()
    chapters = {r["chapter"][:2] for r in pack.runs(pack.read(GPU.parent / "results" / "records-gpu.jsonl"))}
    assert lines[-1] == f"GPU check: {len(chapters)} chapters, 0 problems"
    measured = json.loads(out.read_text())["runs"].values()
    assert all("ms_per_step" in r or "skipped" in r for m in measured for r in m["precisions"].values())


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed, self.out = nn.Embedding(11, 8), nn.Linear(8, 11, bias=False)
        self.out.weight = self.embed.weight
        self.register_buffer("scale", torch.full((3,), 2.0))  # small: recorded with its values

    def forward(self, x):
        return self.out(self.embed(x)) * self.scale[0]


def recorded(tmp_path, model, batches) -> dict:
    path = tmp_path / "records.jsonl"
    recording_train = record.recording(train, path, "07_masking_generation", only=False)
    recording_train(model, batches, next_token_loss, TrainConfig(steps=1, progress=False))
    [run] = pack.runs(pack.read(path))
    return run


def test_a_recorded_model_comes_back_with_tied_weights_and_its_spread(tmp_path):
    torch.manual_seed(0)
    model = Tied()
    run = recorded(tmp_path, model, [torch.randint(0, 11, (4, 9))])
    again = pack.rebuild(run, torch.device("cpu"))
    assert again.out.weight is again.embed.weight and torch.equal(again.scale, model.scale)
    assert abs(again.embed.weight.std() - model.embed.weight.std()) < 0.1
    assert pack.loss_of(run["loss"]) is next_token_loss


def test_a_model_with_a_config_is_built_again_from_it(tmp_path):
    from fromscratch.models import Generator, GeneratorConfig

    config = GeneratorConfig(vocab_size=32, emb=16, heads=2, depth=1, context=8)
    run = recorded(tmp_path, Generator(config), [torch.randint(0, 32, (2, 9))])
    assert "pickle" not in run["model"] and run["model"]["config"]["emb"] == 16
    again = pack.rebuild(run, torch.device("cpu"))
    assert isinstance(again, Generator) and again.config == config


def test_a_batch_of_the_recorded_shapes():
    batch = {
        "ids": torch.randint(3, 50, (4, 7)),
        "labels": torch.tensor([-100, 1, 2, 0]),
        "mask": torch.ones(4, 7) > 0,
    }
    drawn = pack.batch_of(describe_batch(batch), torch.device("cpu"), torch.Generator().manual_seed(0))
    assert {k: (v.shape, v.dtype) for k, v in drawn.items()} == {
        k: (v.shape, v.dtype) for k, v in batch.items()
    }
    assert (
        drawn["ids"].min() >= 3
        and drawn["ids"].max() < 50
        and drawn["labels"].min() >= 0
        and drawn["mask"].all()
    )


def test_the_plan_takes_the_measured_step_times(tmp_path):
    """Chapter 01's first run as the 2026-11-28 H200 check measured it: 3.56 ms a step, 880 steps."""
    entry = {
        "kind": "train",
        "chapter": "01_dot_products",
        "cell": 10,
        "name": None,
        "model": {"class": "MatrixFactorization", "parameters": 2625, "trainable": 2625},
        "batch": {"tuple": [{"shape": [4096], "dtype": "int64", "min": 0, "max": 942}]},
        "loss": "fromscratch.models.recommender.rating_loss",
        "config": {"precision": "fp32", "minutes": None},
        "steps": 880,
    }
    (tmp_path / "r.jsonl").write_text(json.dumps(entry) + "\n")
    lines, summary = report.plan(tmp_path / "r.jsonl")
    [row] = [line for line in lines if line.startswith("| 01 MatrixFactorization")]
    assert row.split(" | ")[4:7] == [
        "3.6",
        "30 %",
        "0.1",
    ]  # ms a step, GPU busy, minutes: 3.56 x 880 / 60,000
    assert "0 runs not measured" in summary and "H200 2026-11-28" in summary


@pytest.mark.slow
def test_two_chapters_run_from_their_pack_alone(tmp_path, mirror):
    """The pack holds all two chapters read: run from it on the CPU, with no mirror and no network."""
    env = {**os.environ, "FROMSCRATCH_MIRROR": str(mirror)}
    said = run(
        "notebooks.py", "--pack", str(tmp_path / "pack.tgz"), "--no-wheels", "--chapters", "01", "07", env=env
    )
    assert "pack: " in said.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("FROMSCRATCH_")}
    lines = run(
        "notebooks.py", "--from", str(tmp_path / "pack.tgz"), "--quick", "--chapters", "01", "07", env=env
    )
    assert lines.stdout.strip().splitlines()[-1] == "GPU notebooks: 2 chapters, 0 failed", lines.stdout


def test_the_pack_carries_smaller_copies_that_unpack_to_working_files(tmp_path):
    """A safetensors file at 8 bits a weight (fp32 again on unpacking, listed in SHA256SUMS), MNIST's
    training file cut to its first 10,000 digits (its header says so)."""
    import gzip

    import numpy as np
    from safetensors.torch import load_file, save_file

    import notebooks

    (tmp_path / "mirror").mkdir()
    weights = {"w": torch.randn(6, 5), "b": torch.randn(5)}
    save_file(weights, tmp_path / "model.safetensors")
    q8 = notebooks._slim(tmp_path / "model.safetensors", tmp_path / "mirror" / "model.safetensors")
    assert q8.name == "model.safetensors.q8"
    (tmp_path / "mirror" / "SHA256SUMS").write_text("")
    notebooks._unslim(tmp_path / "mirror")
    again = load_file(tmp_path / "mirror" / "model.safetensors")
    torch.testing.assert_close(again["w"], weights["w"], atol=weights["w"].abs().max().item() / 127, rtol=0)
    assert torch.equal(again["b"], weights["b"])
    assert (tmp_path / "mirror" / "SHA256SUMS").read_text().endswith("  model.safetensors\n")

    digits = np.arange(12_000 * 4, dtype=np.uint8).reshape(12_000, 2, 2)
    header = np.array([0x803, 12_000, 2, 2], dtype=">i4").tobytes()
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(header + digits.tobytes()))
    cut = notebooks._slim(
        tmp_path / "train-images-idx3-ubyte.gz", tmp_path / "mirror" / "train-images-idx3-ubyte.gz"
    )
    from fromscratch.data.mnist import read_idx

    assert np.array_equal(read_idx(cut), digits[:10_000])
