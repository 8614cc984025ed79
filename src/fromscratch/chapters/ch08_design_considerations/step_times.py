"""Comparing the four sequence models fairly: one way to time a step (chapter 08).

The four models come at one parameter budget from :func:`~fromscratch.models.budget_configs` (the
recurrent and convolutional ``hidden`` widths sized so that each has as many parameters as the
transformer; the bag cannot be sized: it has only its embedding). This module holds the timing:

- :func:`step_seconds`: the time of one training step (forward, backward, optimiser) on one batch,
  and :func:`random_batch`, the batch of random tokens it is timed on.

The equal-*time* comparison needs nothing here: ``train(..., TrainConfig(minutes=...))`` stops every
model on the same wall clock, and each evaluation row of its history records the training seconds
spent so far (``history.series("accuracy", x="seconds")``).

Shape legend: ``b`` batch, ``t`` length.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from fromscratch.training import to_device
from fromscratch.training.losses import classification_loss
from fromscratch.utils import time_call


def _sgd_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict[str, Tensor]) -> None:
    optimizer.zero_grad(set_to_none=True)
    classification_loss(model, batch).backward()
    optimizer.step()


def step_seconds(
    model: nn.Module, batch: dict[str, Tensor], *, repeats: int = 3, device: torch.device | str = "cpu"
) -> float:
    """Median seconds of one training step of ``model`` on ``batch``: forward, backward, AdamW update.

    ``batch``: ``tokens (b, t)``, ``padding_mask (b, t)``, ``labels (b,)``. One untimed step comes first
    (memory, kernel choice). The model's weights change (it is trained on the batch); use a fresh one.
    """
    model.to(device).train()
    batch = to_device(batch, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return time_call(lambda: _sgd_step(model, optimizer, batch), repeats=repeats, statistic="median")


def random_batch(
    b: int, t: int, vocab_size: int, *, num_classes: int = 2, seed: int = 0
) -> dict[str, Tensor]:
    """A batch of random tokens for timing: ``tokens (b, t)`` in ``1..vocab_size-1``, every position
    real (``padding_mask (b, t)`` all True), random ``labels (b,)``."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, vocab_size, (b, t), generator=generator)  # (b, t)
    labels = torch.randint(0, num_classes, (b,), generator=generator)  # (b,)
    return {"tokens": tokens, "padding_mask": torch.ones_like(tokens, dtype=torch.bool), "labels": labels}


__all__ = ["random_batch", "step_seconds"]
