"""The learning-rate schedule of the one training loop (:func:`fromscratch.training.train`).

A linear warm-up over the first ``warmup_steps`` steps, then a linear decay that reaches zero when
the run ends. The end is a number of steps, a time budget, or whichever of the two comes first: with
``TrainConfig(minutes=15)`` the decay follows the seconds spent training, so the learning rate is
zero exactly when the 15 minutes run out however fast or slow the steps turn out to be (chapter 09).

``shape="cosine"`` (``TrainConfig(schedule="cosine")``, chapter 14) decays along half a cosine wave
instead of a straight line, ``(1 + cos(π · progress)) / 2``: it stays near the peak longer and
lingers near zero at the end, the schedule of GPT-3, Llama and most language models since
(Loshchilov & Hutter 2017 introduced it, with restarts). Here, as the linear decay does, it reaches 0.
``shape="cosine10"`` (chapter 19) ends at 10 % of the peak instead,
``0.1 + 0.9 · (1 + cos(π · progress)) / 2``: Chinchilla's schedule (decayed tenfold, over exactly the run's
length) and Llama's.
"""

from __future__ import annotations

import math

SHAPES = ("linear", "cosine", "cosine10")  # how the learning rate decays after the warm-up


def lr_factor(step: int, warmup_steps: int, total_steps: int, decay: bool = True) -> float:
    """The schedule by steps: linear warm-up over ``warmup_steps``, then a linear decay to 0 at
    ``total_steps``."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if not decay:
        return 1.0
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


class Schedule:
    """The multiplier of the peak learning rate at each step, by steps and/or by seconds of training.

    ``total_steps`` and ``seconds`` bound the run (either may be ``None``, not both). The loop adds
    each step's duration to ``elapsed``; after the warm-up, the decay's progress is the larger of the
    fraction of steps done and the fraction of the time budget spent since the warm-up ended.
    """

    def __init__(
        self,
        warmup_steps: int,
        total_steps: int | None,
        seconds: float | None,
        decay: bool = True,
        shape: str = "linear",
    ):
        if total_steps is None and seconds is None:
            raise ValueError("A schedule needs an end: a number of steps, a time budget, or both.")
        if shape not in SHAPES:
            raise ValueError(f"schedule must be one of {', '.join(map(repr, SHAPES))}; got {shape!r}.")
        self.shape = shape  # "linear" or "cosine" decay after the warm-up
        self.warmup_steps, self.total_steps, self.seconds, self.decay = (
            warmup_steps,
            total_steps,
            seconds,
            decay,
        )
        self.elapsed = 0.0  # seconds spent in training steps so far (evaluations and checkpoints excluded)
        self.warmup_end: float | None = None  # `elapsed` when the warm-up finished

    def progress(self, step: int) -> float:
        """How far through the decay the run is after ``step`` steps: 0 at the end of warm-up, 1 at the
        end."""
        if step >= self.warmup_steps and self.warmup_end is None:
            self.warmup_end = self.elapsed
        fractions = [0.0]
        if self.total_steps is not None:
            fractions.append((step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps))
        if self.seconds is not None and self.warmup_end is not None:
            fractions.append((self.elapsed - self.warmup_end) / max(1e-9, self.seconds - self.warmup_end))
        return max(fractions)

    def __call__(self, step: int) -> float:
        """The factor for the step about to run (``torch.optim.lr_scheduler.LambdaLR`` calls this)."""
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        if not self.decay:
            return 1.0
        done = min(1.0, self.progress(step))  # 0 at the end of the warm-up, 1 at the end of the run
        if self.shape == "linear":
            return 1.0 - done
        wave = 0.5 * (1.0 + math.cos(math.pi * done))  # 1 -> 0 along half a cosine
        return wave if self.shape == "cosine" else 0.1 + 0.9 * wave

    def finished(self, step: int) -> bool:
        """True once ``step`` steps are done or the time budget is spent."""
        if self.total_steps is not None and step >= self.total_steps:
            return True
        return self.seconds is not None and self.elapsed >= self.seconds

    @property
    def bar_total(self) -> float:
        """What a progress bar counts to: steps, or seconds when the run is bounded only by time."""
        return self.total_steps if self.total_steps is not None else float(self.seconds or 0.0)

    def state_dict(self) -> dict[str, float | None]:
        return {"elapsed": self.elapsed, "warmup_end": self.warmup_end}

    def load_state_dict(self, state: dict[str, float | None]) -> None:
        self.elapsed = float(state.get("elapsed") or 0.0)
        self.warmup_end = state.get("warmup_end")


__all__ = ["SHAPES", "Schedule", "lr_factor"]
