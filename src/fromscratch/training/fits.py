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
RNNs, CNNs), :func:`estimate_training` runs a forward and backward pass of one and of two examples of
a real batch on the CPU, in the 16-bit type (CPU autocast), watching every tensor storage with
:class:`StorageWatch`, and extends the line to the whole batch; weights, gradients and AdamW's two
moments come from the parameter count.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map_only

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


class StorageWatch(TorchDispatchMode):
    """Bytes of tensor storage alive while active (``current``) and the most at once (``peak``), any device.

    Every storage an operation creates counts once (views share it) until it is freed (a weak reference
    says when); ``existing`` tensors (weights, optimiser state, the batch) count from the start;
    :meth:`set_aside` stops counting a tensor that lives on (a finished gradient) in ``current``.
    """

    def __init__(self, *existing: torch.Tensor) -> None:
        super().__init__()
        self.live: dict[int, int] = {}  # storage -> bytes
        self.current = self.peak = 0
        for tensor in existing:
            self._track(tensor)

    def _track(self, tensor: Any) -> None:
        if not isinstance(tensor, torch.Tensor):
            return
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key not in self.live:
            self.live[key] = storage.nbytes()
            self.current += self.live[key]
            self.peak = max(self.peak, self.current)
            weakref.finalize(storage, self._free, key)

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def set_aside(self, tensor: torch.Tensor) -> None:
        """Stop counting ``tensor``'s storage from now on (the peak so far keeps it)."""
        self._free(tensor.untyped_storage()._cdata)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_leaves(out):
            self._track(tensor)
        return out


def activation_peak(model: nn.Module, loss_fn: Callable[[nn.Module, Any], torch.Tensor], batch: Any) -> int:
    """The most bytes a forward and backward pass of ``batch`` holds beyond the weights and the finished
    gradients: saved activations, the backward's temporaries and the batch itself (measured here)."""
    model.zero_grad(set_to_none=True)
    params = list(model.parameters())
    with StorageWatch(*params, *_tensors(batch)) as watch:
        hooks = [
            p.register_post_accumulate_grad_hook(lambda p: watch.set_aside(p.grad))
            for p in params
            if p.requires_grad
        ]
        try:
            loss_fn(model, batch).backward()
        finally:
            for hook in hooks:
                hook.remove()
    model.zero_grad(set_to_none=True)
    return watch.peak - sum(p.untyped_storage().nbytes() for p in params)


def estimate_training(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    *,
    precision: str = "fp32",
    probe: tuple[int, int] = (1, 2),
) -> MemoryEstimate:
    """Estimate the peak of one AdamW training step of ``model`` on ``batch`` (any model, any batch).

    The activations come from :func:`activation_peak` for ``probe`` examples of ``batch`` (cut with
    :func:`take`, so every length stays) on the CPU, under autocast to ``precision`` ("fp16"/"bf16";
    "fp32": none), extended linearly to the whole batch (what does not grow with ``b``, like autocast's
    16-bit weight copies, is the line's intercept); weights, all their gradients and AdamW's moments
    are added from the parameter count, as chapter 12's estimate adds them.
    ``loss_fn(model, batch)`` is the loss ``train`` would call; the model must be on the CPU.
    """
    if precision not in DTYPES:
        raise ValueError(f"precision must be one of {', '.join(map(repr, DTYPES))}; got {precision!r}.")
    b = batch_size(batch)
    small, large = (min(k, b) for k in probe)
    dtype = DTYPES[precision]

    def peak(k: int) -> int:
        part = tree_map_only(torch.Tensor, torch.clone, take(batch, k, b))  # its own storage: k, not b
        with torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext():
            return activation_peak(model, loss_fn, part)

    first, second = peak(small), peak(large)
    per_example = (second - first) / (large - small) if large > small else first / small
    n_params = sum(p.numel() for p in model.parameters())
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return MemoryEstimate(
        parameters=4 * n_params,
        gradients=4 * trained,
        optimizer=8 * trained,
        weight_copies=0,  # inside the activations: autocast keeps its 16-bit copies for the backward
        activations=round(first + per_example * (b - small)),  # with the backward's temporaries, the batch
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


__all__ = [
    "CUDA_CONTEXT",
    "StorageWatch",
    "activation_peak",
    "batch_size",
    "check_fits",
    "estimate_training",
    "gpu_peak",
    "step_peak",
    "take",
]
