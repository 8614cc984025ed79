"""The one training loop of the course (chapters 01, 06, 07 and later).

``train(model, batches, loss_fn, config, device=...)`` runs AdamW with a linear warm-up and a linear
decay to zero at the end of the run (a number of steps or epochs, or a time budget in minutes: see
:mod:`fromscratch.training.schedule`), with mixed precision where it helps (``TrainConfig.precision``, see
:mod:`fromscratch.training.precision`), gradient clipping and accumulation, a ``tqdm`` progress bar showing
the live loss, periodic evaluation, and atomic checkpoints. On a GPU it first checks that a step on the
longest batch fits the memory still free (:func:`fromscratch.training.fits.check_run`). Under fp16 an inf
or NaN loss skips the step (:class:`SkippedSteps`); in fp32 and bf16 it ends the run at once.

Inside a ``torchrun`` job (``torch.distributed`` initialised, chapter 12) the same call trains data-
parallel: the model is wrapped in ``DistributedDataParallel`` (gradients all-reduced in the backward
pass), every rank checks that all ranks built the same model, only rank 0 shows a progress bar,
evaluates and writes checkpoints, and the logged loss is the mean over ranks. Each rank must read its
own shard of the data (:func:`fromscratch.training.distributed.shard`).

Checkpoints (:mod:`fromscratch.training.checkpoints`) are written atomically under the data cache
(``$FROMSCRATCH_DATA/checkpoints/``), never next to wherever a chapter happens to run.

``resume=True`` continues an interrupted run exactly where its last checkpoint left it: the model,
optimiser, schedule, scaler, history and random number generators are restored, and the data
iterator is rebuilt from the random state it had when it was created, then advanced past the batches
already used. This is exact for a ``DataLoader`` (its shuffle is drawn when the iterator is made)
and for any iterator that, like ``fromscratch.data.enwik8``, draws its randomness from a
``torch.Generator`` seeded when it is created.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

import fromscratch.training.distributed as distributed
from fromscratch.training.checkpoints import (
    checkpoint_path,
    load_checkpoint,
    random_state_kept,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from fromscratch.training.fits import check_run, probe_batch
from fromscratch.training.history import History
from fromscratch.training.precision import Precision, choose_precision
from fromscratch.training.schedule import Schedule, lr_factor
from fromscratch.utils import evaluating

Batch = Any
NONFINITE_IN_A_ROW = 20  # under fp16, this many inf or NaN losses in a row end the run


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
    checkpoint: str | Path | None = (
        None  # file for atomic checkpoints, e.g. checkpoint_path(...) (None: none)
    )
    checkpoint_every: int | None = None  # steps between checkpoints (None: at evaluations and the end)
    resume: bool = False  # continue from `checkpoint` if it exists
    progress: bool = True  # show a tqdm progress bar


def to_device(batch: Batch, device: torch.device | str) -> Batch:
    """Move every tensor in a (nested) tuple, list or dict to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


class SkippedSteps:
    """The steps fp16 training skipped (chapter 12): shown in the progress bar, kept as ``history.skipped``.

    A GradScaler skips the optimiser step when the scaled gradients hold an inf or NaN, and lowers its
    scale (counted in ``gradients``). Under fp16 an inf or NaN *loss* is most often the same passing
    overflow, in the forward pass: that step is skipped the same way (``loss``), and only ``limit`` such
    losses in a row end the run. Without a scaler (fp32, bf16) nothing is rescaled: the first one does.
    """

    def __init__(self, scaler: torch.amp.GradScaler, limit: int = NONFINITE_IN_A_ROW) -> None:
        self.scaler, self.limit = scaler, limit if scaler.is_enabled() else 1
        self.loss = self.gradients = self.in_a_row = 0
        self.scale = scaler.get_scale()  # before the step: a lower one after it means a skipped step

    def overflowed(self, loss: float) -> bool:
        """True when ``loss`` is inf or NaN under fp16: the step is to be skipped (:meth:`back_off`)."""
        return self.scaler.is_enabled() and not math.isfinite(loss)

    def back_off(self) -> None:
        """Skip the step as the scaler skips inf gradients: no optimiser step, the scale times 0.5."""
        self.scaler.update(self.scaler.get_scale() * self.scaler.get_backoff_factor())

    def count(self, loss: float) -> None:
        """Count the step just ended, after ``scaler.update()`` or :meth:`back_off`."""
        scale = self.scaler.get_scale()
        if math.isfinite(loss):
            self.in_a_row = 0
            self.gradients += int(scale < self.scale)  # the scaler found inf gradients, skipped the step
        else:
            self.in_a_row += 1
            self.loss += int(self.scaler.is_enabled())  # skipped, not the end: fp16
        self.scale = scale

    def error(self, loss: float, step: int, config: TrainConfig) -> FloatingPointError:
        """The error that ends the run: the first inf or NaN loss in fp32 or bf16, the ``limit``-th in
        a row under fp16."""
        fp16 = f" ({self.limit} in a row under fp16, each step skipped)" if self.limit > 1 else ""
        fp32 = ", or train in fp32 (TrainConfig(precision='fp32'))" if self.limit > 1 else ""
        return FloatingPointError(
            f"The loss became {loss} at step {step}{fp16}; lower the learning rate (now {config.lr}) "
            f"or raise the warm-up (now {config.warmup_steps} steps){fp32}."
        )

    def state_dict(self) -> dict[str, int]:
        """The counts, for a checkpoint."""
        return {"loss": self.loss, "gradients": self.gradients, "in_a_row": self.in_a_row}

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Continue the counts of a resumed run (``{}``: none yet)."""
        self.loss, self.gradients = state.get("loss", 0), state.get("gradients", 0)
        self.in_a_row, self.scale = state.get("in_a_row", 0), self.scaler.get_scale()


def _total_steps(config: TrainConfig, batches: Iterable[Batch] | Callable[[], Iterator[Batch]]) -> int | None:
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


def train(
    model: nn.Module,
    batches: Iterable[Batch] | Callable[[], Iterator[Batch]],
    loss_fn: Callable[[nn.Module, Batch], torch.Tensor],
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
    model.to(device)
    main = distributed.is_main()  # rank 0 (or the only process): prints, evaluates, writes checkpoints
    net = model  # what loss_fn sees: the model, or its DistributedDataParallel wrapper under torchrun
    if distributed.is_distributed():
        distributed.check_same_model(model)
        net = distributed.wrap(model, device)
    if config.minutes is not None and config.minutes <= 0:
        raise ValueError(f"TrainConfig(minutes={config.minutes}): give a positive time budget.")
    if config.minutes is not None and distributed.is_distributed():  # ranks would stop at different steps
        raise ValueError(
            "TrainConfig(minutes=...) is not for torchrun jobs; give steps=... or epochs=... instead."
        )
    schedule = Schedule(
        config.warmup_steps,
        _total_steps(config, batches),
        None if config.minutes is None else 60 * config.minutes,
        config.decay,
        config.schedule,
    )
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)  # no weight decay on biases and norms
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        betas=config.betas,
    )
    # a lambda, not the object itself: LambdaLR would otherwise store the schedule's state in its own
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: schedule(s))
    chosen = choose_precision(device, config.precision)  # autocast dtype; a loss scaler exactly for fp16
    scaler = chosen.grad_scaler(device)
    history = History()
    skipped = SkippedSteps(scaler)  # steps fp16 skipped: an inf or NaN loss, or inf gradients
    step, used, epoch_rng = 0, 0, rng_state()  # `used`: batches taken from the current iterator

    if config.resume and config.checkpoint and Path(config.checkpoint).exists():
        state = load_checkpoint(config.checkpoint)  # on the CPU; RNG states must stay there
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        _load_scaler(scaler, state["scaler"])
        skipped.load_state_dict(state.get("skipped", {}))
        schedule.load_state_dict(state.get("schedule", {}))
        history = History(state["history"])
        step, used, epoch_rng = state["step"], state["used"], state["epoch_rng"]
        set_rng_state(epoch_rng)
        iterator = _fresh_iterator(batches)
        for _ in range(used):
            next(iterator)
        set_rng_state(state["rng"])
    else:
        iterator = _fresh_iterator(batches)
    if device.type == "cuda" and step == 0 and not isinstance(batches, Iterator):  # say now if it won't fit
        _check_memory(model, loss_fn, batches, chosen, device)

    def checkpoint() -> None:
        if config.checkpoint and main:
            save_checkpoint(
                config.checkpoint,
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "scaler": scaler.state_dict(),
                    "schedule": schedule.state_dict(),
                    "history": history.rows,
                    "skipped": skipped.state_dict(),
                    "step": step,
                    "used": used,
                    "epoch_rng": epoch_rng,
                    "rng": rng_state(),
                    "config": {k: str(v) for k, v in asdict(config).items()},
                },
            )

    def run_evaluation() -> None:
        if evaluate is None or not main:
            return
        with evaluating(model), torch.no_grad(), chosen.autocast(device):
            metrics = evaluate(model)
        row = {"step": step, "seconds": schedule.elapsed}  # training seconds so far, evaluations left out
        history.rows.append({**row, **{k: float(v) for k, v in metrics.items()}})

    model.train()
    by_time = schedule.total_steps is None  # the bar counts seconds, not steps
    time_bar = "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]"
    bar = tqdm(
        total=schedule.bar_total,
        initial=schedule.elapsed if by_time else step,
        desc="training",
        unit="step",
        disable=not (config.progress and main),
        bar_format=time_bar if by_time else None,
    )
    smoothed = None
    while not schedule.finished(step):
        started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        step_loss = 0.0
        for micro in range(config.accumulate):
            try:
                batch = next(iterator)
            except StopIteration:  # a new epoch: remember the random state its order comes from
                epoch_rng, used = rng_state(), 0
                iterator = _fresh_iterator(batches)
                batch = next(iterator)
            used += 1
            last = micro == config.accumulate - 1  # DDP all-reduces gradients only after the last micro-batch
            with _no_sync(net, not last):
                with chosen.autocast(device):  # forward only
                    loss = loss_fn(net, to_device(batch, device)) / config.accumulate
                scaler.scale(loss).backward()
            step_loss += loss.item()
        step_loss = distributed.mean_over_ranks(step_loss)
        if skipped.overflowed(step_loss):  # fp16 and an inf or NaN loss: skip the step, lower the scale
            skipped.back_off()
        else:
            if config.grad_clip is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            scaler.step(optimizer)  # skipped by the scaler itself if the gradients hold an inf or NaN
            scaler.update()
        skipped.count(step_loss)
        history.rows.append({"step": step + 1, "loss": step_loss, "lr": scheduler.get_last_lr()[0]})
        seconds = time.perf_counter() - started
        schedule.elapsed += seconds
        with warnings.catch_warnings():  # a step the fp16 scaler skipped (inf gradients) is no mistake
            warnings.filterwarnings("ignore", "Detected call of `lr_scheduler.step\\(\\)`", UserWarning)
            scheduler.step()  # the next step's learning rate, from the steps and seconds spent so far
        step += 1
        if math.isfinite(step_loss):  # a skipped step's inf or NaN would stay in the mean for good
            smoothed = step_loss if smoothed is None else 0.95 * smoothed + 0.05 * step_loss
        shown = {
            "loss": f"{step_loss if smoothed is None else smoothed:.4f}",
            "lr": f"{history.rows[-1]['lr']:.2e}",
            **({"step": step} if by_time else {}),
            **({"skipped": skipped.loss + skipped.gradients} if skipped.loss or skipped.gradients else {}),
        }
        bar.set_postfix(shown, refresh=False)
        bar.update(min(seconds, bar.total - bar.n) if by_time else 1)
        if skipped.in_a_row >= skipped.limit:
            bar.close()
            raise skipped.error(step_loss, step, config)
        eval_due = (
            config.eval_every is not None and step % config.eval_every == 0 and not schedule.finished(step)
        )
        if eval_due:
            run_evaluation()
        every = config.checkpoint_every
        if (every is not None and step % every == 0) or (every is None and eval_due):
            checkpoint()
    bar.close()
    if not history.rows or history.rows[-1].get("step") != step or "loss" in history.rows[-1]:
        run_evaluation()
    checkpoint()
    distributed.barrier()  # no rank returns (and reads the checkpoint) before rank 0 has written it
    history.skipped = {"loss": skipped.loss, "gradients": skipped.gradients}  # steps skipped, by cause
    return history


def _check_memory(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Batch], torch.Tensor],
    batches: Iterable[Batch] | Callable[[], Iterator[Batch]],
    chosen: Precision,
    device: torch.device,
) -> None:
    """Say before the first step if one will not fit the GPU: :func:`check_run` on the longest batch
    :func:`probe_batch` finds. The look at the data and the trial pass's dropout leave every random
    generator as it was, so the run is the same with the check as without it."""
    with random_state_kept(batches):
        batch, which = probe_batch(batches)
        check_run(
            model, loss_fn, to_device(batch, device), chosen, device, name=f"this training run ({which})"
        )


def _load_scaler(scaler: torch.amp.GradScaler, saved: dict[str, Any]) -> None:
    """Restore the GradScaler's state from a checkpoint. One written without a scaler (fp32, or bf16 on an
    A100 or L4) holds ``{}``, which PyTorch refuses to load into a scaler that is on (fp16 on a T4): the
    scale then starts afresh. A saved scale and no scaler now (the reverse) needs nothing."""
    if saved and scaler.is_enabled():
        scaler.load_state_dict(saved)


def _no_sync(net: nn.Module, skip: bool):
    """``net.no_sync()`` (no gradient all-reduce) for a DDP model when ``skip``; else nothing."""
    return net.no_sync() if skip and hasattr(net, "no_sync") else contextlib.nullcontext()


def _fresh_iterator(batches: Iterable[Batch] | Callable[[], Iterator[Batch]]) -> Iterator[Batch]:
    return iter(batches()) if callable(batches) else iter(batches)


__all__ = [
    "History",
    "SkippedSteps",
    "TrainConfig",
    "checkpoint_path",
    "load_checkpoint",
    "lr_factor",
    "to_device",
    "train",
]
