"""What chapter 16 and ``benchmarks/flash_attention.py`` share: naive attention written out, and the peak
memory of a forward + backward pass, measured.

- ``naive_attention``: ``softmax(q kᵀ / sqrt(d)) v`` with the whole ``(tq, tk)`` matrix, the reference every
  tiled result is compared with (causal aligned to the end, as ``flash.flash_attention``);
- ``peak_bytes``: the most memory ``fn()`` held at once beyond what existed before it: on a CUDA device
  the allocator's peak, on the CPU the running sum of every allocation and free the PyTorch profiler
  records (``profile_memory=True``), in order;
- ``attention_step`` and ``memory_rows``: one forward + backward of an attention function on fresh
  ``(1, h, t, d)`` inputs, and its peak for several lengths.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

__all__ = ["attention_step", "load_average", "memory_rows", "naive_attention", "peak_bytes", "random_qkv"]


def naive_attention(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False) -> Tensor:
    """Attention written out (chapter 03): the ``(..., tq, tk)`` scores, their softmax, the weighted values.

    q ``(..., tq, d)``, k ``(..., tk, d)``, v ``(..., tk, dv)``. ``causal``: query ``i`` sees keys
    ``j <= i + tk - tq``; a query that sees no key gets zeros. Returns ``(..., tq, dv)``.
    """
    tq, tk = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (..., tq, tk)
    if not causal:
        return torch.softmax(scores, dim=-1) @ v  # (..., tq, dv)
    visible = torch.ones(tq, tk, dtype=torch.bool, device=q.device).tril(tk - tq)  # (tq, tk)
    sees_some = visible.any(dim=-1, keepdim=True)  # (tq, 1): False only when tq > tk
    scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~sees_some, 0.0)
    weights = torch.softmax(scores, dim=-1).masked_fill(~sees_some, 0.0)  # (..., tq, tk)
    return weights @ v  # (..., tq, dv)


def peak_bytes(fn: Callable[[], object], device: torch.device | str = "cpu") -> int:
    """The most bytes ``fn()`` held allocated at one time beyond what was allocated when it started.

    CUDA: ``torch.cuda.max_memory_allocated`` after a reset. CPU: every allocation and free inside
    ``fn()``, as the PyTorch profiler records them (``profile_memory=True``), summed in time order; the
    running total's maximum is the peak. Tensors ``fn`` returns count while they live inside it. (The
    profiler's log lines are silenced through ``KINETO_LOG_LEVEL``, unless it is set already.)
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - start
    from torch.profiler import ProfilerActivity, profile

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # the profiler's own start and stop lines: quiet
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as recorder:
        fn()
    events = [e for e in recorder.profiler.kineto_results.events() if e.name() == "[memory]"]
    events = [e for e in events if e.device_type() == torch.autograd.DeviceType.CPU]
    held = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        held += event.nbytes()  # an allocation adds its bytes, a free subtracts them
        peak = max(peak, held)
    return peak


def random_qkv(
    t: int, d: int, *, heads: int = 1, device: torch.device | str = "cpu", seed: int = 0
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``q, k, v`` ``(1, heads, t, d)`` (requiring gradients) and an upstream gradient ``dout``, fp32."""
    g = torch.Generator().manual_seed(seed)
    q, k, v, dout = (torch.randn(1, heads, t, d, generator=g).to(device) for _ in range(4))
    return q.requires_grad_(), k.requires_grad_(), v.requires_grad_(), dout


def attention_step(attention: Callable[..., Tensor], q: Tensor, k: Tensor, v: Tensor, dout: Tensor) -> None:
    """One forward + backward pass: ``attention(q, k, v)``, then its gradients for ``dout``."""
    attention(q, k, v).backward(dout)


def memory_rows(
    attentions: Mapping[str, Callable[..., Tensor]],
    lengths: Sequence[int],
    d: int,
    *,
    heads: int = 1,
    device: torch.device | str = "cpu",
) -> dict[str, list[int]]:
    """``{name: [peak bytes of a forward + backward at each length]}`` for each attention function.

    Inputs are ``(1, heads, t, d)`` fp32, made before the measurement (they do not count; the gradients
    and everything the pass allocates do)."""
    rows: dict[str, list[int]] = {name: [] for name in attentions}
    for t in lengths:
        for name, attention in attentions.items():
            inputs = random_qkv(t, d, heads=heads, device=device)  # q, k, v, dout: made before, not counted
            rows[name].append(peak_bytes(lambda a=attention, x=inputs: attention_step(a, *x), device))
            del inputs
    return rows


def load_average() -> float:
    """The machine's 1-minute load average (NaN where the system does not say): print it beside a timing."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
