"""What ``train`` reads back from the device, and shows: the losses checked, the progress bar.

A read-back makes the CPU wait for the GPU, so :func:`~fromscratch.training.train` does it only every
few steps; :class:`Watch` then checks the losses that came back (a run ends at an inf or NaN one) and
counts the steps the fp16 loss scaler skipped; :class:`Progress` shows them.
"""

from __future__ import annotations

import math

import torch

import fromscratch.training.distributed as distributed
from fromscratch.training.resume import RunState

NONFINITE_IN_A_ROW = 20  # under fp16, this many inf or NaN losses in a row end the run


def skipped_if_not_finite(part: torch.Tensor, scaler: torch.amp.GradScaler) -> torch.Tensor:
    """Under fp16, a loss whose inf or NaN gradients the scaler will find: times 1 when it is finite (the
    same gradients), times NaN when not (every gradient NaN, so the scaler skips the step). Decided on
    the GPU, without waiting for it. Without a scaler (fp32, bf16), the loss itself."""
    if not scaler.is_enabled():
        return part
    return part * torch.where(torch.isfinite(part), 1.0, torch.nan)


class Watch:
    """The losses read back from the GPU, checked: a run ends at the first inf or NaN loss in fp32 and
    bf16, at the :data:`NONFINITE_IN_A_ROW`-th in a row under fp16 (the scaler skipped each of those
    steps). A resumed run's history is read again, so a row of them goes on counting."""

    def __init__(self, run: RunState, lr: float, warmup_steps: int) -> None:
        self.run, self.lr, self.warmup_steps = run, lr, warmup_steps  # named in the error
        self.limit = NONFINITE_IN_A_ROW if run.scaler.is_enabled() else 1
        self.seen = self.in_a_row = 0  # rows of the history checked; non-finite losses in a row
        self.skipped: int | None = None  # steps the fp16 scaler skipped, as of the last read-back

    def read_back(self) -> list[float]:
        """The losses of the steps since the last read-back, and under fp16 the steps skipped so far, in
        one transfer (it waits for the GPU to finish every step queued)."""
        updates = _updates(self.run.optimizer) if self.run.scaler.is_enabled() else []
        for count in self.run.history.read_back(*updates):
            self.skipped = self.run.step - int(count)
        rows = self.run.history.rows[self.seen :]
        self.seen += len(rows)
        for row in rows:
            if "loss" in row:
                self.in_a_row = 0 if math.isfinite(row["loss"]) else self.in_a_row + 1
                if self.in_a_row >= self.limit:
                    raise self.error(row["loss"], row["step"])
        return [row["loss"] for row in rows if "loss" in row]

    def skipped_steps(self) -> int:
        """The steps the fp16 scaler skipped in the whole run (0 without a scaler)."""
        if not self.run.scaler.is_enabled():
            return 0
        if self.skipped is None:  # no step taken here: a finished run, resumed
            self.skipped = self.run.step - sum(int(count) for count in _updates(self.run.optimizer))
        return self.skipped

    def error(self, loss: float, step: int) -> FloatingPointError:
        """The error that ends the run; it names the learning rate and warm-up to change."""
        fp16 = f" ({self.limit} in a row under fp16, each step skipped)" if self.limit > 1 else ""
        fp32 = ", or train in fp32 (TrainConfig(precision='fp32'))" if self.limit > 1 else ""
        return FloatingPointError(
            f"The loss became {loss} at step {step}{fp16}; lower the learning rate (now {self.lr}) "
            f"or raise the warm-up (now {self.warmup_steps} steps){fp32}."
        )


def _updates(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """AdamW's count of its updates, a tensor on the GPU under ``fused`` ([] before the first): a step
    the fp16 scaler skipped leaves it where it was, so the steps taken less this are the steps skipped."""
    counts = [state["step"] for state in optimizer.state.values() if "step" in state]
    return [torch.stack(counts).max()] if counts else []


class Progress:
    """The progress bar (rank 0 only): steps, or seconds with a time budget; the smoothed loss, the
    learning rate, and the steps fp16 skipped, if any. The loss shown changes at each read-back."""

    TIME_BAR = "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]"

    def __init__(self, run: RunState, show: bool) -> None:
        self.run, self.smoothed, self.bar = run, None, None
        self.by_time = run.schedule.total_steps is None  # the bar counts seconds, not steps
        if show and distributed.is_main():
            from tqdm.auto import tqdm  # only here: train(..., progress=False) runs without tqdm

            self.bar = tqdm(
                total=run.schedule.bar_total,
                initial=run.schedule.elapsed if self.by_time else run.step,
                desc="training",
                unit="step",
                bar_format=self.TIME_BAR if self.by_time else None,
            )

    def show(self, losses: list[float], skipped: int) -> None:
        """Show the losses just read back (a skipped step's inf or NaN stays out of the mean)."""
        if self.bar is None:
            return
        for loss in filter(math.isfinite, losses):
            self.smoothed = loss if self.smoothed is None else 0.95 * self.smoothed + 0.05 * loss
        shown = {
            "loss": "nan" if self.smoothed is None else f"{self.smoothed:.4f}",
            "lr": f"{self.run.scheduler.get_last_lr()[0]:.2e}",
            **({"step": self.run.step} if self.by_time else {}),
            **({"skipped": skipped} if skipped else {}),
        }
        self.bar.set_postfix(shown, refresh=False)

    def advance(self, seconds: float) -> None:
        """One step more, which lasted ``seconds``."""
        if self.bar is not None:
            self.bar.update(min(seconds, self.bar.total - self.bar.n) if self.by_time else 1)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *error: object) -> None:
        if self.bar is not None:
            self.bar.close()  # also when the run ends with an error


__all__ = ["NONFINITE_IN_A_ROW", "Progress", "Watch", "skipped_if_not_finite"]
