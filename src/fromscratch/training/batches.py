"""What ``train``, its record and the memory check need to know about a batch (chapters 06-14).

A batch is whatever ``loss_fn(model, batch)`` takes: a tensor, or a (nested) tuple, list or dict of
them. :func:`to_device` moves one to the GPU; :func:`batch_size` reads its ``b``, :func:`take` cuts it
to its first ``k`` examples and :func:`batch_elements` measures it; :func:`probe_batch` finds the
longest batch of a source, the one :func:`fromscratch.training.fits.check_run` measures before the
first step and the GPU plan (`benchmarks/gpu/record.py`) records. None of them needs to know the batch's
layout: they follow its tensors.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import torch

PROBE_LIMIT = 1_000  # batches of a sized source :func:`probe_batch` looks at for the longest one


def to_device(batch: Any, device: torch.device | str) -> Any:
    """Move every tensor in a (nested) tuple, list or dict to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def batch_size(batch: Any) -> int:
    """``b``: the first dimension of the first tensor in a (nested) tuple, list or dict batch."""
    if isinstance(batch, torch.Tensor):
        return batch.shape[0]
    for part in batch.values() if isinstance(batch, dict) else batch:
        with contextlib.suppress(TypeError, StopIteration):
            return batch_size(part)
    raise TypeError("the batch holds no tensor")


def take(batch: Any, k: int, b: int | None = None) -> Any:
    """The first ``k`` examples of ``batch``: every tensor whose first dimension is ``b`` is cut to ``k``."""
    b = batch_size(batch) if b is None else b
    if isinstance(batch, torch.Tensor):
        return batch[:k] if batch.dim() and batch.shape[0] == b else batch
    if isinstance(batch, dict):
        return {name: take(part, k, b) for name, part in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(take(part, k, b) for part in batch)
    return batch


def tensors_in(batch: Any) -> list[torch.Tensor]:
    """Every tensor in a (nested) tuple, list or dict batch."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    parts = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else []
    return [tensor for part in parts for tensor in tensors_in(part)]


def batch_elements(batch: Any) -> int:
    """Elements of the largest tensor in ``batch``: ``b * t`` for a ``(b, t)`` batch of tokens."""
    return max((tensor.numel() for tensor in tensors_in(batch)), default=0)


def probe_batch(batches: Any, *, limit: int = PROBE_LIMIT) -> tuple[Any, str]:
    """The batch :func:`check_run` should measure: the longest one ``batches`` shows cheaply.

    - a source with a length that can be iterated again (a list, a ``DataLoader``, ``ReviewBatches``):
      the batch, of one pass (or of its first ``limit`` batches), whose largest tensor has the most
      elements (:func:`batch_elements`: with padding or token budgets, the longest in tokens);
    - a function returning a fresh iterator, or a source without a length (an endless stream): its first
      batch only. That is the longest when every batch has the same shape (enwik8's windows); when the
      shapes vary, a later batch may need more memory than the check measured;
    - a one-shot iterator: a ``ValueError`` (a look would use up its batches).

    Returns the batch and a few words saying which it is, for :func:`check_run`'s message. The pass
    draws random numbers as a pass of training does: look inside
    :func:`~fromscratch.training.checkpoints.random_state_kept` (as the record does), so the run stays
    the same.
    """
    if isinstance(batches, Iterator):
        raise ValueError(
            "probe_batch cannot look at a one-shot iterator without using up its batches; pass a list, "
            "a DataLoader or a function returning a fresh iterator."
        )
    try:
        n = None if callable(batches) else len(batches)
    except TypeError:  # no length: perhaps endless
        n = None
    longest, most, seen = None, -1, 0
    for batch in itertools.islice(batches() if callable(batches) else batches, 1 if n is None else limit):
        seen += 1
        if batch_elements(batch) > most:
            longest, most = batch, batch_elements(batch)
    if longest is None:
        raise ValueError("The batches are empty: give train at least one batch.")
    tensors = tensors_in(longest)
    shape = " x ".join(map(str, max(tensors, key=torch.Tensor.numel).shape)) if tensors else "no tensor"
    if n is None:
        return longest, f"its first batch: {shape}; later ones were not looked at"
    which = f"its {n:,} batches" if seen >= n else f"the first {seen:,} of its {n:,} batches"
    return longest, f"the longest of {which}: {shape}"


__all__ = ["PROBE_LIMIT", "batch_elements", "batch_size", "probe_batch", "take", "tensors_in", "to_device"]
