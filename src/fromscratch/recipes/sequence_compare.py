"""Comparing the four sequence models fairly: one parameter budget, one clock (chapter 08).

Three helpers make the chapter's comparisons honest:

- :func:`budget_configs`: the four :class:`~fromscratch.models.SequenceClassifierConfig` s (bag, rnn,
  cnn, transformer) with the recurrent and convolutional ``hidden`` widths sized so that each model
  has as many parameters as the transformer (the bag cannot be sized: it has only its embedding);
- :func:`step_seconds`: the time of one training step (forward, backward, optimiser) on one batch;
- :func:`train_for_seconds`: trains with the course's one loop (:func:`fromscratch.training.train`)
  for about a given number of seconds, and records the training seconds spent at each evaluation,
  so learning curves can be drawn against wall-clock time rather than steps.

Shape legend: ``b`` batch, ``t`` length.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

import torch
from torch import Tensor, nn

from fromscratch.metrics.paths import ENCODERS
from fromscratch.models.sequence_classifier import (
    SequenceClassifier,
    SequenceClassifierConfig,
    hidden_for_budget,
)
from fromscratch.training import History, TrainConfig, to_device, train
from fromscratch.training.losses import classification_loss
from fromscratch.utils import count_parameters, time_call


def budget_configs(
    transformer: SequenceClassifierConfig,
    *,
    rnn: dict | None = None,
    cnn: dict | None = None,
    encoders: Iterable[str] = ENCODERS,
) -> dict[str, SequenceClassifierConfig]:
    """One config per encoder in ``encoders``, all at the parameter count of ``transformer``.

    ``transformer``: the transformer's config (its ``encoder`` field is ignored); ``rnn`` / ``cnn``:
    fields that replace the transformer's for those encoders (e.g. ``{"depth": 1, "cell": "gru"}``,
    ``{"depth": 4, "kernel": 3}``), before their ``hidden`` width is sized to the budget with
    :func:`~fromscratch.models.hidden_for_budget`. The bag keeps only the embedding and the head.
    """
    transformer = replace(transformer, encoder="transformer")
    with torch.device("meta"):  # shapes only: count without allocating
        budget = count_parameters(SequenceClassifier(transformer))
    configs = {}
    for encoder in encoders:
        if encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {', '.join(ENCODERS)}; got {encoder!r}.")
        if encoder in ("rnn", "cnn"):
            fields = dict((rnn if encoder == "rnn" else cnn) or {})
            config = replace(transformer, encoder=encoder, **fields)
            configs[encoder] = replace(config, hidden=hidden_for_budget(budget, config))
        else:
            configs[encoder] = replace(transformer, encoder=encoder)
    return configs


def _sgd_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict[str, Tensor]) -> None:
    optimizer.zero_grad(set_to_none=True)
    classification_loss(model, batch).backward()
    optimizer.step()


def step_seconds(
    model: nn.Module, batch: dict[str, Tensor], *, repeats: int = 3, device: torch.device | str = "cpu"
) -> float:
    """Median seconds of one training step of ``model`` on ``batch``: forward, backward, AdamW update.

    ``batch``: ``tokens (b, t)``, ``padding_mask (b, t)``, ``labels (b,)``. One untimed step comes first
    (memory, kernel choice). The model's weights change (it is trained on the batch); use a fresh one.
    """
    model.to(device).train()
    batch = to_device(batch, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return time_call(lambda: _sgd_step(model, optimizer, batch), repeats=repeats, statistic="median")


def random_batch(
    b: int, t: int, vocab_size: int, *, num_classes: int = 2, seed: int = 0
) -> dict[str, Tensor]:
    """A batch of random tokens for timing: ``tokens (b, t)`` in ``1..vocab_size-1``, every position
    real (``padding_mask (b, t)`` all True), random ``labels (b,)``."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, vocab_size, (b, t), generator=generator)  # (b, t)
    labels = torch.randint(0, num_classes, (b,), generator=generator)  # (b,)
    return {"tokens": tokens, "padding_mask": torch.ones_like(tokens, dtype=torch.bool), "labels": labels}


def _seconds_per_step(model: nn.Module, batches: Iterable, steps: int, device: torch.device | str) -> float:
    """Mean seconds of a training step over the first ``steps`` batches (after one untimed step), on a
    fresh copy of ``model`` built from its config, so ``model`` itself is left untrained."""
    if steps < 1:
        raise ValueError(f"calibration_steps must be at least 1; got {steps}.")
    clone = (
        type(model)(model.config).to(device).train() if hasattr(model, "config") else model.to(device).train()
    )
    optimizer = torch.optim.AdamW(clone.parameters(), lr=1e-4)
    iterator = iter(batches)
    taken = [to_device(batch, device) for batch, _ in zip(iterator, range(steps + 1), strict=False)]
    _sgd_step(clone, optimizer, taken[0])  # warm-up
    timed = taken[1:] or taken  # a single batch: time it again
    seconds = [
        time_call(lambda b=batch: _sgd_step(clone, optimizer, b), repeats=1, warmup=0) for batch in timed
    ]
    return sum(seconds) / len(seconds)


def train_for_seconds(
    model: nn.Module,
    batches: Iterable,
    seconds: float,
    *,
    lr: float,
    evaluate: Callable[[nn.Module], dict[str, float]],
    evals: int = 5,
    warmup_steps: int = 0,
    weight_decay: float = 0.0,
    calibration_steps: int = 3,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> History:
    """Train ``model`` with :func:`~fromscratch.training.train` for about ``seconds`` of training time.

    The number of steps is set beforehand from the measured time of ``calibration_steps`` steps on a
    copy of the model (so the learning-rate schedule still decays to 0 at the end). ``evaluate(model)``
    runs ``evals`` times, evenly spaced; each evaluation row of the history also holds ``"seconds"``,
    the training time spent so far (evaluation time left out), and ``"step"``. Returns the history.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive; got {seconds}.")
    if evals < 1:
        raise ValueError(f"evals must be at least 1; got {evals}.")
    per_step = _seconds_per_step(model, batches, calibration_steps, device)
    steps = max(evals, int(seconds / per_step))
    spent = {"evaluating": 0.0}

    def timed_evaluate(m: nn.Module) -> dict[str, float]:
        began = time.perf_counter()
        metrics = evaluate(m)
        elapsed = began - start - spent["evaluating"]  # training time so far
        spent["evaluating"] += time.perf_counter() - began
        return {**metrics, "seconds": elapsed}

    config = TrainConfig(
        steps=steps,
        lr=lr,
        warmup_steps=min(warmup_steps, steps // 10),
        weight_decay=weight_decay,
        eval_every=max(1, steps // evals),
        progress=progress,
    )
    start = time.perf_counter()  # read by timed_evaluate
    return train(model, batches, classification_loss, config, device=device, evaluate=timed_evaluate)


__all__ = ["budget_configs", "random_batch", "step_seconds", "train_for_seconds"]
