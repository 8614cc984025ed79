"""Record what ``train`` trains while the chapters run (the GPU plan).

Set ``FROMSCRATCH_RECORD=records.jsonl`` before the chapters run, and every real call of
:func:`~fromscratch.training.train` appends one JSON line to that file: the chapter
(``$FROMSCRATCH_CHAPTER``, which ``benchmarks/gpu/notebooks.py`` sets) and the cell, the model (its
class, its structure without weights, its parameter count), the longest batch's shapes and dtypes, the
loss function's name, the ``TrainConfig`` and the steps it plans, and the time a step took on this
device. (The heavy cells that are not training are timed by ``benchmarks/gpu/notebooks.py`` itself.)

``benchmarks/gpu/pack.py`` builds the GPU check's pack from such a record: a chapter that changes its
runs changes the pack, and no copy of a chapter has to be kept in step by hand.

``FROMSCRATCH_RECORD_ONLY=1`` makes ``train`` record after one step and return, with no evaluation and
no checkpoint: a chapter records its ``gpu`` size on a CPU in minutes rather than hours (its results are
then meaningless, only the record counts).
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import io
import itertools
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

import fromscratch.training.distributed as distributed
from fromscratch.training.batches import probe_batch
from fromscratch.training.checkpoints import random_state_kept

RECORD_ENV = "FROMSCRATCH_RECORD"  # the file the records are appended to
ONLY_ENV = "FROMSCRATCH_RECORD_ONLY"  # "1": train records after one step and returns
CHAPTER_ENV = "FROMSCRATCH_CHAPTER"  # the chapter running, e.g. "07_masking_generation"


def recording() -> Path | None:
    """The record file ``$FROMSCRATCH_RECORD`` (on rank 0 of a torchrun job), or None."""
    path = os.environ.get(RECORD_ENV)
    return Path(path) if path and distributed.is_main() else None


def record_only() -> bool:
    """True when ``$FROMSCRATCH_RECORD_ONLY`` asks ``train`` to stop after one recorded step."""
    return recording() is not None and os.environ.get(ONLY_ENV, "") not in ("", "0")


def where() -> dict[str, Any]:
    """The chapter (``$FROMSCRATCH_CHAPTER``, or the notebook Jupyter runs) and the cell's number."""
    chapter = os.environ.get(CHAPTER_ENV) or Path(os.environ.get("JPY_SESSION_NAME", "")).stem or None
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return {"chapter": chapter, "cell": getattr(shell, "execution_count", None)}


def write(entry: dict[str, Any]) -> None:
    """Append ``entry`` to the record, with where it was made and on what."""
    path = recording()
    if path is None:
        return
    entry = {**where(), **entry, "torch": torch.__version__}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(entry, default=str) + "\n")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --- what a training run is made of --------------------------------------------------------------------


def describe_batch(batch: Any) -> dict[str, Any]:
    """A batch's layout without its data: each tensor's shape and dtype (with the range of an integer
    tensor and the share of True in a boolean one), the tuples, lists and dicts around them."""
    if isinstance(batch, torch.Tensor):
        about: dict[str, Any] = {"shape": list(batch.shape), "dtype": str(batch.dtype).removeprefix("torch.")}
        if batch.dtype == torch.bool and batch.numel():
            about["true"] = batch.float().mean().item()
        elif not batch.is_floating_point() and not batch.is_complex() and batch.numel():
            about["min"], about["max"] = batch.min().item(), batch.max().item()
        return about
    if isinstance(batch, (list, tuple)):
        return {"list" if isinstance(batch, list) else "tuple": [describe_batch(b) for b in batch]}
    if isinstance(batch, dict):
        return {"dict": {str(k): describe_batch(v) for k, v in batch.items()}}
    if batch is None or isinstance(batch, (bool, int, float, str)):
        return {"value": batch}
    return {"value": None, "type": type(batch).__name__}


def model_structure(model: nn.Module) -> dict[str, Any]:
    """The model without its weights: its class, parameter counts and either its config (when
    ``Class(config)`` builds the same parameters again) or a copy of it on the ``meta`` device, pickled
    (base64; small buffers and tensors keep their values), with each weight's mean and spread, to draw
    it again."""
    cls = type(model)
    shapes = [(name, p.shape, p.requires_grad) for name, p in model.named_parameters()]
    about: dict[str, Any] = {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "parameters": sum(p.numel() for p in model.parameters()),
        "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
    }
    config = getattr(model, "config", None)
    fields = _plain(config) if dataclasses.is_dataclass(config) and not isinstance(config, type) else None
    if fields is not None and _builds(cls, config, shapes):
        config_class = f"{type(config).__module__}.{type(config).__qualname__}"
        return {**about, "config": fields, "config_class": config_class}
    params = dict(model.named_parameters())
    if params:
        spread = [
            torch.stack([p.detach().float().mean(), p.detach().float().std(correction=0)])
            for p in params.values()
        ]
        about["init"] = dict(zip(params, torch.stack(spread).tolist(), strict=True))  # one read-back
    # big buffers and big plain tensor attributes (a dropout's drawn pool) travel as shapes alone
    tensors = itertools.chain(model.buffers(), (v for m in model.modules() for v in vars(m).values()))
    big = [t for t in tensors if isinstance(t, torch.Tensor) and t.nbytes > 2**20]
    on_meta = {id(t): _on_meta(t) for t in itertools.chain(model.parameters(), big)}
    try:
        buffer = io.BytesIO()
        torch.save(copy.deepcopy(model, on_meta), buffer)  # tied weights stay one tensor
        about["pickle"] = base64.b64encode(buffer.getvalue()).decode()
    except Exception as error:  # a lambda or an open file among the attributes, ...
        about["not_pickled"] = f"{error.__class__.__name__}: {error}"
    return about


def _builds(cls: type, config: Any, shapes: list) -> bool:
    """Whether ``cls(config)`` makes the same parameters (tried on the ``meta`` device: no memory)."""
    if "<locals>" in cls.__qualname__ or cls.__module__ == "__main__":
        return False
    try:
        with torch.device("meta"):
            again = cls(config)
    except Exception:
        return False
    return [(name, p.shape, p.requires_grad) for name, p in again.named_parameters()] == shapes


def _plain(config: Any) -> dict[str, Any] | None:
    """A config dataclass's fields, if every one is a plain value (tuples as lists); else None."""
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    try:
        return json.loads(json.dumps(fields))
    except TypeError:  # a nested config, a function, ...
        return None


def _on_meta(t: torch.Tensor) -> torch.Tensor:
    empty = torch.empty_like(t, device="meta")
    return nn.Parameter(empty, requires_grad=t.requires_grad) if isinstance(t, nn.Parameter) else empty


def function_name(fn: Callable) -> str:
    """``module.qualname`` of a loss function (of the function inside a ``functools.partial``)."""
    inner = getattr(fn, "func", fn)
    return f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', type(inner).__name__)}"


class RunRecord:
    """What one ``train`` call records: made before its first step, written after its last.

    A stand-in that does nothing when ``$FROMSCRATCH_RECORD`` is not set; ``only`` is True under
    ``$FROMSCRATCH_RECORD_ONLY`` (``enough`` then ends the loop after one step).
    """

    def __init__(
        self, model: nn.Module, batches: Any, loss_fn: Callable, config: Any, device, **plan
    ) -> None:
        self.on, self.only = recording() is not None, record_only()
        self.device = torch.device(device)
        self.entry: dict[str, Any] = {}
        self.evaluate_seconds: list[float] = []  # each evaluation's, while recording
        if not self.on:
            return
        try:  # the longest batch the source shows cheaply, leaving every random generator as it was
            with random_state_kept(batches):
                batch, which = probe_batch(batches)
            shape: dict[str, Any] = {"batch": describe_batch(batch), "batch_note": which}
        except ValueError as error:  # a one-shot iterator
            shape = {"batch": None, "batch_note": str(error)}
        checkpoint = getattr(config, "checkpoint", None)
        self.entry = {
            "kind": "train",
            "name": Path(checkpoint).name.rsplit("-", 1)[0] if checkpoint else None,
            "model": model_structure(model),
            **shape,
            "loss": function_name(loss_fn),
            "config": {f.name: getattr(config, f.name) for f in dataclasses.fields(config)},
            **plan,
        }

    def adjusted(self, config: Any, evaluate: Callable | None) -> tuple[Any, Callable | None]:
        """What ``train`` runs: under ``$FROMSCRATCH_RECORD_ONLY`` one step with no evaluation, checkpoint
        or resuming; while recording, ``evaluate`` timed (the evaluations a run plans cost time too)."""
        if self.only:
            config = dataclasses.replace(config, eval_every=None, checkpoint=None, checkpoint_every=None)
            return dataclasses.replace(config, resume=False), None
        if not self.on or evaluate is None:
            return config, evaluate
        steps, every = self.entry.get("steps"), config.eval_every
        self.entry["evaluations"] = ((steps - 1) // every if steps and every else 0) + 1  # and the last

        def timed_evaluate(model: nn.Module) -> dict[str, float]:
            _sync(self.device)
            started = time.perf_counter()
            metrics = evaluate(model)
            _sync(self.device)
            self.evaluate_seconds.append(time.perf_counter() - started)
            return metrics

        return config, timed_evaluate

    def begin(self, step: int) -> None:
        """Before the first step: the clock starts once the device is idle."""
        if self.on:
            _sync(self.device)
            self.first, self.started = step, time.perf_counter()

    def enough(self, step: int) -> bool:
        """True when the loop should end early: after one step, under ``$FROMSCRATCH_RECORD_ONLY``."""
        return self.only and step > self.first

    def write(self, step: int, precision: str) -> None:
        """After the last step: the time per step on this device, and the line in the record."""
        if not self.on:
            return
        _sync(self.device)
        steps = step - self.first
        seconds = time.perf_counter() - self.started - sum(self.evaluate_seconds)  # the steps' alone
        if self.evaluate_seconds:
            self.entry["evaluate_s"] = sum(self.evaluate_seconds) / len(self.evaluate_seconds)
        from fromscratch.training.precision import device_name

        timing = {"steps_timed": steps, "step_ms": 1000 * seconds / steps if steps else None}
        write({**self.entry, "device": device_name(self.device), "precision": precision, **timing})


__all__ = [
    "CHAPTER_ENV",
    "ONLY_ENV",
    "RECORD_ENV",
    "RunRecord",
    "describe_batch",
    "function_name",
    "model_structure",
    "record_only",
    "recording",
    "where",
    "write",
]
