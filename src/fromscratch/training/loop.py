"""The one training loop of the course (chapters 01, 06, 07 and later).

``train(model, batches, loss_fn, config, device=...)`` runs AdamW with a linear warm-up and a linear
decay to zero at the end of the run (steps, epochs or minutes: :mod:`fromscratch.training.schedule`),
mixed precision where it helps (``TrainConfig.precision``: :mod:`fromscratch.training.precision`),
gradient clipping and accumulation, a progress bar with the live loss, evaluations and checkpoints.
Its body is the plain loop (zero the gradients, forward, backward, step); the rest are named steps:

- :func:`_place`: inside a ``torchrun`` job (chapter 12) the model is wrapped for data parallelism;
  only rank 0 shows a bar, evaluates and writes checkpoints, and the loss shown is the mean over ranks
  (each rank reads its own shard, :func:`fromscratch.training.distributed.shard`);
- :func:`_check_memory`: on a GPU, does a step on the longest batch fit the memory still free?
- :class:`~fromscratch.training.resume.RunState`: what the run changes; ``resume=True`` continues an
  interrupted run exactly where its last checkpoint left it, its place in the data included;
- :func:`_update`: the optimiser step through the loss scaler; under fp16 an inf or NaN loss skips
  the step (:mod:`fromscratch.training.skipping`), in fp32 and bf16 it ends the run at once.

A long run is cached by naming its checkpoint from everything that decides it
(:func:`~fromscratch.training.checkpoints.run_checkpoint`: a file under ``$FROMSCRATCH_DATA/checkpoints/``,
written atomically) and resuming it; a finished run then returns at once, its weights restored::

    file = run_checkpoint("07_generator", size.model, size.train, {"seed": 0})
    history = train(model, batches, loss_fn, replace(size.train, checkpoint=file, resume=True))
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

import fromscratch.training.distributed as distributed
from fromscratch.training.batches import probe_batch, to_device
from fromscratch.training.checkpoints import random_state_kept, save_checkpoint
from fromscratch.training.fits import check_run
from fromscratch.training.history import History
from fromscratch.training.precision import Precision, choose_precision
from fromscratch.training.resume import Batches, RunState
from fromscratch.training.schedule import Schedule
from fromscratch.utils import evaluating


@dataclass
class TrainConfig:
    """How long and how to train: ``steps`` (optimiser steps), ``epochs`` (passes over the data) or
    ``minutes`` (a time budget; with steps or epochs too, the run ends at whichever comes first)."""

    steps: int | None = None  # optimiser steps; wins over epochs
    epochs: float | None = None  # passes over `batches` (needs len(batches))
    minutes: float | None = None  # time spent in training steps; the lr decay reaches 0 exactly then
    lr: float = 1e-3  # peak learning rate, reached after the warm-up
    warmup_steps: int = 0  # linear warm-up from 0 to lr
    decay: bool = True  # linear decay from lr to 0 at the last step (False: constant after warm-up)
    schedule: str = "linear"  # the decay's shape: "linear" or "cosine" (half a cosine wave to 0; chapter 14)
    weight_decay: float = 0.0  # AdamW's decoupled weight decay
    betas: tuple[float, float] = (0.9, 0.999)
    grad_clip: float | None = 1.0  # clip the gradient norm to this (None: no clipping)
    accumulate: int = 1  # batches per optimiser step (gradient accumulation)
    precision: str = "auto"  # the one switch: "auto", "best", "bf16", "fp16" or "fp32" (training.precision)
    eval_every: int | None = None  # steps between evaluations (None: only at the end)
    checkpoint: str | Path | None = None  # file for atomic checkpoints: run_checkpoint(...) (None: none)
    checkpoint_every: int | None = None  # steps between checkpoints (None: at evaluations and the end)
    resume: bool = False  # continue from `checkpoint` if it exists
    progress: bool = True  # show a tqdm progress bar


def train(
    model: nn.Module,
    batches: Batches,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    config: TrainConfig,
    *,
    device: torch.device | str = "cpu",
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
) -> History:
    """Train ``model`` in place and return its :class:`History`.

    batches: an iterable of batches (a ``DataLoader``, a list), or a function returning a fresh
        iterator; it is iterated again whenever it runs out. Each batch is moved to ``device``.
    loss_fn: ``loss_fn(model, batch)`` returns the scalar loss of one batch.
    evaluate: ``evaluate(model)`` returns metrics, e.g. ``{"accuracy": 0.87}``; it runs in eval mode
        without gradients every ``config.eval_every`` steps and at the end.
    """
    device = torch.device(device)
    net = _place(model, device)  # what loss_fn sees: the model, or its DDP wrapper under torchrun
    schedule = _schedule(config, batches)  # warm-up, then decay to 0 at the run's last step or second
    optimizer, scheduler = _optimizer(model, config, schedule)
    precision = choose_precision(device, config.precision)  # autocast dtype; a loss scaler exactly for fp16
    run = RunState(model, optimizer, scheduler, schedule, precision.grad_scaler(device), batches)
    run.start(config.checkpoint if config.resume else None)  # or go on from the checkpoint, if it exists
    if device.type == "cuda" and run.step == 0 and not isinstance(batches, Iterator):
        _check_memory(model, loss_fn, batches, precision, device)  # say now if a step won't fit
    model.train()
    with _Progress(run, config) as progress:
        while not schedule.finished(run.step):
            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = 0.0
            for micro in range(config.accumulate):
                batch = next(run.data)
                with distributed.no_sync(net, micro < config.accumulate - 1):  # all-reduce after the last
                    with precision.autocast(device):  # the forward pass only
                        part = loss_fn(net, to_device(batch, device)) / config.accumulate
                    run.scaler.scale(part).backward()
                loss += part.item()
            loss = distributed.mean_over_ranks(loss)
            _update(run, loss, config.grad_clip)
            run.history.rows.append({"step": run.step + 1, "loss": loss, "lr": scheduler.get_last_lr()[0]})
            seconds = time.perf_counter() - started
            schedule.elapsed += seconds
            _next_learning_rate(scheduler)
            run.step += 1
            progress.show(loss, seconds)
            if run.skipped.given_up:
                raise run.skipped.error(loss, run.step, lr=config.lr, warmup_steps=config.warmup_steps)
            eval_due = _every(config.eval_every, run.step) and not schedule.finished(run.step)
            if eval_due:
                _evaluate(run, evaluate, precision, device)
            if _every(config.checkpoint_every, run.step) or (config.checkpoint_every is None and eval_due):
                _save(run, config)
    if not _evaluated_last(run):
        _evaluate(run, evaluate, precision, device)
    _save(run, config)
    distributed.barrier()  # no rank returns (and reads the checkpoint) before rank 0 has written it
    run.history.skipped = run.skipped.counts()
    return run.history


def _place(model: nn.Module, device: torch.device) -> nn.Module:
    """Move ``model`` to ``device``. Inside a ``torchrun`` job, check that every rank built the same
    model and wrap it in ``DistributedDataParallel`` (gradients all-reduced in the backward pass)."""
    model.to(device)
    if not distributed.is_distributed():
        return model
    distributed.check_same_model(model)
    return distributed.wrap(model, device)


def _schedule(config: TrainConfig, batches: Batches) -> Schedule:
    """The learning-rate schedule: warm-up, then decay to 0 at the run's last step or second."""
    if config.minutes is not None and config.minutes <= 0:
        raise ValueError(f"TrainConfig(minutes={config.minutes}): give a positive time budget.")
    if config.minutes is not None and distributed.is_distributed():  # ranks would stop at different steps
        raise ValueError(
            "TrainConfig(minutes=...) is not for torchrun jobs; give steps=... or epochs=... instead."
        )
    seconds = None if config.minutes is None else 60 * config.minutes
    return Schedule(
        config.warmup_steps, _total_steps(config, batches), seconds, config.decay, config.schedule
    )


def _total_steps(config: TrainConfig, batches: Batches) -> int | None:
    """The run's optimiser steps: ``steps``, or ``epochs`` passes over ``batches``; None: a time budget."""
    if config.steps is not None:
        return config.steps
    if config.epochs is None:
        if config.minutes is not None:
            return None  # bounded by time only
        raise ValueError(
            "Say how long to train: TrainConfig(steps=...), TrainConfig(epochs=...) "
            "or TrainConfig(minutes=...)."
        )
    try:
        per_epoch = len(batches)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            "TrainConfig(epochs=...) needs batches with a length (a DataLoader or a list); "
            "for an endless stream of batches, give steps=... instead."
        ) from None
    return max(1, math.ceil(config.epochs * per_epoch / config.accumulate))


def _optimizer(
    model: nn.Module, config: TrainConfig, schedule: Schedule
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW over the trainable parameters (weight decay on the matrices, none on biases and norms),
    its learning rate ``config.lr`` times ``schedule``."""
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.lr, betas=config.betas)
    # a lambda, not the object itself: LambdaLR would otherwise store the schedule's state in its own
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: schedule(s))


def _check_memory(model: nn.Module, loss_fn: Callable, batches: Batches, chosen: Precision, device) -> None:
    """Say before the first step if one will not fit the GPU: :func:`check_run` on the longest batch
    :func:`probe_batch` finds. The look at the data and the trial pass's dropout leave every random
    generator as it was, so the run is the same with the check as without it."""
    with random_state_kept(batches):
        batch, which = probe_batch(batches)
        check_run(
            model, loss_fn, to_device(batch, device), chosen, device, name=f"this training run ({which})"
        )


def _update(run: RunState, loss: float, grad_clip: float | None) -> None:
    """The optimiser step, through the loss scaler (fp16; a pass-through otherwise), after clipping the
    gradients' norm. Under fp16 an inf or NaN loss skips it and halves the scale instead."""
    if run.skipped.overflowed(loss):
        run.skipped.back_off()
    else:
        if grad_clip is not None:
            run.scaler.unscale_(run.optimizer)
            nn.utils.clip_grad_norm_(run.model.parameters(), grad_clip)
        run.scaler.step(run.optimizer)  # skipped by the scaler itself if the gradients hold an inf or NaN
        run.scaler.update()
    run.skipped.count(loss)


def _next_learning_rate(scheduler: torch.optim.lr_scheduler.LRScheduler) -> None:
    """The next step's learning rate, from the steps and seconds spent so far."""
    with warnings.catch_warnings():  # a step the fp16 scaler skipped (inf gradients) is no mistake
        warnings.filterwarnings("ignore", "Detected call of `lr_scheduler.step\\(\\)`", UserWarning)
        scheduler.step()


def _every(interval: int | None, step: int) -> bool:
    return interval is not None and step % interval == 0  # never for None


def _evaluate(
    run: RunState, evaluate: Callable[[nn.Module], dict[str, float]] | None, chosen: Precision, device
) -> None:
    """``evaluate(model)`` in eval mode without gradients (on rank 0), as a row of the history."""
    if evaluate is None or not distributed.is_main():
        return
    with evaluating(run.model), torch.no_grad(), chosen.autocast(device):
        metrics = evaluate(run.model)
    row = {"step": run.step, "seconds": run.schedule.elapsed}  # training seconds so far, evaluations left out
    run.history.rows.append({**row, **{k: float(v) for k, v in metrics.items()}})


def _evaluated_last(run: RunState) -> bool:
    """True when the last row of the history is an evaluation at the current step."""
    rows = run.history.rows
    return bool(rows) and rows[-1].get("step") == run.step and "loss" not in rows[-1]


def _save(run: RunState, config: TrainConfig) -> None:
    """Write the run's checkpoint (rank 0 only), if the config names a file."""
    if config.checkpoint and distributed.is_main():
        save_checkpoint(config.checkpoint, run.state_dict(config))


class _Progress:
    """The progress bar (rank 0 only): steps, or seconds with a time budget; the smoothed loss, the
    learning rate, and the steps fp16 skipped, if any."""

    TIME_BAR = "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]"

    def __init__(self, run: RunState, config: TrainConfig) -> None:
        self.run, self.smoothed = run, None
        self.by_time = run.schedule.total_steps is None  # the bar counts seconds, not steps
        self.bar = tqdm(
            total=run.schedule.bar_total,
            initial=run.schedule.elapsed if self.by_time else run.step,
            desc="training",
            unit="step",
            disable=not (config.progress and distributed.is_main()),
            bar_format=self.TIME_BAR if self.by_time else None,
        )

    def show(self, loss: float, seconds: float) -> None:
        """Show the step just taken, which lasted ``seconds``."""
        if math.isfinite(loss):  # a skipped step's inf or NaN would stay in the mean for good
            self.smoothed = loss if self.smoothed is None else 0.95 * self.smoothed + 0.05 * loss
        skipped = self.run.skipped.total
        shown = {
            "loss": f"{loss if self.smoothed is None else self.smoothed:.4f}",
            "lr": f"{self.run.history.rows[-1]['lr']:.2e}",
            **({"step": self.run.step} if self.by_time else {}),
            **({"skipped": skipped} if skipped else {}),
        }
        self.bar.set_postfix(shown, refresh=False)
        self.bar.update(min(seconds, self.bar.total - self.bar.n) if self.by_time else 1)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *error: object) -> None:
        self.bar.close()  # also when the run ends with an error


__all__ = ["TrainConfig", "train"]
