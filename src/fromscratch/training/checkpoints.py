"""Checkpoint files: where they go, how they are written, and the random state a resumed run needs.

Used by the training loop (``fromscratch.training``, chapters 01, 06, 07): a checkpoint is one file
holding the model, the optimiser, the schedule, the history and every random generator's state
(:class:`~fromscratch.training.resume.RunState`), so ``TrainConfig(resume=True)`` continues a run
exactly. (This is not *gradient* checkpointing, which trades compute for memory.) A chapter names
its run's file with :func:`run_checkpoint`, never by hand::

    file = run_checkpoint("07_generator", size.model, size.train, {"seed": 0})
    history = train(model, batches, loss_fn, replace(size.train, checkpoint=file, resume=True))

- :func:`run_checkpoint` names a run's file from a hash of everything that changes its result (model
  config, train config, data selection, seed, the package's version): change the learning rate and
  the run gets a new file, so a stale checkpoint of another run is never loaded;
- :func:`checkpoint_path`, underneath it, puts a file under the data cache
  (``$FROMSCRATCH_DATA/checkpoints/``), so a chapter never writes to a path relative to the
  directory it runs in;
- :func:`save_checkpoint` writes atomically: a crash leaves the old file or the new one, never half;
- :func:`rng_state` / :func:`set_rng_state` capture and restore Python's, NumPy's and torch's generators;
  :func:`random_state_kept` restores them (and a data source's own generator) after a block.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fromscratch.data.registry import cache_dir


def rng_state() -> dict[str, Any]:
    """The state of every random number generator a run draws from (Python, NumPy, torch, CUDA)."""
    np_state = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": (np_state[0], torch.from_numpy(np_state[1].astype(np.int64)), *np_state[2:]),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore the generators to a state saved by :func:`rng_state`."""
    random.setstate(state["python"])
    name, keys, *rest = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), *rest))
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@contextlib.contextmanager
def random_state_kept(*sources: Any) -> Iterator[None]:
    """Run the block, then put every random generator back as it was: Python's, NumPy's, torch's and
    the ``generator`` of each of ``sources`` that has its own (a ``DataLoader``'s, ``ReviewBatches``'),
    so a look at the data or a trial pass of the model leaves no trace in the run."""
    state = rng_state()
    own = [g for g in (getattr(s, "generator", None) for s in sources) if isinstance(g, torch.Generator)]
    saved = [g.get_state() for g in own]
    try:
        yield
    finally:
        set_rng_state(state)
        for generator, its_state in zip(own, saved, strict=True):
            generator.set_state(its_state)


def checkpoint_path(name: str) -> Path:
    """Where the checkpoint file ``name`` lives: ``cache_dir() / "checkpoints" / name``, under the data
    cache (``$FROMSCRATCH_DATA``), never a path relative to the working directory.

    :func:`run_checkpoint` names a run's file and calls this; a chapter calls :func:`run_checkpoint`.
    """
    relative = Path(name)
    if not name or relative.is_absolute() or ".." in relative.parts:
        raise ValueError(
            f"checkpoint_path takes a file name such as '07_generator.pt', got {name!r}; "
            f"for a file elsewhere, pass that path to TrainConfig(checkpoint=...) directly."
        )
    return cache_dir() / "checkpoints" / relative


NOT_HASHED = ("checkpoint", "resume", "progress")  # fields that never change what a run computes


def _plain(part: Any) -> Any:
    """A JSON-able form of one part of a run: dataclasses as dicts (less :data:`NOT_HASHED`), tuples as
    lists.
    """
    if dataclasses.is_dataclass(part) and not isinstance(part, type):
        fields = {f.name: getattr(part, f.name) for f in dataclasses.fields(part) if f.name not in NOT_HASHED}
        return {"type": type(part).__name__, **{k: _plain(v) for k, v in fields.items()}}
    if isinstance(part, dict):
        return {str(k): _plain(v) for k, v in part.items()}
    if isinstance(part, (list, tuple)):
        return [_plain(v) for v in part]
    if part is None or isinstance(part, (bool, int, float, str)):
        return part
    raise TypeError(
        f"run_checkpoint hashes dataclasses, dicts, lists and plain values; got {type(part).__name__}. "
        "Pass the config (or the numbers) that decide the result instead."
    )


def run_key(*parts: Any) -> str:
    """12 hex digits of the sha256 of ``parts`` and the package's version: equal keys, equal runs."""
    try:
        version = metadata.version("fromscratch")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        version = "source"
    text = json.dumps({"version": version, "parts": _plain(list(parts))}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def run_checkpoint(name: str, *parts: Any) -> Path:
    """The checkpoint of the run ``name`` made of ``parts``:
    ``checkpoint_path(f"{name}-{run_key(*parts)}.pt")``.

    Pass every config and value that changes the trained weights, e.g.
    ``run_checkpoint("09_transformer", model.config, train_config, {"pairs": 29_000, "seed": 0})``.
    With ``TrainConfig(checkpoint=..., resume=True)``, :func:`fromscratch.training.train` then picks up
    an interrupted run, returns a finished one at once (its weights and history restored), and starts
    afresh whenever any part changed.
    """
    return checkpoint_path(f"{name}-{run_key(*parts)}.pt")


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write ``state`` with ``torch.save`` atomically: to a temporary file, then renamed over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | Path, map_location: torch.device | str = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by ``save_checkpoint`` (tensors and plain data only)."""
    return torch.load(path, map_location=map_location, weights_only=True)


__all__ = [
    "checkpoint_path",
    "load_checkpoint",
    "random_state_kept",
    "rng_state",
    "run_checkpoint",
    "run_key",
    "save_checkpoint",
    "set_rng_state",
]
