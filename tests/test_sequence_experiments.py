"""Chapter 08's fair comparisons: one parameter budget, one clock, the experiments' parts at toy size."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
import torch

from fromscratch.chapters import PROFILE_NAMES, get_profile
from fromscratch.chapters.ch08_design_considerations.pipeline import crossover, step_time_table, task_accuracy
from fromscratch.chapters.ch08_design_considerations.step_times import random_batch
from fromscratch.data.synthetic import MatchData
from fromscratch.models import SequenceClassifier, SequenceClassifierConfig, budget_configs
from fromscratch.training import TrainConfig, time_step, train
from fromscratch.training.losses import classification_loss
from fromscratch.utils import count_parameters, loglog_slope

TINY = SequenceClassifierConfig(vocab_size=12, emb=16, heads=2, depth=1, context=16)


def test_budget_configs_give_the_rnn_and_cnn_the_transformers_parameter_count():
    configs = budget_configs(TINY, rnn=replace(TINY, depth=1), cnn=replace(TINY, depth=3, kernel=5))
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
        run = get_profile(name).ch08
        configs = run.configs(vocab_size=run.task.vocab, context=run.task.length)
        with torch.device("meta"):
            counts = {k: count_parameters(SequenceClassifier(c)) for k, c in configs.items()}
        for encoder in ("rnn", "cnn"):
            assert abs(counts[encoder] / counts["transformer"] - 1) < 0.05, (name, counts)
        assert all(d < run.task.length for d in run.task_distances), name
        assert configs["rnn"].vocab_size == run.task.vocab and configs["cnn"].context == run.task.length
        assert run.transformer.vocab_size == run.imdb_vocab_words + 3  # the IMDb models: words + specials


def test_every_run_field_is_documented():
    import inspect

    from fromscratch.chapters.ch08_design_considerations import profile as sequence

    source = inspect.getsource(sequence.SequenceRun)
    for field in fields(sequence.SequenceRun):
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{field.name}:"))
        assert "#" in line, f"SequenceRun.{field.name} has no comment"


def test_a_random_batch_times_a_training_step():
    model = SequenceClassifier(TINY)
    before = [p.detach().clone() for p in model.parameters()]
    batch = random_batch(3, 10, TINY.vocab_size)
    assert batch["tokens"].shape == (3, 10) and batch["padding_mask"].all() and batch["labels"].shape == (3,)
    assert 0 < time_step(model, batch, classification_loss, repeats=2) < 10
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))  # it trained


def test_step_time_table_and_its_slopes():
    configs = budget_configs(TINY, encoders=["rnn", "transformer"])
    table = step_time_table(configs, [8, 32], batch=2, repeats=1, progress=False)
    assert set(table) == {"rnn", "transformer"} and all(len(v) == 2 and min(v) > 0 for v in table.values())
    lengths = [64, 128, 256, 512]
    assert loglog_slope(lengths, [t**2 * 1e-6 for t in lengths]) == pytest.approx(2.0)
    assert loglog_slope(lengths, [1.0, 1.0, 2.0, 4.0], last=3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least two points"):
        loglog_slope([64], [1.0])
    assert crossover(lengths, [1, 2, 5, 9], [3, 3, 3, 3]) == 256
    assert crossover(lengths, [1, 1, 1, 1], [3, 3, 3, 3]) is None
    assert crossover(lengths, [5, 1, 5, 5], [3, 3, 3, 3]) == 256  # slower at 64, then again from 256 on
    assert crossover(lengths, [5, 5, 5, 1], [3, 3, 3, 3]) is None  # not at the longest


def test_match_data_gives_every_model_the_same_sequences_and_batches():
    data = MatchData(length=16, vocab=6, symbols=2, train_size=64, test_size=32, batch=16)
    (training, test), (again, _) = data.split(15), data.split(15)
    assert torch.equal(training["tokens"], again["tokens"]) and test["tokens"].shape == (32, 16)
    assert not torch.equal(training["tokens"][:32], test["tokens"])  # a separate, seeded test set
    first, second = data.batches(training), data.batches(training)  # one per model
    epoch = [b["index"] for b in first()]
    assert len(epoch) == 4 and all(torch.equal(a, b["index"]) for a, b in zip(epoch, second(), strict=True))
    assert not all(torch.equal(a, b["index"]) for a, b in zip(epoch, first(), strict=True))  # a new order


def test_a_trained_model_beats_chance_on_a_short_distance():
    data = MatchData(length=8, vocab=8, symbols=2, train_size=512, test_size=256, batch=32)
    training, test = data.split(2)
    configs = budget_configs(replace(TINY, vocab_size=8, context=8), encoders=["transformer"])
    torch.manual_seed(0)
    model = SequenceClassifier(configs["transformer"])
    chance = task_accuracy(model, test)
    config = TrainConfig(steps=150, lr=1e-2, warmup_steps=15, progress=False)
    train(model, data.batches(training), classification_loss, config)
    assert 0 <= chance <= 1 and task_accuracy(model, test) > 0.8


def _evaluate(task):
    def evaluate(model):
        return {"accuracy": task_accuracy(model, task)}

    return evaluate


def test_a_time_budget_stops_every_model_on_the_same_clock():
    data = MatchData(length=16, vocab=6, symbols=None, train_size=128, test_size=64, batch=16)
    training, test = data.split(3)
    config = TrainConfig(minutes=0.3 / 60, lr=1e-2, warmup_steps=2, eval_every=3, progress=False)
    steps = {}
    for name, model_config in budget_configs(TINY, encoders=["bag", "transformer"]).items():
        torch.manual_seed(0)
        model = SequenceClassifier(model_config)
        history = train(model, data.batches(training), classification_loss, config, evaluate=_evaluate(test))
        seconds, accuracy = history.series("accuracy", x="seconds")  # one point per evaluation
        assert len(seconds) >= 2 and seconds == sorted(seconds) and all(0 <= a <= 1 for a in accuracy)
        assert 0.3 <= seconds[-1] < 0.3 + 1.0, name  # the budget, overshot by at most the last step
        steps[name] = history.series("loss")[0][-1]
    assert steps["bag"] > steps["transformer"]  # cheaper steps: more of them in the same seconds


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
    slow = count_nonlinearities(fast.encoder, tokens, attention=[])  # the written-out softmax
    assert count_nonlinearities(fast.encoder, tokens) == slow == {"softmax": 3, "relu": 3, "layer norm": 6}
