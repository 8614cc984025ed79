"""Chapter 08's fair comparisons: one parameter budget, one clock, the three experiments at toy size."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
import torch

from fromscratch.data.synthetic import match_task, task_batches
from fromscratch.models import SequenceClassifier, SequenceClassifierConfig
from fromscratch.profiles import PROFILE_NAMES, get_profile
from fromscratch.recipes.sequence_compare import budget_configs, random_batch, step_seconds, train_for_seconds
from fromscratch.recipes.sequence_tasks import (
    TaskSize,
    crossover,
    distance_sweep,
    race,
    step_time_table,
)
from fromscratch.utils import count_parameters, loglog_slope

TINY = SequenceClassifierConfig(vocab_size=12, emb=16, heads=2, depth=1, max_len=16)


def test_budget_configs_give_the_rnn_and_cnn_the_transformers_parameter_count():
    configs = budget_configs(TINY, rnn={"depth": 1}, cnn={"depth": 3, "kernel": 5})
    assert list(configs) == ["bag", "rnn", "cnn", "transformer"]
    counts = {name: count_parameters(SequenceClassifier(c)) for name, c in configs.items()}
    for name in ("rnn", "cnn"):
        assert abs(counts[name] - counts["transformer"]) / counts["transformer"] < 0.05, counts
    assert counts["bag"] < counts["transformer"]  # nothing to size but the embedding
    assert (configs["cnn"].depth, configs["cnn"].kernel, configs["rnn"].depth) == (3, 5, 1)
    with pytest.raises(ValueError, match="encoder must be one of"):
        budget_configs(TINY, encoders=["lstm"])


def test_profiles_size_the_four_models_alike():
    for name in PROFILE_NAMES:
        run = get_profile(name).sequence
        configs = run.configs(vocab_size=run.task_vocab, max_len=run.task_length)
        with torch.device("meta"):
            counts = {k: count_parameters(SequenceClassifier(c)) for k, c in configs.items()}
        for encoder in ("rnn", "cnn"):
            assert abs(counts[encoder] / counts["transformer"] - 1) < 0.05, (name, counts)
        assert all(d < run.task_length for d in run.task_distances), name
        assert run.task.length == run.task_length and run.imdb_vocab_size == run.imdb_vocab_words + 3


def test_every_run_field_is_documented():
    import inspect

    from fromscratch.profiles import sequence

    source = inspect.getsource(sequence.SequenceRun)
    for field in fields(sequence.SequenceRun):
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{field.name}:"))
        assert "#" in line, f"SequenceRun.{field.name} has no comment"


def test_step_seconds_times_a_training_step():
    model = SequenceClassifier(TINY)
    before = [p.detach().clone() for p in model.parameters()]
    batch = random_batch(3, 10, TINY.vocab_size)
    assert batch["tokens"].shape == (3, 10) and batch["padding_mask"].all() and batch["labels"].shape == (3,)
    assert 0 < step_seconds(model, batch, repeats=2) < 10
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))  # it trained


def test_step_time_table_and_its_slopes():
    configs = budget_configs(TINY, encoders=["rnn", "transformer"])
    table = step_time_table(configs, [8, 32], batch=2, repeats=1, progress=False)
    assert set(table) == {"rnn", "transformer"} and all(len(v) == 2 and min(v) > 0 for v in table.values())
    lengths = [64, 128, 256, 512]
    assert loglog_slope(lengths, [t**2 * 1e-6 for t in lengths]) == pytest.approx(2.0)
    assert loglog_slope(lengths, [1.0, 1.0, 2.0, 4.0], last=3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least two lengths"):
        loglog_slope([64], [1.0])
    assert crossover(lengths, [1, 2, 5, 9], [3, 3, 3, 3]) == 256
    assert crossover(lengths, [1, 1, 1, 1], [3, 3, 3, 3]) is None


def test_distance_sweep_is_deterministic_and_scores_accuracies():
    configs = budget_configs(TINY, cnn={"depth": 1}, encoders=["bag", "cnn"])
    size = TaskSize(length=16, vocab=6, symbols=2, train=64, test=32, steps=3, batch=16, lr=1e-2)
    first = distance_sweep(configs, [2, 15], size, progress=False)
    assert first == distance_sweep(configs, [2, 15], size, progress=False)
    assert set(first) == {"bag", "cnn"} and all(
        len(v) == 2 and all(0 <= a <= 1 for a in v) for v in first.values()
    )


def _evaluate(task):
    def evaluate(model):
        logits = model(task["tokens"], padding_mask=task["padding_mask"])  # (n, 2)
        return {"accuracy": (logits.argmax(-1) == task["labels"]).float().mean().item()}

    return evaluate


def test_train_for_seconds_records_time_at_each_evaluation():
    task = match_task(128, 16, 3, vocab_size=6)
    torch.manual_seed(0)
    model = SequenceClassifier(TINY, encoder="cnn", depth=2)
    history = train_for_seconds(
        model, task_batches(task, 16), 0.5, lr=1e-2, evaluate=_evaluate(task), evals=3, progress=False
    )
    rows = [r for r in history.rows if "seconds" in r]
    assert len(rows) >= 3 and all(0 <= r["accuracy"] <= 1 for r in rows)
    seconds = [r["seconds"] for r in rows]
    assert seconds == sorted(seconds) and seconds[-1] > 0
    with pytest.raises(ValueError, match="seconds must be positive"):
        train_for_seconds(model, task_batches(task, 16), 0, lr=1e-2, evaluate=_evaluate(task))
    with pytest.raises(ValueError, match="calibration_steps"):
        train_for_seconds(
            model, task_batches(task, 16), 1, lr=1e-2, evaluate=_evaluate(task), calibration_steps=0
        )


def test_race_trains_every_model_on_the_same_clock():
    task = match_task(128, 16, 3, vocab_size=6)
    configs = budget_configs(TINY, encoders=["bag", "transformer"])
    results = race(
        configs,
        lambda: task_batches(task, 16, generator=torch.Generator().manual_seed(0)),
        seconds=0.3,
        lr=1e-2,
        evaluate=_evaluate(task),
        test=lambda model: _evaluate(task)(model)["accuracy"],
        evals=2,
        progress=False,
    )
    assert set(results) == {"bag", "transformer"}
    for result in results.values():
        seconds, accuracy = result.curve()
        assert len(seconds) == len(accuracy) >= 2 and result.steps >= 2 and not math.isnan(result.seconds)
        assert 0 <= result.test_accuracy <= 1 and result.parameters > 0


def test_count_nonlinearities_finds_the_blogs_two_per_block():
    from fromscratch.metrics.nonlinear import count_nonlinearities

    tokens = torch.randint(1, 12, (2, 16))
    counts = {
        name: count_nonlinearities(SequenceClassifier(c), tokens) for name, c in budget_configs(TINY).items()
    }
    assert counts["transformer"] == {"softmax": 1, "relu": 1, "layer norm": 2}  # one post-norm block
    assert counts["bag"] == {} and counts["cnn"] == {"relu": 1, "layer norm": 1}
    assert list(counts["rnn"]) == ["gru (sigmoid, tanh at every step)"]
    fast = SequenceClassifier(TINY, depth=3)
    slow = count_nonlinearities(fast.encoder, tokens, return_attention=True)  # the written-out softmax
    assert count_nonlinearities(fast.encoder, tokens) == slow == {"softmax": 3, "relu": 3, "layer norm": 6}
