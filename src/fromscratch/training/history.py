"""What a training run records: one row per step (step, loss, lr) and one per evaluation (step,
seconds of training so far, the metrics), and how many steps fp16 skipped.

:func:`fromscratch.training.train` returns a :class:`History`; ``history.plot()`` draws the learning
curves, ``history.series("loss")`` and ``history.last("accuracy")`` read it.

The loop hands each step's loss over as a tensor still on the GPU (:meth:`History.add`): reading it
back would make the CPU wait for the GPU at every step. The rows become plain numbers the first time
anyone reads them, all the waiting ones at once.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch


class History:
    """What happened during training: one row per step (step, loss, lr) and one per evaluation
    (step, seconds, metrics), and the optimiser steps fp16 skipped (``skipped``, chapter 12)."""

    def __init__(self, rows: list[dict[str, float]] | None = None, skipped: int = 0):
        self._rows: list[dict[str, float]] = list(rows or [])
        self._waiting: list[tuple[int, torch.Tensor, float]] = []  # (step, loss on the device, lr)
        self.skipped = skipped  # steps the fp16 loss scaler skipped (inf or NaN gradients); `train` sets it

    def add(self, step: int, loss: torch.Tensor, lr: float) -> None:
        """Record a step whose ``loss`` (a scalar tensor) may still be computing on the GPU."""
        self._waiting.append((step, loss.detach(), lr))

    @property
    def rows(self) -> list[dict[str, float]]:
        """Every row, as plain numbers (the waiting losses are read back first)."""
        self.read_back()
        return self._rows

    def read_back(self, *more: torch.Tensor) -> list[float]:
        """Turn the waiting losses into rows, reading them from the GPU in one transfer together with the
        scalar tensors ``more``, whose values it returns (one wait for the GPU, not one per number);
        nothing, and ``[]``, when no loss is waiting."""
        if not self._waiting:
            return []
        losses = [loss for _, loss, _ in self._waiting]
        device = (losses + list(more))[0].device
        values = torch.stack([t.float().to(device) for t in losses + list(more)]).tolist()  # the one wait
        self._rows += [
            {"step": step, "loss": value, "lr": lr}
            for (step, _, lr), value in zip(self._waiting, values, strict=False)
        ]
        self._waiting.clear()
        return values[len(losses) :]

    def series(self, key: str, x: str = "step") -> tuple[list[float], list[float]]:
        """``(steps, values)`` of every row that has ``key``; ``x="seconds"``: against training seconds
        (evaluation rows only: each records the seconds spent in training steps so far)."""
        rows = [r for r in self.rows if key in r and x in r]
        return [r[x] for r in rows], [r[key] for r in rows]

    def last(self, key: str) -> float:
        """The most recent value of ``key`` (e.g. ``history.last("accuracy")``)."""
        values = self.series(key)[1]
        if not values:
            raise KeyError(f"No row has {key!r}; keys seen: {sorted({k for r in self.rows for k in r})}")
        return values[-1]

    def plot(
        self, metrics: Iterable[str] | None = None, *, smooth: int = 20, loss_label: str = "training loss"
    ):
        """Learning curves: the smoothed training loss, and each evaluation metric in its own panel."""
        import matplotlib.pyplot as plt

        if metrics is None:
            metrics = sorted({k for r in self.rows for k in r} - {"step", "seconds", "loss", "lr"})
        metrics = list(metrics)
        fig, axes = plt.subplots(1, 1 + len(metrics), figsize=(5 * (1 + len(metrics)), 3.5), squeeze=False)
        steps, losses = self.series("loss")
        kernel = max(1, min(smooth, len(losses) // 5 or 1))
        smoothed = np.convolve(losses, np.ones(kernel) / kernel, mode="valid") if losses else []
        axes[0, 0].plot(steps, losses, alpha=0.25, label="per step")
        axes[0, 0].plot(steps[kernel - 1 :], smoothed, label=f"mean of {kernel}")
        axes[0, 0].set(xlabel="step", ylabel=loss_label, title=loss_label)
        axes[0, 0].legend()
        for ax, key in zip(axes[0, 1:], metrics, strict=True):
            xs, ys = self.series(key)
            ax.plot(xs, ys, marker="o")
            ax.set(xlabel="step", ylabel=key, title=key)
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        return f"History({len(self.rows)} rows)"


__all__ = ["History"]
