"""Everything a training run changes, in one place, so that an interrupted run resumes exactly
(chapters 06, 07, 12).

``train`` keeps its state in a :class:`RunState`: the model, AdamW, the learning-rate scheduler and
:class:`~fromscratch.training.schedule.Schedule`, the loss scaler, the
:class:`~fromscratch.training.history.History`, the step count and the place in the data
(:class:`Replay`). :meth:`RunState.state_dict` is what a checkpoint holds and
:meth:`RunState.load_state_dict` puts it all back: the weights, the optimiser's moments, the schedule,
the scaler's scale, the history, and every random generator, so the resumed run draws the same dropout
masks and the same batches as the uninterrupted one would have.

The data is the delicate part: an iterator cannot be saved. :class:`Replay` keeps instead the random
state at the start of the current epoch and how many batches it has used since; a resumed run restores
that state, makes a fresh iterator and skips the used batches. This is exact for a ``DataLoader`` (its
shuffle is drawn when the iterator is made) and for any iterator that, like ``fromscratch.data.enwik8``,
draws its randomness from a ``torch.Generator`` seeded when it is created.

A checkpoint's keys (``model``, ``optimizer``, ``scheduler``, ``scaler``, ``schedule``, ``history``,
``step``, ``used``, ``epoch_rng``, ``rng``, ``config``) stay as they are: files written by earlier
versions of the course still resume (``schedule`` may be missing from them; their ``skipped`` counts are
not needed: AdamW's own step count says how many steps the scaler skipped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from fromscratch.training.checkpoints import load_checkpoint, rng_state, set_rng_state
from fromscratch.training.history import History
from fromscratch.training.schedule import Schedule

Batches = Iterable[Any] | Callable[[], Iterator[Any]]


class Replay:
    """The batches of a run, drawn epoch after epoch, in an order a resumed run can draw again.

    batches: an iterable (a ``DataLoader``, a list), iterated again whenever it runs out, or a function
    returning a fresh iterator. ``epoch_rng`` is the random state each epoch's order comes from and
    ``used`` the batches drawn since it began: all a checkpoint needs to find the place again.
    """

    def __init__(self, batches: Batches) -> None:
        self.batches = batches
        self.epoch_rng: dict[str, Any] = {}
        self.used = 0
        self.iterator: Iterator[Any] = iter(())

    def start(self) -> None:
        """Begin the first epoch, remembering the random state its order comes from."""
        self.epoch_rng, self.used = rng_state(), 0
        self.iterator = self._fresh()

    def replay(self, epoch_rng: dict[str, Any], used: int) -> None:
        """Find a saved place again: the epoch's random state, a fresh iterator, ``used`` batches skipped."""
        set_rng_state(epoch_rng)
        self.epoch_rng, self.used = epoch_rng, used
        self.iterator = self._fresh()
        for _ in range(used):
            next(self.iterator)

    def __next__(self) -> Any:
        try:
            batch = next(self.iterator)
        except StopIteration:  # a new epoch: remember the random state its order comes from
            self.start()
            batch = next(self.iterator)
        self.used += 1
        return batch

    def _fresh(self) -> Iterator[Any]:
        return iter(self.batches()) if callable(self.batches) else iter(self.batches)


class RunState:
    """What a training run changes as it goes: everything a checkpoint holds.

    ``train`` builds the model, optimiser, scheduler, schedule and scaler; the state adds an empty
    history, the step count (0) and the data (:class:`Replay`); :meth:`start` begins the run or
    resumes it.
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler,
        schedule: Schedule,
        scaler: torch.amp.GradScaler,
        batches: Batches,
    ) -> None:
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.schedule, self.scaler = schedule, scaler
        self.history = History()
        self.step = 0  # optimiser steps taken
        self.data = Replay(batches)

    def start(self, checkpoint: str | Path | None) -> None:
        """Start afresh, or, if ``checkpoint`` names a file that exists, go on where it left off."""
        if checkpoint and Path(checkpoint).exists():
            self.load_state_dict(load_checkpoint(checkpoint))  # on the CPU: RNG states must stay there
        else:
            self.data.start()

    def state_dict(self, config: Any) -> dict[str, Any]:
        """The checkpoint of the run so far; ``config`` (the ``TrainConfig``) is kept as text, to read."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "schedule": self.schedule.state_dict(),
            "history": self.history.rows,
            "step": self.step,
            "used": self.data.used,
            "epoch_rng": self.data.epoch_rng,
            "rng": rng_state(),
            "config": {k: str(v) for k, v in asdict(config).items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the run ``state`` (a checkpoint, loaded on the CPU) saved: the weights, optimiser,
        schedule, scaler and history, the place in the data, then every random generator."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        load_scaler(self.scaler, state["scaler"])
        self.schedule.load_state_dict(state.get("schedule", {}))
        self.history = History(state["history"])
        self.step = state["step"]
        self.data.replay(state["epoch_rng"], state["used"])
        set_rng_state(state["rng"])


def load_scaler(scaler: torch.amp.GradScaler, saved: dict[str, Any]) -> None:
    """Restore the GradScaler's state from a checkpoint. One written without a scaler (fp32, or bf16 on an
    A100 or L4) holds ``{}``, which PyTorch refuses to load into a scaler that is on (fp16 on a T4): the
    scale then starts afresh. A saved scale and no scaler now (the reverse) needs nothing."""
    if saved and scaler.is_enabled():
        scaler.load_state_dict(saved)


__all__ = ["Batches", "Replay", "RunState", "load_scaler"]
