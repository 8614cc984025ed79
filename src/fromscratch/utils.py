"""Small helpers every chapter uses: evaluation mode, parameter counts, timing (chapters 04-08).

Each lives here once, so a chapter or a benchmark never writes its own copy:

- ``evaluating(model)``: run a block of code in eval mode (no dropout) and give the model back in
  the mode it was in, even if the block raises;
- ``count_parameters(module)``: how many numbers training adjusts;
- ``time_call(fn, repeats=...)``: seconds per call of ``fn()``, after warm-up calls, waiting for
  the GPU before reading the clock.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn

STATISTICS = ("min", "median")


@contextmanager
def evaluating(model: Any) -> Iterator[Any]:
    """Put ``model`` in eval mode for the ``with`` block, then restore the mode it was in.

    ``model`` may also be a plain callable that is not an ``nn.Module`` (a function standing in for
    a model): then nothing changes. The previous mode comes back also when the block raises.

        with evaluating(model), torch.no_grad():
            logits = model(tokens)
    """
    if not isinstance(model, nn.Module):
        yield model
        return
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def count_parameters(module: nn.Module, *, trainable_only: bool = True) -> int:
    """Number of parameters (scalars) of ``module``; only those with ``requires_grad`` by default."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def _synchronize() -> None:
    """Wait for queued GPU kernels (GPU calls return before the work is done)."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def time_call(
    fn: Callable[[], object],
    *,
    repeats: int,
    warmup: int = 1,
    statistic: str = "min",
    threads: int | None = None,
) -> float:
    """Seconds per call of ``fn()``: the fastest (``"min"``) or the median of ``repeats`` timed calls.

    ``warmup`` untimed calls come first (memory allocation, kernel choice, lazy initialisation).
    The minimum is what ``timeit`` recommends for a pure computation: other work on the machine only
    ever adds time. The median suits steps whose own cost varies (a training step). When CUDA is in
    use, the clock is read only after the GPU has finished. ``threads``: torch's CPU threads during
    the calls (e.g. 1, so that a timing on a shared machine depends less on its other work), restored
    afterwards; None keeps the current number.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if warmup < 0:
        raise ValueError(f"warmup must be 0 or more, got {warmup}")
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1 (or None), got {threads}")
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(repeats):
            _synchronize()
            start = time.perf_counter()
            fn()
            _synchronize()
            times.append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(before)
    return min(times) if statistic == "min" else statistics.median(times)


def loglog_slope(xs: Iterable[float], ys: Iterable[float], *, last: int | None = None) -> float:
    """The slope ``p`` of the least-squares line through ``(log x, log y)``: ``y`` grows like ``x**p``.

    Chapters 08 and 11 fit how time or memory grows with the length ``t``. ``last``: fit only the last
    ``last`` points (the long sequences, where fixed costs no longer hide the growth); None: all.
    """
    x, y = np.log(np.asarray(list(xs), dtype=float)), np.log(np.asarray(list(ys), dtype=float))
    if last is not None:
        x, y = x[-last:], y[-last:]
    if len(x) < 2:
        raise ValueError("a slope needs at least two points; measure more lengths or raise `last`.")
    return float(np.polyfit(x, y, 1)[0])


__all__ = ["count_parameters", "evaluating", "loglog_slope", "time_call"]
