"""Chapter 08's experiments: what the notebook and ``benchmarks/sequence_models.py`` should not write.

- :func:`step_time_table`: seconds per training step of each model at each length ``t`` (8.1), with
  :func:`crossover` (the length from which one model stays slower than another; the growth
  ``time ~ t**slope`` is :func:`fromscratch.utils.loglog_slope`);
- :func:`task_accuracy`: how many of a match task's sequences a model labels right (8.2; the sequences
  of each distance ``d`` and their order are :class:`~fromscratch.data.synthetic.MatchData`'s).

The training itself is the course's one call, ``train(model, batches, classification_loss, config)``,
written in the chapter: 8.2 trains each model a number of steps, 8.4 (IMDb) a number of minutes.
The models come as a dict of :class:`~fromscratch.models.SequenceClassifierConfig` s (from
:meth:`SequenceRun.configs <fromscratch.chapters.ch08_design_considerations.profile.SequenceRun.configs>`).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn
from tqdm.auto import tqdm

from fromscratch.chapters.ch08_design_considerations.step_times import random_batch
from fromscratch.data.synthetic import Task
from fromscratch.metrics import accuracy
from fromscratch.models.sequence_classifier import SequenceClassifier, SequenceClassifierConfig
from fromscratch.training import time_step
from fromscratch.training.losses import classification_loss
from fromscratch.utils import evaluating


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
    (seed 0) at each ``t`` with ``context`` raised to ``t``.
    """
    lengths = list(lengths)
    table: dict[str, list[float]] = {name: [] for name in configs}
    jobs = [(t, name) for t in lengths for name in configs]
    for t, name in tqdm(jobs, desc="timing", disable=not progress):
        config = configs[name]
        torch.manual_seed(0)
        model = SequenceClassifier(config, context=max(t, config.context))
        tokens = random_batch(batch, t, config.vocab_size, num_classes=config.num_classes)
        table[name].append(time_step(model, tokens, classification_loss, device=device, repeats=repeats))
    return table


def crossover(lengths: Iterable[int], slower: Iterable[float], faster: Iterable[float]) -> int | None:
    """The first length from which ``slower``'s seconds exceed ``faster``'s at every longer length too
    (None: not at the longest). The chapter's sentence reads the whole curve with
    :func:`fromscratch.viz.verdicts.crossing`."""
    since = None
    for t, a, b in zip(lengths, slower, faster, strict=True):
        if a <= b:
            since = None  # faster here: a crossing before this length does not hold
        elif since is None:
            since = t
    return since


def task_accuracy(model: nn.Module, task: Task, *, device: torch.device | str = "cpu") -> float:
    """The fraction of ``task``'s sequences that ``model`` labels right (0.5 is chance), in one batch."""
    with evaluating(model), torch.no_grad():
        logits = model(task["tokens"].to(device), padding_mask=task["padding_mask"].to(device))  # (n, 2)
    return accuracy(logits.cpu(), task["labels"])


__all__ = ["crossover", "step_time_table", "task_accuracy"]
