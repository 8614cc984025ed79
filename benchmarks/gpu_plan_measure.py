"""How ``gpu_plan.py`` measures a run on the CPU: its counts, the peak of a step, the estimates, the minutes.

See ``gpu_plan.py`` for the method; the cards and the time model are in ``step_counts.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from gpu_plan_runs import Run
from step_counts import CARDS, Card, Counts, counted
from torch.utils._pytree import tree_map_only

from fromscratch.training.batches import batch_size, take
from fromscratch.training.fits import StorageWatch, estimate_training
from fromscratch.training.memory import CUDA_CONTEXT, MODELS, T4_BYTES, estimate_memory, step_peak
from fromscratch.training.precision import choose_for_gpu

STEP_SECONDS = 15.0  # a step measured on the CPU takes about this long at most (from one example's)
CPU_BYTES = 3 * 2**30  # fp32 peak of the step measured on the CPU at most (the machine is shared)


@dataclass(frozen=True)
class Gpu:
    """A GPU the plan is made for: what "auto" picks on it, its memory, and its time model."""

    name: str
    capability: tuple[int, int]  # CUDA compute capability: decides what precision="auto" picks
    memory: float  # bytes
    card: Card  # step_counts.CARDS: effective rates, the host's and a kernel's costs


GPUS = [
    Gpu("T4", (7, 5), T4_BYTES, CARDS["T4"]),
    Gpu("L4", (8, 9), 22.5e9, CARDS["L4"]),
    Gpu("A100", (8, 0), 40e9, CARDS["A100"]),
    Gpu("H100", (9, 0), 80e9, CARDS["H100"]),  # the card of a lent machine (an H200 computes as one)
]
T4 = GPUS[0]


def step_counts(model, loss_fn, batch, precision: str) -> Counts:
    """FLOPs, operations and bytes of one AdamW step (forward and loss under autocast in ``precision``,
    backward, clipping, the update), as ``train`` runs it; counted on the CPU."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, foreach=True)  # as on a GPU: multi-tensor
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            loss = loss_fn(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    step()  # the first creates AdamW's moments; count the steady state
    c = counted(step)
    model.zero_grad(set_to_none=True)
    return c


# A training step dispatches more aten operations on CUDA than on the CPU (CUDA's autocast casts more
# operations to fp32, e.g. softmax and the norms): 1193 / 864, 843 / 624 and 703 / 493 operations for
# 07's generator, 10.4's BERT and 14's GPT-2 rung (the H200 check's counts over the CPU's). FLOPs and bytes
# agree within 2 %.
CUDA_OPS_PER_CPU_OP = 1.38


def whole_batch(model, loss_fn, batch, b: int, precision: str) -> Counts:
    """A step's counts for the whole batch of ``b`` examples from counts at 2 and 4 examples: FLOPs and
    bytes grow along the line through the two (weights, gradients and AdamW's state do not grow with the
    batch), operations not at all. Counting, unlike timing, costs the same on a busy machine."""
    small, large = min(2, b), min(4, b)
    at = {
        k: step_counts(model, loss_fn, tree_map_only(torch.Tensor, torch.clone, take(batch, k, b)), precision)
        for k in {small, large}
    }
    if small == large:
        return Counts(at[small].flops, round(at[small].ops * CUDA_OPS_PER_CPU_OP), at[small].bytes)
    per_flop = (at[large].flops - at[small].flops) / (large - small)
    per_byte = (at[large].bytes - at[small].bytes) / (large - small)
    ops = round(at[large].ops * CUDA_OPS_PER_CPU_OP)
    return Counts(at[large].flops + per_flop * (b - large), ops, at[large].bytes + per_byte * (b - large))


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
    counts: Counts  # one optimiser step of the whole batch in the T4's precision: FLOPs, operations, bytes
    k: int  # sequences measured on the CPU (of b)
    b: int
    gpu_bytes: int  # estimated T4 peak in its "auto" precision, CUDA context included
    precision: str  # what "auto" (or the run's own precision) picks on a T4
    estimated: int  # fp32 at k
    measured: int  # fp32 at k, MemTracker
    cpu_seconds: float  # one fp32 step at k on this CPU

    @property
    def flops(self) -> float:
        return self.counts.flops

    def step_ms(self, gpu: Gpu) -> float:
        """A step's milliseconds on ``gpu`` by the time model (``step_counts.Card.ms``)."""
        return gpu.card.ms(self.counts, choose_for_gpu(gpu.capability, self.run.precision).name)

    def minutes(self, gpu: Gpu) -> float:
        """The run's minutes on ``gpu`` (all ``count`` of them): its budget, or steps x the model's step."""
        if self.run.minutes is not None:
            return self.run.minutes * self.run.count
        return self.run.steps * self.step_ms(gpu) / 60_000 * self.run.count


def measure(run: Run) -> Row:
    """Build the run's model and batch, count, step, estimate (see the module's docstring)."""
    torch.manual_seed(0)
    model, batch, loss_fn = run.build()
    model.train()
    b = batch_size(batch)
    precision = choose_for_gpu(T4.capability, run.precision).name
    loss_fn(model, take(batch, 1, b)).backward()  # warm up
    started = time.perf_counter()
    loss_fn(model, take(batch, 1, b)).backward()  # one example: how long a step of k takes, about
    one = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    full32 = estimate(run, model, loss_fn, batch, "fp32")
    k = max(1, min(b, int(STEP_SECONDS / one), int(b * CPU_BYTES / max(full32, 1))))
    part = tree_map_only(torch.Tensor, torch.clone, take(batch, k, b))  # its own storage: k, not b
    counts = whole_batch(model, loss_fn, batch, b, precision)
    measured, seconds = measured_peak(model, loss_fn, part)
    return Row(
        run=run,
        params=sum(p.numel() for p in model.parameters()),
        tokens=run.tokens(batch) if run.tokens else _default_tokens(batch),
        counts=counts,
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
