"""Record what the chapters train, for the GPU plan: a wrapper around ``train`` in each chapter's kernel.

``notebooks.py`` runs ``record.install(file, chapter, only=...)`` before a chapter's cells: it replaces
``fromscratch.training.train`` (and ``fromscratch.training.loop.train``) by :func:`recording`'s wrapper,
so every ``train`` call the chapter makes, in a cell or inside the package, appends one JSON line to the
record file: the chapter and the cell, the model (its class, its structure without weights, its
parameter count), the longest batch's shapes and dtypes, the loss function's name, the ``TrainConfig``
and the steps it plans, and the time a training step takes on this device
(:func:`fromscratch.training.time_step` on the longest batch, in the run's precision). ``train`` itself
knows nothing of this. A ``torchrun`` job's processes (chapter 12's demonstration) start their own
Python and are not recorded.

``only=True`` (``notebooks.py --record``) makes each call train one step, with no evaluation, no
checkpoint and no resuming, then time a step and return: a chapter records its ``gpu`` size on a CPU in
minutes rather than hours (its results are then meaningless, only the record counts). Otherwise the run
is the chapter's own, its evaluations timed, and the step is timed on a copy of the trained model with
every random generator put back, so the chapter goes on as it would have.

``pack.py`` builds the GPU check's pack from such a record: a chapter that changes its runs changes the
pack, and no copy of a chapter has to be kept in step by hand.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import io
import itertools
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

import fromscratch.training
import fromscratch.training.loop
from fromscratch.training import distributed, time_step
from fromscratch.training.batches import probe_batch
from fromscratch.training.checkpoints import random_state_kept
from fromscratch.training.loop import total_steps
from fromscratch.training.precision import PrecisionWarning, choose_precision, device_name


def install(path: str | Path, chapter: str, *, only: bool) -> None:
    """Replace ``train`` where the chapters and the package find it by :func:`recording`'s wrapper."""
    shell = _shell()
    first = getattr(shell, "execution_count", 0) or 0  # this cell's number: the chapter's cells come after
    train = recording(fromscratch.training.loop.train, Path(path), chapter, only=only, cells_before=first)
    fromscratch.training.train = fromscratch.training.loop.train = train


def recording(train: Callable, path: Path, chapter: str, *, only: bool, cells_before: int = 0) -> Callable:
    """``train`` that appends what it trains to ``path`` (see the module's docstring). The entry's
    ``cell`` is the chapter's code cell, from 1 (Jupyter's ``In [n]``): IPython's execution count less
    ``cells_before``, the count while the installing cell ran (None outside IPython)."""

    @functools.wraps(train)
    def recording_train(model, batches, loss_fn, config, *, device="cpu", evaluate=None):
        if not distributed.is_main():
            return train(model, batches, loss_fn, config, device=device, evaluate=evaluate)
        device = torch.device(device)
        run = RunRecord(model, batches, loss_fn, config, device)
        if only:
            config, evaluate = one_step(config), None
        else:
            evaluate = run.timed(evaluate, config.eval_every)
        history = train(model, batches, loss_fn, config, device=device, evaluate=evaluate)
        run.time_step(model, config, warm=only)
        cell = getattr(_shell(), "execution_count", None)
        write(path, {"chapter": chapter, "cell": cell and cell - cells_before, **run.entry})
        return history

    return recording_train


def one_step(config: Any) -> Any:
    """``config`` for one step: no evaluation, no checkpoint, no resuming, no time budget."""
    fields = dict(steps=1, epochs=None, minutes=None, eval_every=None, checkpoint=None, checkpoint_every=None)
    return dataclasses.replace(config, **fields, resume=False)


def write(path: Path, entry: dict[str, Any]) -> None:
    """Append ``entry`` to the record, with the torch it was made with."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps({**entry, "torch": torch.__version__}, default=str) + "\n")


def _shell() -> Any:
    """The IPython shell this runs in, or None."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None


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
    """What one ``train`` call records: made before its first step, completed after its last."""

    def __init__(self, model: nn.Module, batches: Any, loss_fn: Callable, config: Any, device) -> None:
        self.device, self.loss_fn = torch.device(device), loss_fn
        self.evaluate_seconds: list[float] = []  # each evaluation's
        try:  # the longest batch the source shows cheaply, leaving every random generator as it was
            with random_state_kept(batches):
                self.batch, which = probe_batch(batches)
            shape: dict[str, Any] = {"batch": describe_batch(self.batch), "batch_note": which}
        except ValueError as error:  # a one-shot iterator
            self.batch, shape = None, {"batch": None, "batch_note": str(error)}
        checkpoint = getattr(config, "checkpoint", None)
        self.entry: dict[str, Any] = {
            "kind": "train",
            "name": Path(checkpoint).name.rsplit("-", 1)[0] if checkpoint else None,
            "model": model_structure(model),
            **shape,
            "loss": function_name(loss_fn),
            "config": {f.name: getattr(config, f.name) for f in dataclasses.fields(config)},
            "steps": total_steps(config, batches),  # what the run plans
        }

    def timed(self, evaluate: Callable | None, every: int | None) -> Callable | None:
        """``evaluate``, timed (the evaluations a run plans cost time too), and their number counted."""
        if evaluate is None:
            return None
        steps = self.entry["steps"]
        self.entry["evaluations"] = ((steps - 1) // every if steps and every else 0) + 1  # and the last

        def timed_evaluate(model: nn.Module) -> dict[str, float]:
            _sync(self.device)
            started = time.perf_counter()
            metrics = evaluate(model)
            _sync(self.device)
            self.evaluate_seconds.append(time.perf_counter() - started)
            return metrics

        return timed_evaluate

    def time_step(self, model: nn.Module, config: Any, *, warm: bool) -> None:
        """After the run: the seconds a step of ``model`` takes on the longest batch, in the run's precision
        (``warm``: one step of the model itself, warm already; else three of a copy, after a warm-up)."""
        if self.evaluate_seconds:
            self.entry["evaluate_s"] = sum(self.evaluate_seconds) / len(self.evaluate_seconds)
        with warnings.catch_warnings():  # train has said it once already
            warnings.simplefilter("ignore", PrecisionWarning)
            precision = choose_precision(self.device, config.precision).name
        self.entry.update(device=device_name(self.device), precision=precision, steps_timed=0, step_ms=None)
        if self.batch is None:
            return  # a one-shot iterator: no batch to time a step on
        repeats = 1 if warm else 3
        with random_state_kept(), warnings.catch_warnings():  # the chapter goes on as without the record
            warnings.simplefilter("ignore", PrecisionWarning)
            try:
                seconds = time_step(
                    model if warm else copy.deepcopy(model),
                    self.batch,
                    self.loss_fn,
                    device=self.device,
                    precision=config.precision,
                    repeats=repeats,
                    warmup=0 if warm else 1,
                    lr=config.lr,
                    accumulate=config.accumulate,
                    grad_clip=config.grad_clip,
                )
            except Exception as error:  # the record never fails a chapter: it says why instead
                self.entry["not_timed"] = f"{type(error).__name__}: {error}"[:300]
                return
        self.entry.update(steps_timed=repeats, step_ms=1000 * seconds)


__all__ = [
    "RunRecord",
    "describe_batch",
    "function_name",
    "install",
    "model_structure",
    "one_step",
    "recording",
    "write",
]
