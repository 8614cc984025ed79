"""The steps fp16 training skips, and when to give up (chapter 12).

fp16 has only 5 exponent bits: a value beyond 65,504 becomes inf. A ``torch.amp.GradScaler`` multiplies
the loss by a large scale so that small gradients do not underflow, and when the scaled gradients hold
an inf or NaN it skips that optimiser step and halves the scale: an overflow is a passing event, not an
error. Under fp16 an inf or NaN *loss* is most often the same overflow, in the forward pass, so ``train``
skips that step the same way, and only :data:`NONFINITE_IN_A_ROW` such losses in a row end the run.
Without a scaler (fp32, bf16) nothing is rescaled and the first inf or NaN loss ends it at once.

:class:`SkippedSteps` keeps the counts, by cause: shown in the progress bar, saved in checkpoints (a
resumed run goes on counting) and returned as ``history.skipped``.
"""

from __future__ import annotations

import math

import torch

NONFINITE_IN_A_ROW = 20  # under fp16, this many inf or NaN losses in a row end the run


class SkippedSteps:
    """The steps fp16 training skipped: ``loss`` (an inf or NaN loss), ``gradients`` (the scaler found
    inf gradients), and the non-finite losses ``in_a_row`` so far.

    A GradScaler skips the optimiser step when the scaled gradients hold an inf or NaN, and lowers its
    scale (counted in ``gradients``). An inf or NaN loss under fp16 skips the step the same way
    (``loss``), and only ``limit`` such losses in a row end the run. Without a scaler the limit is 1.
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

    @property
    def given_up(self) -> bool:
        """True when the run must end: ``limit`` inf or NaN losses in a row (1 without a scaler)."""
        return self.in_a_row >= self.limit

    @property
    def total(self) -> int:
        """Steps skipped so far, whatever the cause."""
        return self.loss + self.gradients

    def error(self, loss: float, step: int, *, lr: float, warmup_steps: int) -> FloatingPointError:
        """The error that ends the run: the first inf or NaN loss in fp32 or bf16, the ``limit``-th in
        a row under fp16; it names the learning rate and warm-up to change."""
        fp16 = f" ({self.limit} in a row under fp16, each step skipped)" if self.limit > 1 else ""
        fp32 = ", or train in fp32 (TrainConfig(precision='fp32'))" if self.limit > 1 else ""
        return FloatingPointError(
            f"The loss became {loss} at step {step}{fp16}; lower the learning rate (now {lr}) "
            f"or raise the warm-up (now {warmup_steps} steps){fp32}."
        )

    def counts(self) -> dict[str, int]:
        """The steps skipped, by cause: ``{"loss": ..., "gradients": ...}`` (``history.skipped``)."""
        return {"loss": self.loss, "gradients": self.gradients}

    def state_dict(self) -> dict[str, int]:
        """The counts, for a checkpoint."""
        return {**self.counts(), "in_a_row": self.in_a_row}

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Continue the counts of a resumed run (``{}``: none yet)."""
        self.loss, self.gradients = state.get("loss", 0), state.get("gradients", 0)
        self.in_a_row, self.scale = state.get("in_a_row", 0), self.scaler.get_scale()


__all__ = ["NONFINITE_IN_A_ROW", "SkippedSteps"]
