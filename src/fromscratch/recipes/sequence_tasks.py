"""Chapter 08's three experiments, shared by the notebook and ``benchmarks/sequence_models.py``.

- :func:`step_time_table`: seconds per training step of each model at each length ``t`` (8.1), with
  :func:`fromscratch.utils.loglog_slope` (how the time grows: ``time ~ t**slope``) and :func:`crossover` (the first
  length at which one model gets slower than another);
- :func:`distance_sweep`: test accuracy on :func:`~fromscratch.data.synthetic.match_task` for each
  model at each distance ``d`` (8.2);
- :func:`race`: every model trained for the same wall-clock seconds on the same batches, with its
  learning curve against time (8.4).

Each takes the models as a dict of :class:`~fromscratch.models.SequenceClassifierConfig` s (from
:meth:`SequenceRun.configs <fromscratch.profiles.sequence.SequenceRun.configs>`) and returns plain
numbers, so that a table or a plot (``fromscratch.viz``) can be made from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial

import torch
from torch import nn
from tqdm.auto import tqdm

from fromscratch.data.synthetic import match_task, task_batches
from fromscratch.models.sequence_classifier import SequenceClassifier, SequenceClassifierConfig
from fromscratch.recipes.sequence_compare import random_batch, step_seconds, train_for_seconds
from fromscratch.training import History, TrainConfig, train
from fromscratch.training.losses import classification_loss
from fromscratch.utils import count_parameters, evaluating


def step_time_table(
    configs: dict[str, SequenceClassifierConfig],
    lengths: Iterable[int],
    *,
    batch: int,
    repeats: int,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> dict[str, list[float]]:
    """Median seconds of one training step (forward, backward, update) per model and length.

    ``{name: [seconds at lengths[0], ...]}``: random tokens ``(batch, t)``; each model is built anew
    (seed 0) at each ``t`` with ``max_len`` raised to ``t``.
    """
    lengths = list(lengths)
    table: dict[str, list[float]] = {name: [] for name in configs}
    jobs = [(t, name) for t in lengths for name in configs]
    for t, name in tqdm(jobs, desc="timing", disable=not progress):
        config = configs[name]
        torch.manual_seed(0)
        model = SequenceClassifier(config, max_len=max(t, config.max_len))
        tokens = random_batch(batch, t, config.vocab_size, num_classes=config.num_classes)
        table[name].append(step_seconds(model, tokens, repeats=repeats, device=device))
    return table


def crossover(lengths: Iterable[int], slower: Iterable[float], faster: Iterable[float]) -> int | None:
    """The first length at which ``slower``'s seconds exceed ``faster``'s (None: never)."""
    for t, a, b in zip(lengths, slower, faster, strict=True):
        if a > b:
            return t
    return None


def _accuracy(model: nn.Module, task: dict[str, torch.Tensor], device: torch.device | str) -> float:
    with evaluating(model), torch.no_grad():
        logits = model(
            task["tokens"].to(device), padding_mask=task["padding_mask"].to(device)
        )  # (n, classes)
    return (logits.argmax(-1).cpu() == task["labels"]).float().mean().item()


@dataclass(frozen=True)
class TaskSize:
    """How to train and test each model on one distance of the match task."""

    length: int  # t: tokens per sequence
    vocab: int  # token ids 1..vocab-1
    symbols: int | None  # the compared pair from ids 1..symbols, the filler from the rest (None: all alike)
    train: int  # training sequences
    test: int  # held-out sequences
    steps: int  # optimiser steps
    batch: int  # sequences per step
    lr: float  # peak learning rate (10 % warm-up, linear decay)


def _shuffled(
    task: dict[str, torch.Tensor], batch: int, order: torch.Generator
) -> Iterator[dict[str, torch.Tensor]]:
    return iter(task_batches(task, batch, generator=order))


def distance_sweep(
    configs: dict[str, SequenceClassifierConfig],
    distances: Iterable[int],
    size: TaskSize,
    *,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> dict[str, list[float]]:
    """Test accuracy ``{name: [accuracy at distances[0], ...]}`` on the match task: is the token at
    position 0 the same as the one ``d`` positions later? Every model sees the same data (seeded by
    ``d``) and is trained from seed 0 for ``size.steps`` steps; 0.5 is chance."""
    distances = list(distances)
    table: dict[str, list[float]] = {name: [] for name in configs}
    jobs = [(d, name) for d in distances for name in configs]
    tasks = {}
    for d, name in tqdm(jobs, desc="match task", disable=not progress):
        if d not in tasks:
            tasks[d] = (
                match_task(size.train, size.length, d, vocab_size=size.vocab, symbols=size.symbols, seed=d),
                match_task(
                    size.test, size.length, d, vocab_size=size.vocab, symbols=size.symbols, seed=10_000 + d
                ),
            )
        training, test = tasks[d]
        torch.manual_seed(0)
        model = SequenceClassifier(configs[name])
        order = torch.Generator().manual_seed(0)  # the same batches for every model
        config = TrainConfig(steps=size.steps, lr=size.lr, warmup_steps=size.steps // 10, progress=False)
        train(
            model, partial(_shuffled, training, size.batch, order), classification_loss, config, device=device
        )
        table[name].append(_accuracy(model, test, device))
    return table


@dataclass
class RaceResult:
    """One model's run in :func:`race`."""

    parameters: int  # trainable parameters
    steps: int  # optimiser steps taken in the time budget
    seconds: float  # training seconds actually spent (evaluations left out)
    history: History  # rows with "loss" per step; rows with "seconds" and the metrics per evaluation
    test_accuracy: float  # on the test batches after training

    def curve(self, metric: str = "accuracy") -> tuple[list[float], list[float]]:
        """``(seconds, metric)`` at each evaluation: the learning curve against wall-clock time."""
        rows = [r for r in self.history.rows if "seconds" in r]
        return [r["seconds"] for r in rows], [r[metric] for r in rows]


def race(
    configs: dict[str, SequenceClassifierConfig],
    make_batches: Callable[[], Iterable],
    *,
    seconds: float,
    lr: float,
    evaluate: Callable[[nn.Module], dict[str, float]],
    test: Callable[[nn.Module], float],
    evals: int,
    warmup_steps: int = 0,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> dict[str, RaceResult]:
    """Train each model (seed 0) for ``seconds`` of wall-clock time on ``make_batches()`` with
    :func:`~fromscratch.recipes.sequence_compare.train_for_seconds`; ``evaluate(model)`` (e.g. validation
    accuracy) gives the learning curve, ``test(model)`` the final accuracy. ``make_batches`` is called
    once per model, so each can get the same batches in the same order (e.g. a seeded generator)."""
    results = {}
    for name, config in configs.items():
        torch.manual_seed(0)
        model = SequenceClassifier(config)
        history = train_for_seconds(
            model, make_batches(), seconds, lr=lr, evaluate=evaluate, evals=evals, warmup_steps=warmup_steps,
            device=device, progress=progress,
        )  # fmt: skip
        last = history.rows[-1]
        results[name] = RaceResult(
            parameters=count_parameters(model),
            steps=int(max(r["step"] for r in history.rows)),
            seconds=last.get("seconds", math.nan),
            history=history,
            test_accuracy=test(model),
        )
    return results


__all__ = ["RaceResult", "TaskSize", "crossover", "distance_sweep", "race", "step_time_table"]
