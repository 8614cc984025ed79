"""What a piece of work costs a GPU, counted anywhere: FLOPs, bytes moved, operations; and the time model.

Shared by the GPU plan (``gpu_plan.py``, counted on the CPU) and the GPU check (``gpu_check.py``, counted
and timed on a GPU):

- :func:`counted` runs a callable once under ``FlopCounterMode`` and :class:`Traffic` and returns its
  matmul FLOPs, its aten operations (about one kernel launch each) and the bytes those operations read
  and write (each operation's tensor arguments and results; views move nothing): an unfused eager step
  moves about that much through the GPU's memory;
- :class:`Card` and :data:`CARDS`: each GPU's effective rates, and :meth:`Card.ms` the time model,
  fitted on the GPU check of 2026-11-26 (an H200; ``benchmarks/gpu_check_report.py`` prints the fit)::

      ms = max(ops x host_us,  ops x kernels_per_op x kernel_us + FLOPs / rate + bytes / bandwidth)

  The host dispatches every operation (Python, autocast, the launch: 36 us each, measured); the GPU runs
  ~1.16 kernels per operation, each at least 11 us however small (measured), plus its arithmetic and its
  memory traffic at the card's effective rates. Our models are small, so the first two terms matter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils import flop_counter
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

FREE = {"empty", "empty_like", "empty_strided", "detach", "lift_fresh", "_local_scalar_dense", "set_"}
HOST_US, KERNEL_US, KERNELS_PER_OP = 36.0, 11.0, 1.16  # the H200 fit of 2026-11-26 (gpu_check_report.py)


class Traffic(TorchDispatchMode):
    """Counts aten operations and the bytes their tensor arguments and results occupy."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func._schema.name.split("::")[-1] in FREE or func.is_view:
            return out
        self.ops += 1
        for t in tree_leaves((args, kwargs, out)):
            if isinstance(t, torch.Tensor):
                self.bytes += t.numel() * t.element_size()
        return out


def _as_many_heads(backward: bool):
    """A FlopCounterMode formula for fused attention that accepts fewer key/value heads (GQA, chapter 14,
    which torch 2.11's counter refuses): the scores cost what they cost with every query head."""

    def counted(*shapes, out_shape=None, **kwargs) -> int:
        first = 1 if backward else 0  # a backward's shapes start with the output's gradient
        q, k, v = shapes[first : first + 3]
        k, v = (k[0], q[1], *k[2:]), (v[0], q[1], *v[2:])
        if backward:
            return flop_counter.sdpa_backward_flop_count(shapes[0], q, k, v)
        return flop_counter.sdpa_flop_count(q, k, v)

    return counted


ATEN = torch.ops.aten
FUSED = (  # every fused attention kernel of the CPU and of CUDA, forward and backward
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
)
MAPPING = {getattr(ATEN, n): _as_many_heads("backward" in n) for n in FUSED if hasattr(ATEN, n)}


@dataclass(frozen=True)
class Counts:
    """The cost of one piece of work: matmul FLOPs, aten operations, bytes they read and write."""

    flops: float
    ops: int
    bytes: float

    def __mul__(self, n: float) -> Counts:
        return Counts(self.flops * n, round(self.ops * n), self.bytes * n)

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.flops + other.flops, self.ops + other.ops, self.bytes + other.bytes)


def counted(work: Callable[[], object]) -> Counts:
    """Run ``work()`` once and count it."""
    with flop_counter.FlopCounterMode(display=False, custom_mapping=MAPPING) as flops, Traffic() as t:
        work()
    return Counts(flops.get_total_flops(), t.ops, t.bytes)


@dataclass(frozen=True)
class Card:
    """A GPU as the time model sees it: effective rates (what large products and copies reach)."""

    name: str
    rate: dict[str, float]  # matmul FLOP/s by precision
    bandwidth: float  # bytes/s, a large copy's reads plus writes
    kernel_us: float = KERNEL_US  # a kernel's least cost
    host_us: float = HOST_US  # the host's cost to dispatch one operation
    kernels_per_op: float = KERNELS_PER_OP

    def ms(self, c: Counts, precision: str) -> float:
        """Milliseconds for work of counts ``c`` in ``precision`` ("fp16", "bf16", "fp32")."""
        host = c.ops * self.host_us / 1000
        device = c.ops * self.kernels_per_op * self.kernel_us / 1000
        device += 1000 * (c.flops / self.rate[precision] + c.bytes / self.bandwidth)
        return max(host, device)


# Effective rates: the datasheet's peak times what a large product or copy reaches. T4: 30 of 65 TFLOP/s
# in fp16 (its 70 W cap lowers the clock), 5 of 8.1 in fp32, 230 of 320 GB/s; L4: 60 of 121, 15 of 30,
# 240 of 300 GB/s; A100 (40 GB): 200 of 312, 15 of 19.5, 1,300 of 1,555 GB/s; H100: measured on a lent
# machine of this workplace (798 TFLOP/s bf16, 3.0 TB/s; fp32 as the H200 measured, 50). A Colab host's
# two slow vCPUs dispatch operations no faster than the H200 machine's host: host_us is a lower bound.
CARDS = {
    "T4": Card("T4", {"fp16": 30e12, "bf16": 30e12, "fp32": 5e12}, 230e9),
    "L4": Card("L4", {"fp16": 60e12, "bf16": 60e12, "fp32": 15e12}, 240e9),
    "A100": Card("A100", {"fp16": 200e12, "bf16": 200e12, "fp32": 15e12}, 1300e9),
    "H100": Card("H100", {"fp16": 790e12, "bf16": 798e12, "fp32": 50e12}, 3000e9),
}
