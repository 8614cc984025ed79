"""How ``gpu_plan.py`` measures one run on the CPU: FLOPs, the peak of a step, the estimates, the minutes.

See ``gpu_plan.py`` for the method and the assumptions (the cards' peaks and MFUs are here, in :data:`GPUS`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from gpu_plan_runs import Run
from torch.utils import flop_counter
from torch.utils._pytree import tree_map_only

from fromscratch.training.fits import (
    CUDA_CONTEXT,
    StorageWatch,
    batch_size,
    estimate_training,
    step_peak,
    take,
)
from fromscratch.training.memory import MODELS, T4_BYTES, estimate_memory
from fromscratch.training.precision import choose_for_gpu

STEP_SECONDS = 15.0  # a step measured on the CPU takes about this long at most (from one example's)
CPU_BYTES = 3 * 2**30  # fp32 peak of the step measured on the CPU at most (the machine is shared)


@dataclass(frozen=True)
class Gpu:
    """A GPU the plan is made for: its memory, its peak FLOP/s and the share of them assumed reached."""

    name: str
    capability: tuple[int, int]  # CUDA compute capability: decides what precision="auto" picks
    memory: float  # bytes
    peak: dict[str, float]  # dense FLOP/s by precision (tensor cores for 16 bits)
    mfu: dict[str, float]  # assumed share of that peak a step of our models reaches


GPUS = [
    Gpu("T4", (7, 5), T4_BYTES, {"fp16": 65e12, "fp32": 8.1e12}, {"fp16": 0.20, "fp32": 0.40}),
    Gpu(
        "L4",
        (8, 9),
        22.5e9,
        {"bf16": 121e12, "fp16": 121e12, "fp32": 30.3e12},
        {"bf16": 0.15, "fp16": 0.15, "fp32": 0.40},
    ),
    Gpu(
        "A100",
        (8, 0),
        40e9,
        {"bf16": 312e12, "fp16": 312e12, "fp32": 19.5e12},
        {"bf16": 0.08, "fp16": 0.08, "fp32": 0.40},
    ),
    Gpu(  # the card a lent GPU machine has (an H200 computes as one): where the plan meets a measurement
        "H100",
        (9, 0),
        80e9,
        {"bf16": 989e12, "fp16": 989e12, "fp32": 67e12},
        {"bf16": 0.05, "fp16": 0.05, "fp32": 0.40},
    ),
]
T4 = GPUS[0]
ATEN = torch.ops.aten


def _sdpa(q, k, v, *args, out_shape=None, **kwargs) -> int:
    return flop_counter.sdpa_flop_count(q, k, v)


def _sdpa_backward(grad, q, k, v, *args, out_shape=None, **kwargs) -> int:
    return flop_counter.sdpa_backward_flop_count(grad, q, k, v)


CPU_ATTENTION = {  # the CPU's fused attention, counted as FlopCounterMode counts CUDA's
    ATEN._scaled_dot_product_flash_attention_for_cpu: _sdpa,
    ATEN._scaled_dot_product_flash_attention_for_cpu_backward: _sdpa_backward,
}


def step_flops(model, loss_fn, batch) -> int:
    """Matmul FLOPs of one forward and backward pass (what MFU counts)."""
    with flop_counter.FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION) as counter:
        loss_fn(model, batch).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops()


def measured_peak(model, loss_fn, batch, steps: int = 3) -> tuple[int, float]:
    """(peak bytes of the last of ``steps`` fp32 AdamW steps, seconds of one step) on the CPU."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, foreach=True)  # as on a GPU: multi-tensor

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model, batch).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    started = time.perf_counter()
    for _ in range(steps - 1):  # the first creates AdamW's moments; then the steady state
        step()
    seconds = (time.perf_counter() - started) / (steps - 1)
    state = [v for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    with StorageWatch(*model.parameters(), *state, *_tensors(batch)) as memory:
        step()
    return memory.peak, seconds


def _tensors(batch: Any) -> list[torch.Tensor]:
    if isinstance(batch, torch.Tensor):
        return [batch]
    parts = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else []
    return [t for part in parts for t in _tensors(part)]


def estimate(run: Run, model, loss_fn, batch, precision: str) -> int:
    """Estimated peak bytes of a step (no CUDA context): chapter 12's estimator from the config where it
    covers the model, else the saved tensors counted; the optimiser's step where that is higher."""
    config = getattr(model, "config", None)
    if type(config) in MODELS and run.attention:
        guess = estimate_memory(
            config, batch_size(batch), _length(batch), precision=precision, attention=run.attention
        )
    else:
        guess = estimate_training(model, loss_fn, batch, precision=precision)
    return step_peak(guess)


def _length(batch: Any) -> int:
    """t: the second dimension of the batch's first 2-D tensor (the inputs)."""
    return next(t.shape[1] for t in _tensors(batch) if t.dim() == 2)


class Row(NamedTuple):
    run: Run
    params: int
    tokens: int  # token positions per step (sequence elements, patches, ratings)
    flops: float  # per optimiser step, whole batch
    k: int  # sequences measured on the CPU (of b)
    b: int
    gpu_bytes: int  # estimated T4 peak in its "auto" precision, CUDA context included
    precision: str  # what "auto" (or the run's own precision) picks on a T4
    estimated: int  # fp32 at k
    measured: int  # fp32 at k, MemTracker
    cpu_seconds: float  # one fp32 step at k on this CPU

    def minutes(self, gpu: Gpu) -> float:
        """The run's minutes on ``gpu`` (all ``count`` of them): its budget, or FLOPs / (peak x MFU)."""
        if self.run.minutes is not None:
            return self.run.minutes * self.run.count
        name = choose_for_gpu(gpu.capability, self.run.precision).name
        rate = gpu.peak[name] * gpu.mfu[name]
        return self.run.steps * self.flops / rate / 60 * self.run.count


def measure(run: Run) -> Row:
    """Build the run's model and batch, count, step, estimate (see the module's docstring)."""
    torch.manual_seed(0)
    model, batch, loss_fn = run.build()
    model.train()
    b = batch_size(batch)
    step_flops(model, loss_fn, take(batch, 1, b))  # warm up
    started = time.perf_counter()
    loss_fn(model, take(batch, 1, b)).backward()  # one example: how long a step of k takes, about
    one = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    full32 = estimate(run, model, loss_fn, batch, "fp32")
    k = max(1, min(b, int(STEP_SECONDS / one), int(b * CPU_BYTES / max(full32, 1))))
    part = tree_map_only(torch.Tensor, torch.clone, take(batch, k, b))  # its own storage: k, not b
    flops = step_flops(model, loss_fn, part) * b / k
    measured, seconds = measured_peak(model, loss_fn, part)
    precision = choose_for_gpu(T4.capability, run.precision).name
    return Row(
        run=run,
        params=sum(p.numel() for p in model.parameters()),
        tokens=run.tokens(batch) if run.tokens else _default_tokens(batch),
        flops=flops,
        k=k,
        b=b,
        gpu_bytes=estimate(run, model, loss_fn, batch, precision) + CUDA_CONTEXT,
        precision=precision,
        estimated=estimate(run, model, loss_fn, part, "fp32"),
        measured=measured,
        cpu_seconds=seconds,
    )


def _default_tokens(batch: Any) -> int:
    two = [t for t in _tensors(batch) if t.dim() == 2 and not t.is_floating_point()]
    return two[0].numel() if two else batch_size(batch)
