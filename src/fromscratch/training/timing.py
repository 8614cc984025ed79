"""One way to time a training step (chapters 08, 09, 12, 14 and 15, and the GPU plan's record).

``time_step(model, batch, loss_fn, device=device)`` returns the median seconds of one step as
:func:`~fromscratch.training.train` runs it: zero the gradients, the forward pass under the
precision's autocast, the backward pass through its loss scaler (on for fp16 only), then one AdamW
update (fused on CUDA, as in ``train``). Warm-up steps come first (memory, kernel choice), and with CUDA
the clock is read only after the GPU has finished (:func:`fromscratch.utils.time_call`).

The step is real: the model's weights and gradients change, so time a copy when they matter. The
model's train/eval mode is put back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from fromscratch.training.batches import to_device
from fromscratch.training.precision import choose_precision
from fromscratch.utils import time_call


def time_step(
    model: nn.Module,
    batch: Any,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    *,
    device: torch.device | str = "cpu",
    precision: str = "fp32",
    repeats: int = 3,
    warmup: int = 1,
    lr: float = 1e-4,
    update: bool = True,
    accumulate: int = 1,
    grad_clip: float | None = None,
    threads: int | None = None,
) -> float:
    """Median seconds of one training step of ``model`` on ``batch`` (moved to ``device``, as the model).

    loss_fn: ``loss_fn(model, batch)``, the scalar loss, as ``train`` takes it.
    precision: a ``TrainConfig.precision`` name ("fp32", "auto", "bf16", ...: ``choose_precision``).
    update: False times the gradients alone (forward and backward, no optimiser).
    accumulate: backward passes of ``batch`` per update, each loss divided by it (``train``'s accumulation).
    grad_clip: clip the gradients' norm to this before the update, as ``train`` does (None: no clipping).
    threads: torch's CPU threads while timing (1: steadier on a shared machine); None keeps them.
    """
    if accumulate < 1:
        raise ValueError(f"accumulate must be at least 1, got {accumulate}")
    device = torch.device(device)
    chosen = choose_precision(device, precision)
    scaler = chosen.grad_scaler(device)  # a pass-through except under fp16
    trainable = [p for p in model.to(device).parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("The model has no trainable parameters: there is no training step to time.")
    optimizer = torch.optim.AdamW(trainable, lr=lr, fused=device.type == "cuda" or None)
    batch = to_device(batch, device)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        for _ in range(accumulate):
            with chosen.autocast(device):  # the forward pass only
                loss = loss_fn(model, batch) / accumulate
            scaler.scale(loss).backward()
        if not update:
            return
        if grad_clip is not None:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(trainable, grad_clip)
        scaler.step(optimizer)
        scaler.update()

    was_training = model.training
    model.train()
    try:
        return time_call(step, repeats=repeats, warmup=warmup, statistic="median", threads=threads)
    finally:
        model.train(was_training)


__all__ = ["time_step"]
