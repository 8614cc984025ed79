"""The batch chapter 08 times its four sequence models on (8.1).

The four models come at one parameter budget from :func:`~fromscratch.models.budget_configs` (the
recurrent and convolutional ``hidden`` widths sized so that each has as many parameters as the
transformer; the bag cannot be sized: it has only its embedding). A step is timed by the library's one
way, :func:`fromscratch.training.time_step` (forward, backward, AdamW), on :func:`random_batch`.

The equal-*time* comparison needs nothing here: ``train(..., TrainConfig(minutes=...))`` stops every
model on the same wall clock, and each evaluation row of its history records the training seconds
spent so far (``history.series("accuracy", x="seconds")``).

Shape legend: ``b`` batch, ``t`` length.
"""

from __future__ import annotations

import torch
from torch import Tensor


def random_batch(
    b: int, t: int, vocab_size: int, *, num_classes: int = 2, seed: int = 0
) -> dict[str, Tensor]:
    """A batch of random tokens for timing: ``tokens (b, t)`` in ``1..vocab_size-1``, every position
    real (``padding_mask (b, t)`` all True), random ``labels (b,)``."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, vocab_size, (b, t), generator=generator)  # (b, t)
    labels = torch.randint(0, num_classes, (b,), generator=generator)  # (b,)
    return {"tokens": tokens, "padding_mask": torch.ones_like(tokens, dtype=torch.bool), "labels": labels}


__all__ = ["random_batch"]
