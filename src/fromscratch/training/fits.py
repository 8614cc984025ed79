"""Does a training run fit the GPU? Say so before training starts, not after ten minutes (chapters 06-13).

A chapter calls :func:`check_fits` before its first long run, with the estimated peak of each run:

    from fromscratch.training.fits import check_fits
    from fromscratch.training.memory import estimate_memory
    from fromscratch.training.precision import choose_precision

    half = choose_precision(device).name  # the precision `train` will use here: "fp16" on a T4
    check_fits({"7.6 generator": estimate_memory(size.model, size.batch_size, precision=half)}, device)

On a CUDA device it compares each estimate plus :data:`CUDA_CONTEXT` with ``margin`` (80 %) of the
GPU's memory and raises a ``ValueError`` naming every run that does not fit and by how much; on a CPU
or MPS there is no fixed memory to check against and it returns at once.

:func:`estimate_memory <fromscratch.training.memory.estimate_memory>` (chapter 12) estimates
generators and classifiers from their configs. For every other model (encoder-decoders, BERT, ViTs,
RNNs), :func:`estimate_training` counts what autograd saves for the backward pass on the CPU, for one
and two examples of a real batch in the 16-bit type (CPU autocast), and extends the line to the whole
batch; weights, gradients and AdamW's two moments come from the parameter count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from fromscratch.training.memory import MemoryEstimate, mib

CUDA_CONTEXT = 600 * 2**20  # bytes the CUDA context and cuBLAS/cuDNN workspaces hold before any tensor
DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


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


def _tensors(batch: Any) -> list[torch.Tensor]:
    """Every tensor in a (nested) tuple, list or dict batch."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    parts = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else []
    return [tensor for part in parts for tensor in _tensors(part)]


def estimate_training(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    *,
    precision: str = "fp32",
    probe: tuple[int, int] = (1, 2),
) -> MemoryEstimate:
    """Estimate the peak of one AdamW training step of ``model`` on ``batch`` (any model, any batch).

    The activations are counted, not guessed: the tensors autograd saves for the backward pass (as
    :func:`~fromscratch.training.memory.measure_activations` counts them) on the CPU for ``probe``
    examples of ``batch`` (cut with :func:`take`, so every length stays), under autocast to ``precision``
    ("fp16"/"bf16"; "fp32": none), extended linearly to the whole batch (what does not grow with ``b``,
    like autocast's 16-bit weight copies, is the line's intercept). To them come the batch itself and,
    once, a tensor as large as the largest saved one: the gradient flowing into it in the backward pass.
    The model stays on the CPU; ``loss_fn(model, batch)`` is the loss ``train`` would call.
    """
    if precision not in DTYPES:
        raise ValueError(f"precision must be one of {', '.join(map(repr, DTYPES))}; got {precision!r}.")
    b = batch_size(batch)
    small, large = (min(k, b) for k in probe)
    dtype = DTYPES[precision]
    autocast = torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}

    def saved(k: int) -> torch.Tensor:
        """(bytes saved for the backward, bytes of the largest saved storage) for ``k`` examples."""
        part, seen = take(batch, k, b), {}

        def pack(tensor: torch.Tensor) -> torch.Tensor:
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in params:
                seen[storage.data_ptr()] = storage.nbytes()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), autocast:
            loss_fn(model, part)
        return torch.tensor([sum(seen.values()), max(seen.values(), default=0)], dtype=torch.float64)

    first, second = saved(small), saved(large)
    per_example = (second - first) / (large - small) if large > small else first / small
    total, largest = (first + per_example * (b - small)).tolist()
    inputs = sum(t.numel() * t.element_size() for t in _tensors(batch))
    activations = round(total + largest) + inputs
    n_params = sum(p.numel() for p in model.parameters())
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return MemoryEstimate(
        parameters=4 * n_params,
        gradients=4 * trained,
        optimizer=8 * trained,
        weight_copies=0,  # inside the counted activations: autocast saves its copies for the backward
        activations=activations,  # saved tensors, the largest one's gradient, the batch
        per_block=0,
        scores=0,
        recompute=0,
    )


def step_peak(estimate: MemoryEstimate) -> int:
    """The peak of a training step: the estimate's total (the start of the backward pass), or the
    optimiser's step if that is more (weights, gradients, AdamW's moments and, on a GPU, one fp32
    temporary per weight: ``torch.optim.AdamW``'s multi-tensor update takes the moments' square roots)."""
    return max(estimate.total, estimate.parameters + 2 * estimate.gradients + estimate.optimizer)


def gpu_peak(estimate: MemoryEstimate | int) -> int:
    """Bytes a run needs on a GPU: the step's peak (:func:`step_peak`, or bytes) and the CUDA context."""
    return (step_peak(estimate) if isinstance(estimate, MemoryEstimate) else int(estimate)) + CUDA_CONTEXT


def check_fits(
    runs: dict[str, MemoryEstimate | int],
    device: torch.device | str,
    *,
    device_bytes: float | None = None,
    margin: float = 0.8,
) -> dict[str, float]:
    """Check that every run fits ``margin`` of the device's memory; ``{run: share of the memory}``.

    runs: each run's name and its estimated peak (a :class:`MemoryEstimate`, or bytes), without the
    CUDA context (added here). device_bytes: the memory to check against (default: the CUDA device's
    own; on a CPU or MPS without it nothing is checked and ``{}`` comes back).
    Raises a ``ValueError`` naming each run that does not fit and by how much.
    """
    device = torch.device(device)
    if device_bytes is None:
        if device.type != "cuda":
            return {}
        device_bytes = torch.cuda.get_device_properties(device).total_memory
    usable = margin * device_bytes
    shares = {name: gpu_peak(need) / device_bytes for name, need in runs.items()}
    over = {name: gpu_peak(need) - usable for name, need in runs.items() if gpu_peak(need) > usable}
    if over:
        lines = "; ".join(
            f"{name} needs {mib(gpu_peak(runs[name]))}, {mib(extra)} more than {margin:.0%} of "
            f"{mib(device_bytes)}"
            for name, extra in over.items()
        )
        raise ValueError(
            f"Not enough GPU memory: {lines} (CUDA context included). Use a smaller profile "
            f"(FROMSCRATCH_PROFILE=cpu), a smaller batch, or checkpointing (chapter 12)."
        )
    return shares


__all__ = ["CUDA_CONTEXT", "batch_size", "check_fits", "estimate_training", "gpu_peak", "step_peak", "take"]
