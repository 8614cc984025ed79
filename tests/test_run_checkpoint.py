"""Checkpoint names hashed from everything that changes a run (training.run_checkpoint)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from fromscratch.models import GeneratorConfig
from fromscratch.training import TrainConfig, run_checkpoint, train
from fromscratch.training.losses import next_token_loss

MODEL = GeneratorConfig(emb=16, heads=2, depth=1, context=8)
CONFIG = TrainConfig(steps=3, lr=1e-3, warmup_steps=1)


def test_changing_the_learning_rate_changes_the_file():
    first = run_checkpoint("07_generator", MODEL, CONFIG, {"seed": 0})
    assert first == run_checkpoint("07_generator", MODEL, CONFIG, {"seed": 0})
    assert first != run_checkpoint("07_generator", MODEL, replace(CONFIG, lr=2e-3), {"seed": 0})
    assert first != run_checkpoint("07_generator", replace(MODEL, dropout=0.1), CONFIG, {"seed": 0})
    assert first != run_checkpoint("07_generator", MODEL, CONFIG, {"seed": 1})
    assert first.name.startswith("07_generator-") and first.suffix == ".pt"


def test_fields_that_never_change_the_result_do_not_change_the_file(tmp_path):
    quiet = replace(CONFIG, progress=False, resume=True, checkpoint=tmp_path / "x.pt")
    assert run_checkpoint("run", MODEL, CONFIG) == run_checkpoint("run", MODEL, quiet)


def test_what_cannot_be_hashed_is_refused_with_advice():
    with pytest.raises(TypeError, match="Pass the config"):
        run_checkpoint("run", torch.zeros(2))


def test_a_finished_run_comes_back_through_the_same_call(tmp_path):
    from fromscratch.models import Generator

    tokens = [torch.randint(0, 256, (2, 9), generator=torch.Generator().manual_seed(i)) for i in range(3)]
    config = replace(CONFIG, checkpoint=tmp_path / "run.pt", resume=True, progress=False)
    torch.manual_seed(0)
    trained = Generator(MODEL)
    first = train(trained, tokens, next_token_loss, config)
    torch.manual_seed(1)  # other initial weights: the checkpoint must overwrite them
    again = Generator(MODEL)
    second = train(again, tokens, next_token_loss, config)
    for a, b in zip(trained.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)
    assert first.series("loss") == second.series("loss")
