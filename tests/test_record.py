"""The GPU plan's recorder (``benchmarks/gpu/record.py``): what the plan is built from.

Its wrapper of ``train`` appends one JSON line per call; with ``only=True`` each call trains one step,
records and returns. ``train`` itself records nothing.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import next_token_loss

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks" / "gpu"))
import record  # noqa: E402  (benchmarks/gpu/record.py)
from record import describe_batch, model_structure  # noqa: E402


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
def recording(tmp_path):
    return tmp_path / "records.jsonl"


def recorded(path, *, only=False):
    """``train`` as a chapter's kernel sees it under the recorder."""
    return record.recording(train, path, "07_masking_generation", only=only)


def test_each_train_call_records_what_it_trained(recording, tmp_path):
    config = TrainConfig(
        steps=6, lr=1e-2, precision="fp32", progress=False, checkpoint=tmp_path / "07_gen-ab12.pt"
    )
    torch.manual_seed(0)
    model, alone = Tied(), Tied()
    alone.load_state_dict(model.state_dict())
    history = recorded(recording)(model, batches(), next_token_loss, config)
    torch.manual_seed(0)
    same = train(alone, batches(), next_token_loss, replace(config, checkpoint=None))
    assert history.series("loss") == same.series("loss")  # recording changes nothing in the run
    assert torch.equal(model.embed.weight, alone.embed.weight)  # the step is timed on a copy
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
    assert entry["config"]["steps"] == 6 and entry["steps"] == 6 and entry["steps_timed"] == 3
    assert entry["step_ms"] > 0 and entry["precision"] == "fp32" and entry["device"].startswith("cpu")
    again = torch.load(io.BytesIO(base64.b64decode(entry["model"]["pickle"])), weights_only=False)
    assert again.out.weight is again.embed.weight and again.embed.weight.device.type == "meta"  # no weights
    assert set(entry["model"]["init"]) == {"embed.weight"}  # tied: one tensor


def test_the_evaluations_a_run_plans_are_counted_and_timed(recording):
    config = TrainConfig(steps=6, eval_every=2, progress=False)
    recorded(recording)(Tied(), batches(), next_token_loss, config, evaluate=lambda model: {"x": 1.0})
    [entry] = records(recording)
    assert entry["evaluations"] == 3 and entry["evaluate_s"] >= 0  # at steps 2 and 4, and at the end (6)


def test_record_only_stops_after_one_step_without_a_checkpoint(recording, tmp_path):
    file = tmp_path / "run.pt"
    config = TrainConfig(epochs=100, eval_every=1, checkpoint=file, resume=True, progress=False)
    evaluated = []
    history = recorded(recording, only=True)(
        Tied(), batches(), next_token_loss, config, evaluate=lambda m: evaluated.append(1) or {}
    )
    assert len(history.series("loss")[0]) == 1 and not file.exists() and not evaluated
    [entry] = records(recording)
    assert entry["steps"] == 100 * 3 and entry["steps_timed"] == 1  # what the run plans, what was timed
    assert entry["config"]["epochs"] == 100 and entry["step_ms"] > 0  # the chapter's config is recorded


def test_train_itself_has_no_record_switch(tmp_path, monkeypatch):
    """The old environment switches do nothing: only the recorder's wrapper records."""
    monkeypatch.setenv("FROMSCRATCH_RECORD", str(tmp_path / "records.jsonl"))
    monkeypatch.setenv("FROMSCRATCH_RECORD_ONLY", "1")
    history = train(Tied(), batches(), next_token_loss, TrainConfig(steps=3, progress=False))
    assert len(history.series("loss")[0]) == 3
    assert not list(tmp_path.iterdir())


def test_install_replaces_train_where_the_chapters_find_it(recording, monkeypatch):
    import fromscratch.training.loop

    monkeypatch.setattr(fromscratch.training, "train", fromscratch.training.train)
    monkeypatch.setattr(fromscratch.training.loop, "train", fromscratch.training.loop.train)
    record.install(recording, "07_masking_generation", only=True)
    from fromscratch.training import train as chapters_train  # a chapter's import, after the first cell

    chapters_train(Tied(), batches(), next_token_loss, TrainConfig(steps=5, progress=False))
    assert fromscratch.training.loop.train is chapters_train
    [entry] = records(recording)
    assert entry["chapter"] == "07_masking_generation" and entry["steps"] == 5


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

    recorded(recording)(Tied(), batches(), local_loss, TrainConfig(steps=1, progress=False))
    assert records(recording)[0]["loss"].endswith(
        "test_a_loss_defined_elsewhere_is_named_by_module.<locals>.local_loss"
    )


class Pooled(Tied):
    def __init__(self) -> None:
        super().__init__()
        self.pool = torch.ones(2**19)  # 2 MiB, not a parameter or a buffer


def test_a_big_tensor_attribute_travels_as_its_shape_alone():
    """A dropout's drawn pool (chapter 10's PoolDropout: 32 MiB a layer) is not data to record."""
    about = model_structure(Pooled())
    assert len(about["pickle"]) < 2**16
    again = torch.load(io.BytesIO(base64.b64decode(about["pickle"])), weights_only=False)
    assert again.pool.device.type == "meta" and again.pool.shape == (2**19,)
