"""The record mode of ``train`` (issue 41): what the GPU plan is built from.

``FROMSCRATCH_RECORD=file`` appends one JSON line per ``train`` call;
``FROMSCRATCH_RECORD_ONLY=1`` makes ``train`` record after one step and return.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import next_token_loss
from fromscratch.training.record import describe_batch


class Tied(nn.Module):
    """A tiny language model whose output layer shares the embedding's weights."""

    def __init__(self, vocab: int = 11, emb: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.out = nn.Linear(emb, vocab, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, x):
        return self.out(self.embed(x))


def batches():
    """Three batches of tokens, the second the longest (4 x 9)."""
    g = torch.Generator().manual_seed(0)
    return [torch.randint(0, 11, (b, t), generator=g) for b, t in ((2, 5), (4, 9), (3, 7))]


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def recording(tmp_path, monkeypatch):
    path = tmp_path / "records.jsonl"
    monkeypatch.setenv("FROMSCRATCH_RECORD", str(path))
    monkeypatch.setenv("FROMSCRATCH_CHAPTER", "07_masking_generation")
    monkeypatch.delenv("FROMSCRATCH_RECORD_ONLY", raising=False)
    return path


def test_each_train_call_records_what_it_trained(recording, tmp_path):
    config = TrainConfig(
        steps=6, lr=1e-2, precision="fp32", progress=False, checkpoint=tmp_path / "07_gen-ab12.pt"
    )
    history = train(Tied(), batches(), next_token_loss, config)
    assert len(history.series("loss")[0]) == 6  # recording changes nothing in the run
    [entry] = records(recording)
    assert (
        entry["kind"] == "train" and entry["chapter"] == "07_masking_generation" and entry["name"] == "07_gen"
    )
    assert entry["model"]["class"] == f"{Tied.__module__}.Tied" and entry["model"]["parameters"] == 11 * 8
    assert entry["batch"] == {"shape": [4, 9], "dtype": "int64", "min": 0, "max": 10} or (
        entry["batch"]["shape"] == [4, 9] and entry["batch"]["dtype"] == "int64"
    )
    assert entry["batch_note"] == "the longest of its 3 batches: 4 x 9"
    assert entry["loss"] == "fromscratch.training.losses.next_token_loss"
    assert entry["config"]["steps"] == 6 and entry["steps"] == 6 and entry["steps_timed"] == 6
    assert entry["step_ms"] > 0 and entry["precision"] == "fp32" and entry["device"].startswith("cpu")
    again = torch.load(io.BytesIO(base64.b64decode(entry["model"]["pickle"])), weights_only=False)
    assert again.out.weight is again.embed.weight and again.embed.weight.device.type == "meta"  # no weights
    assert set(entry["model"]["init"]) == {"embed.weight"}  # tied: one tensor


def test_the_evaluations_a_run_plans_are_counted_and_timed(recording):
    config = TrainConfig(steps=6, eval_every=2, progress=False)
    train(Tied(), batches(), next_token_loss, config, evaluate=lambda model: {"x": 1.0})
    [entry] = records(recording)
    assert entry["evaluations"] == 3 and entry["evaluate_s"] >= 0  # at steps 2 and 4, and at the end (6)


def test_record_only_stops_after_one_step_without_a_checkpoint(recording, tmp_path, monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_RECORD_ONLY", "1")
    file = tmp_path / "run.pt"
    config = TrainConfig(epochs=100, eval_every=1, checkpoint=file, progress=False)
    evaluated = []
    history = train(Tied(), batches(), next_token_loss, config, evaluate=lambda m: evaluated.append(1) or {})
    assert len(history.series("loss")[0]) == 1 and not file.exists() and not evaluated
    [entry] = records(recording)
    assert entry["steps"] == 100 * 3 and entry["steps_timed"] == 1  # what the run plans, what was timed


def test_nothing_is_recorded_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("FROMSCRATCH_RECORD", raising=False)
    monkeypatch.setenv("FROMSCRATCH_RECORD_ONLY", "1")  # without a record file: no effect
    history = train(Tied(), batches(), next_token_loss, TrainConfig(steps=3, progress=False))
    assert len(history.series("loss")[0]) == 3
    assert not list(tmp_path.iterdir())


def test_a_batch_is_described_without_its_data():
    mask = torch.tensor([[True, False], [True, True]])
    about = describe_batch({"x": torch.zeros(2, 3), "labels": (torch.tensor([-100, 4]), mask), "n": 7})
    assert about == {
        "dict": {
            "x": {"shape": [2, 3], "dtype": "float32"},
            "labels": {
                "tuple": [
                    {"shape": [2], "dtype": "int64", "min": -100, "max": 4},
                    {"shape": [2, 2], "dtype": "bool", "true": 0.75},
                ]
            },
            "n": {"value": 7},
        }
    }


def test_a_loss_defined_elsewhere_is_named_by_module(recording):
    def local_loss(model, batch):
        return F.cross_entropy(model(batch[:, :-1]).transpose(1, 2), batch[:, 1:])

    train(Tied(), batches(), local_loss, TrainConfig(steps=1, progress=False))
    assert records(recording)[0]["loss"].endswith(
        "test_a_loss_defined_elsewhere_is_named_by_module.<locals>.local_loss"
    )


class Pooled(Tied):
    def __init__(self) -> None:
        super().__init__()
        self.pool = torch.ones(2**19)  # 2 MiB, not a parameter or a buffer


def test_a_big_tensor_attribute_travels_as_its_shape_alone():
    """A dropout's drawn pool (chapter 10's PoolDropout: 32 MiB a layer) is not data to record."""
    from fromscratch.training.record import model_structure

    about = model_structure(Pooled())
    assert len(about["pickle"]) < 2**16
    again = torch.load(io.BytesIO(base64.b64decode(about["pickle"])), weights_only=False)
    assert again.pool.device.type == "meta" and again.pool.shape == (2**19,)
