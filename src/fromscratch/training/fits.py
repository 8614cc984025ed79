"""Does a training run fit the GPU? Say so before training starts, not after ten minutes (chapters 06-14).

Call :func:`check_run` before ``train`` on a CUDA device, with the run's longest batch
(:func:`~fromscratch.training.batches.probe_batch` finds it), against the memory still free on the
GPU: a run that will not fit stops at once with a ``ValueError`` saying by how much and what to change
(``train`` itself does not estimate; on CUDA it only explains an out-of-memory error when one comes).
A chapter may also check several runs at once, before the first of them, with :func:`check_fits` and
each run's estimated peak:

    from fromscratch.training.fits import check_fits
    from fromscratch.training.memory import estimate_memory
    from fromscratch.training.precision import choose_precision

    half = choose_precision(device).name  # the precision `train` will use here: "fp16" on a T4
    check_fits({"7.6 generator": estimate_memory(size.model, size.batch_size, precision=half)}, device)

Both ask the course's one rule, :func:`fromscratch.training.memory.fits`: a run fits when its step's
peak plus the CUDA context takes at most ``margin`` (80 %) of the memory, the GPU's whole memory for
:func:`check_fits`, what is still free for :func:`check_run`. A run that does not fit raises a
``ValueError`` saying by how much; on a CPU or MPS there is no fixed memory to check against and
both return at once.

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

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map_only

from fromscratch.training.batches import batch_size, take, tensors_in
from fromscratch.training.memory import CUDA_CONTEXT, MARGIN, MemoryEstimate, fits, gpu_peak, mib
from fromscratch.training.precision import Precision


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
    with StorageWatch(*params, *tensors_in(batch)) as watch:
        loss_fn(model, batch).backward()
    peak = watch.peak_without([p.grad for p in params if p.grad is not None])
    model.zero_grad(set_to_none=True)
    return peak - sum(p.untyped_storage().nbytes() for p in params)


def estimate_training(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    *,
    precision: str | Precision = "fp32",
    probe: int = 8,
) -> MemoryEstimate:
    """Estimate the peak of one AdamW training step of ``model`` on ``batch`` (any model, any batch).

    The activations come from :func:`activation_peak` for ``b // probe`` and twice as many examples of
    ``batch`` (cut with :func:`~fromscratch.training.batches.take`, so every length stays; at least 2
    and 4), on the model's device under autocast to ``precision`` (a :class:`Precision` or its name:
    "fp16"/"bf16"; "fp32": none), extended linearly to the whole batch (what does not grow with ``b``,
    like autocast's 16-bit weight copies, is the line's intercept; with too few examples,
    batch-independent temporaries hide the slope); weights, all their gradients and AdamW's moments
    are added from the parameter count, as chapter 12's estimate adds them. ``loss_fn(model, batch)``
    is the loss ``train`` would call.
    """
    chosen = precision if isinstance(precision, Precision) else Precision.named(precision)
    b = batch_size(batch)
    small = min(b, max(2, b // probe))  # never 1: a lone example's temporaries bend the line (a CNN's)
    large = min(b, 2 * small)
    device = next(model.parameters()).device.type

    def peak(k: int) -> int:
        part = tree_map_only(torch.Tensor, torch.clone, take(batch, k, b))  # its own storage: k, not b
        with chosen.autocast(device):  # as `train` runs it
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


def check_fits(
    runs: dict[str, MemoryEstimate | int],
    device: torch.device | str,
    *,
    device_bytes: float | None = None,
    margin: float = MARGIN,
) -> dict[str, float]:
    """Check that every run fits ``margin`` of the device's memory (the rule of
    :func:`~fromscratch.training.memory.fits`); ``{run: share of the memory}``.

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
    shares = {name: gpu_peak(need) / device_bytes for name, need in runs.items()}
    over = [name for name, need in runs.items() if not fits(need, device_bytes, margin=margin)]
    if over:
        lines = "; ".join(
            f"{name} needs {mib(gpu_peak(runs[name]))}, {mib(gpu_peak(runs[name]) - margin * device_bytes)} "
            f"more than {margin:.0%} of {mib(device_bytes)}"
            for name in over
        )
        raise ValueError(
            f"Not enough GPU memory: {lines} (CUDA context included). Use a smaller profile "
            f"(FROMSCRATCH_PROFILE=cpu), a smaller batch, or checkpointing (chapter 12)."
        )
    return shares


def free_memory(model: nn.Module, device: torch.device | str) -> tuple[int, int, int]:
    """``(usable, free, total)`` bytes of a CUDA ``device`` for a run of ``model``: what a run that will
    need :func:`gpu_peak` bytes can have.

    ``free`` and ``total`` come from ``torch.cuda.mem_get_info`` (every process's use left out of
    ``free``). ``usable`` adds back what is this run's already: the blocks PyTorch's caching allocator
    holds unused (reserved, not allocated), ``model``'s weights on the GPU and the CUDA context.
    """
    free, total = torch.cuda.mem_get_info(device)
    cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    weights = sum(p.numel() * p.element_size() for p in model.parameters() if p.is_cuda)
    return free + cached + weights + CUDA_CONTEXT, free, total


def check_run(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    precision: Precision,
    device: torch.device | str,
    *,
    device_bytes: float | None = None,
    name: str = "this training run",
    margin: float = MARGIN,
) -> dict[str, float]:
    """The check before a run's first step: does one step of ``model`` on ``batch`` (on ``device``) in
    ``precision`` fit ``margin`` (80 %) of the GPU memory the run can have (the rule of
    :func:`~fromscratch.training.memory.fits`)? ``{name: share of it}``.

    The estimate is :func:`estimate_training`'s, on the batch given (give the longest one
    :func:`~fromscratch.training.batches.probe_batch` finds). On a CUDA device it is checked against
    the memory still free (:func:`free_memory`), not the GPU's total, so earlier models and other
    processes count; the ``ValueError`` says by how much the run is short and whether freeing memory
    would be enough.
    device_bytes: check against a pretend device of that size, all of it free (:func:`check_fits`);
    on a CPU or MPS without it nothing is checked and ``{}`` comes back.
    """
    if torch.device(device).type != "cuda" and device_bytes is None:
        return {}
    try:
        estimate = estimate_training(model, loss_fn, batch, precision=precision)
    except torch.cuda.OutOfMemoryError as error:  # even a quarter of the batch does not fit
        raise ValueError(
            f"Not enough GPU memory for a quarter of one batch of this run ({error}). Use a smaller "
            f"profile (FROMSCRATCH_PROFILE=cpu), a smaller batch, or checkpointing (chapter 12)."
        ) from None
    if device_bytes is not None:
        return check_fits({name: estimate}, device, device_bytes=device_bytes, margin=margin)
    need = gpu_peak(estimate)
    usable, free, total = free_memory(model, device)
    if fits(estimate, usable, margin=margin):
        return {name: need / usable}
    if fits(estimate, total, margin=margin):  # the GPU is big enough, but something else holds its memory
        fix = (
            f"It would fit were the GPU free: {mib(max(0, total - usable))} of it is held by other "
            f"tensors or processes. Free them (del earlier models and optimisers, then "
            f"torch.cuda.empty_cache()) or restart the runtime; or use a smaller batch."
        )
    else:
        fix = "Use a smaller profile (FROMSCRATCH_PROFILE=cpu), a smaller batch, or checkpointing (ch. 12)."
    raise ValueError(
        f"Not enough free GPU memory: {name} needs {mib(need)} (CUDA context included), "
        f"{mib(need - margin * usable)} more than {margin:.0%} of the {mib(usable)} it can have "
        f"({mib(free)} free of the GPU's {mib(total)}, plus what the run holds already). {fix}"
    )


__all__ = [
    "StorageWatch",
    "activation_peak",
    "check_fits",
    "check_run",
    "estimate_training",
    "free_memory",
]
