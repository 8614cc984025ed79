"""Does a training run fit the GPU? Say so before training starts, not after ten minutes (chapters 06-14).

``train`` calls :func:`check_run` on a CUDA device before its first step, with the run's first batch: a
run that will not fit stops at once with a ``ValueError`` saying by how much. A chapter may also check
several runs at once, before the first of them, with :func:`check_fits` and each run's estimated peak:

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
RNNs, CNNs), :func:`estimate_training` runs a forward and backward pass of an eighth and of a quarter
of a real batch in the 16-bit type, watching every tensor storage with :class:`StorageWatch`, and
extends the line to the whole batch; weights, gradients and AdamW's two moments come from the
parameter count:

    model = EncoderDecoder(size.model).to(device)
    check_fits({"9.5 transformer": estimate_training(model, loss_fn, batch, precision=half)}, device)
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
from fromscratch.training.precision import Precision

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
    says when); ``existing`` tensors (weights, optimiser state, the batch) count from the start.
    :meth:`peak_without` replays the same events as if some storages (the gradients) never existed.
    """

    def __init__(self, *existing: torch.Tensor) -> None:
        super().__init__()
        self.live: dict[int, tuple[int, int]] = {}  # storage -> (its serial number, bytes)
        self.events: list[tuple[int, int]] = []  # (serial, +bytes when created / -bytes when freed)
        self.current = self.peak = 0
        for tensor in existing:
            self._track(tensor)

    def _track(self, tensor: Any) -> None:
        if not isinstance(tensor, torch.Tensor):
            return
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key not in self.live:
            self.live[key] = (len(self.events), storage.nbytes())
            self.events.append(self.live[key])
            self.current += storage.nbytes()
            self.peak = max(self.peak, self.current)
            weakref.finalize(storage, self._free, key)

    def _free(self, key: int) -> None:
        serial, nbytes = self.live.pop(key, (-1, 0))
        self.current -= nbytes
        self.events.append((serial, -nbytes))

    def peak_without(self, tensors: list[torch.Tensor]) -> int:
        """The peak had the storages of ``tensors`` (alive now) never been allocated."""
        left_out = {
            self.live[t.untyped_storage()._cdata][0]
            for t in tensors
            if t.untyped_storage()._cdata in self.live
        }
        current = peak = 0
        for serial, change in self.events:
            if serial not in left_out:
                current += change
                peak = max(peak, current)
        return peak

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_leaves(out):
            self._track(tensor)
        return out


def activation_peak(model: nn.Module, loss_fn: Callable[[nn.Module, Any], torch.Tensor], batch: Any) -> int:
    """The most bytes a forward and backward pass of ``batch`` holds beyond the weights and their
    gradients: saved activations, the backward's temporaries and the batch itself (measured here)."""
    model.zero_grad(set_to_none=True)
    params = list(model.parameters())
    with StorageWatch(*params, *_tensors(batch)) as watch:
        loss_fn(model, batch).backward()
    peak = watch.peak_without([p.grad for p in params if p.grad is not None])
    model.zero_grad(set_to_none=True)
    return peak - sum(p.untyped_storage().nbytes() for p in params)


def estimate_training(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    *,
    precision: str = "fp32",
    probe: int = 8,
) -> MemoryEstimate:
    """Estimate the peak of one AdamW training step of ``model`` on ``batch`` (any model, any batch).

    The activations come from :func:`activation_peak` for ``b // probe`` and twice as many examples of
    ``batch`` (cut with :func:`take`, so every length stays; at least 2 and 4), on the model's device
    under autocast to ``precision`` ("fp16"/"bf16"; "fp32": none), extended linearly to the whole batch
    (what does not grow with ``b``, like autocast's 16-bit weight copies, is the line's intercept; with
    too few examples, batch-independent temporaries hide the slope); weights, all their gradients and
    AdamW's moments are added from the parameter count, as chapter 12's estimate adds them.
    ``loss_fn(model, batch)`` is the loss ``train`` would call.
    """
    if precision not in DTYPES:
        raise ValueError(f"precision must be one of {', '.join(map(repr, DTYPES))}; got {precision!r}.")
    b = batch_size(batch)
    small = min(b, max(2, b // probe))  # never 1: a lone example's temporaries bend the line (a CNN's)
    large = min(b, 2 * small)
    device = next(model.parameters()).device.type
    dtype = DTYPES[precision]

    def peak(k: int) -> int:
        part = tree_map_only(torch.Tensor, torch.clone, take(batch, k, b))  # its own storage: k, not b
        with Precision(dtype, dtype == torch.float16).autocast(device):  # as `train` runs it
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


def check_run(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    precision: Precision,
    device: torch.device | str,
    *,
    device_bytes: float | None = None,
) -> dict[str, float]:
    """``train``'s check before its first step: does one step of ``model`` on ``batch`` (on ``device``) in
    ``precision`` fit? The estimate of :func:`estimate_training`, checked by :func:`check_fits` (which
    returns ``{}`` on a CPU or MPS unless ``device_bytes`` is given)."""
    if torch.device(device).type != "cuda" and device_bytes is None:
        return {}
    try:
        estimate = estimate_training(model, loss_fn, batch, precision=precision.name)
    except torch.cuda.OutOfMemoryError as error:  # even a quarter of the batch does not fit
        raise ValueError(
            f"Not enough GPU memory for a quarter of one batch of this run ({error}). Use a smaller "
            f"profile (FROMSCRATCH_PROFILE=cpu), a smaller batch, or checkpointing (chapter 12)."
        ) from None
    return check_fits({"this training run": estimate}, device, device_bytes=device_bytes)


__all__ = [
    "CUDA_CONTEXT",
    "StorageWatch",
    "activation_peak",
    "batch_size",
    "check_fits",
    "check_run",
    "estimate_training",
    "gpu_peak",
    "step_peak",
    "take",
]
