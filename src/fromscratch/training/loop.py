"""The one training loop of the course (chapters 01, 06, 07 and later).

``train(model, batches, loss_fn, config, device=...)`` runs AdamW with a linear warm-up and a linear
decay to zero at the end of the run (steps, epochs or minutes: :mod:`fromscratch.training.schedule`),
mixed precision where it helps (``TrainConfig.precision``: :mod:`fromscratch.training.precision`),
gradient clipping and accumulation, a progress bar with the live loss, evaluations and checkpoints.
Its body is the plain loop: zero the gradients, forward, backward, step.

Three habits keep a GPU busy. The loss stays on the GPU: the CPU reads it back only every
:data:`READ_EVERY` steps, for the progress bar and the check that it is finite, so it can queue the
next steps while the GPU computes this one (a read-back waits for the GPU to finish everything queued).
AdamW runs as one fused kernel on CUDA. And under fp16 the loss scaler decides on the GPU whether to
skip a step: an inf or NaN loss makes the gradients NaN, the scaler skips every step whose gradients
hold an inf or NaN (it halves its scale instead), and AdamW's own count of steps tells afterwards how
many were skipped. Only :data:`~fromscratch.training.watch.NONFINITE_IN_A_ROW` inf or NaN losses in a
row end an fp16 run; in fp32 and bf16 (no scaler) the first one does, at the next read-back (the error
names its step), and before any checkpoint is written.

Inside a ``torchrun`` job (chapter 12) the model is wrapped for data parallelism; only rank 0 shows a
bar, evaluates and writes checkpoints, and the loss shown is the mean over ranks (each rank reads its
own shard, :func:`fromscratch.training.distributed.shard`). ``resume=True`` continues an interrupted
run exactly where its last checkpoint left it, its place in the data included
(:class:`~fromscratch.training.resume.RunState`). A long run is cached by naming its checkpoint from
everything that decides it (:func:`~fromscratch.training.checkpoints.run_checkpoint`: a file under
``$FROMSCRATCH_DATA/checkpoints/``, written atomically); a finished run then returns at once::

    file = run_checkpoint("07_generator", size.model, size.train, {"seed": 0})
    history = train(model, batches, loss_fn, replace(size.train, checkpoint=file, resume=True))

Does a run fit the GPU? Chapter 12's estimate answers before training
(:func:`fromscratch.training.fits.check_run`); the loop itself only explains an out-of-memory error.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

import fromscratch.training.distributed as distributed
from fromscratch.training.batches import to_device
from fromscratch.training.checkpoints import save_checkpoint
from fromscratch.training.history import History
from fromscratch.training.precision import Precision, choose_precision
from fromscratch.training.resume import Batches, RunState
from fromscratch.training.schedule import Schedule
from fromscratch.training.watch import Progress, Watch, skipped_if_not_finite
from fromscratch.utils import evaluating

READ_EVERY = 10  # steps between read-backs of the loss (and at evaluations, checkpoints and the end)


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
    schedule = _schedule(config, batches)  # warm-up, then decay to 0 at the run's last step or second
    net = _place(model, device)  # what loss_fn sees: the model, or its DDP wrapper under torchrun
    optimizer, scheduler = _optimizer(model, config, schedule, fused=device.type == "cuda")
    precision = choose_precision(device, config.precision)  # autocast dtype; a loss scaler exactly for fp16
    run = RunState(model, optimizer, scheduler, schedule, precision.grad_scaler(device), batches)
    run.start(config.checkpoint if config.resume else None)  # or go on from the checkpoint, if it exists
    watch = Watch(run, config.lr, config.warmup_steps)
    model.train()
    with Progress(run, config.progress) as progress, _out_of_memory_explained(device, run):
        while not schedule.finished(run.step):
            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = 0.0
            for micro in range(config.accumulate):
                batch = to_device(next(run.data), device)
                with distributed.no_sync(net, micro < config.accumulate - 1):  # all-reduce after the last
                    with precision.autocast(device):  # the forward pass only
                        part = loss_fn(net, batch) / config.accumulate
                    run.scaler.scale(skipped_if_not_finite(part, run.scaler)).backward()
                loss = loss + part.detach().float()  # stays on the GPU: nothing waits for it here
            _update(run, config.grad_clip)
            run.history.add(run.step + 1, distributed.mean_over_ranks(loss), scheduler.get_last_lr()[0])
            seconds = time.perf_counter() - started
            schedule.elapsed += seconds
            _next_learning_rate(scheduler)
            run.step += 1
            eval_due = _every(config.eval_every, run.step) and not schedule.finished(run.step)
            save_due = _every(config.checkpoint_every, run.step) or (
                config.checkpoint_every is None and eval_due
            )
            if _every(READ_EVERY, run.step) or eval_due or save_due or schedule.finished(run.step):
                progress.show(watch.read_back(), watch.skipped or 0)  # the one wait for the GPU
            progress.advance(seconds)
            if eval_due:
                _evaluate(run, evaluate, precision, device)
            if save_due:
                _save(run, config)
    watch.read_back()
    if not _evaluated_last(run):
        _evaluate(run, evaluate, precision, device)
    _save(run, config)
    distributed.barrier()  # no rank returns (and reads the checkpoint) before rank 0 has written it
    run.history.skipped = watch.skipped_steps()
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
    return Schedule(config.warmup_steps, total_steps(config, batches), seconds, config.decay, config.schedule)


def total_steps(config: TrainConfig, batches: Batches) -> int | None:
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
    model: nn.Module, config: TrainConfig, schedule: Schedule, *, fused: bool = False
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW over the trainable parameters (weight decay on the matrices, none on biases and norms),
    its learning rate ``config.lr`` times ``schedule``; ``fused``: one kernel for the whole update (CUDA)."""
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.lr, betas=config.betas, fused=fused or None)
    # a lambda, not the object itself: LambdaLR would otherwise store the schedule's state in its own
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: schedule(s))


def _update(run: RunState, grad_clip: float | None) -> None:
    """The optimiser step, through the loss scaler (fp16; a pass-through otherwise), after clipping the
    gradients' norm. Under fp16 the scaler skips a step whose gradients hold an inf or NaN and halves
    its scale; AdamW's count of steps then stays where it was (:mod:`fromscratch.training.watch`)."""
    if grad_clip is not None:
        run.scaler.unscale_(run.optimizer)
        nn.utils.clip_grad_norm_(run.model.parameters(), grad_clip)
    run.scaler.step(run.optimizer)
    run.scaler.update()


def _next_learning_rate(scheduler: torch.optim.lr_scheduler.LRScheduler) -> None:
    """The next step's learning rate, from the steps and seconds spent so far."""
    with warnings.catch_warnings():  # a step the fp16 scaler skipped (inf gradients) is no mistake
        warnings.filterwarnings("ignore", "Detected call of `lr_scheduler.step\\(\\)`", UserWarning)
        scheduler.step()


def _every(interval: int | None, step: int) -> bool:
    return interval is not None and step % interval == 0  # never for None


@contextlib.contextmanager
def _out_of_memory_explained(device: torch.device, run: RunState) -> Iterator[None]:
    """Re-raise a GPU out-of-memory error with what to do about it."""
    try:
        yield
    except torch.OutOfMemoryError as error:
        held = ""
        if device.type == "cuda":
            peak, total = (
                torch.cuda.max_memory_allocated(device),
                torch.cuda.get_device_properties(device).total_memory,
            )
            held = f" (peak {peak / 2**30:.2f} GiB of {total / 2**30:.1f} GiB)"
        raise torch.OutOfMemoryError(
            f"Training step {run.step + 1} did not fit the GPU's memory{held}. Make a step smaller: fewer "
            f"examples or tokens per batch (with TrainConfig(accumulate=k) and batches k times smaller, the "
            f"update stays the same), a 16-bit precision (TrainConfig(precision='auto') on a GPU), or a "
            f"smaller model; fromscratch.training.fits.check_run(model, loss_fn, batch, ...) says what a "
            f"step needs. Restart the kernel before trying again: the failed step's memory may still be held."
        ) from error


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


__all__ = ["READ_EVERY", "TrainConfig", "total_steps", "train"]
