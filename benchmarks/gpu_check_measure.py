"""How the GPU check measures a training run and the card (``gpu_check.py``).

Every step goes through the course's own ``train`` (its precision switch, GradScaler, clipping, AdamW):

- **the first call** gets a list of one batch, so ``train`` runs its memory check (``check_run``) on a GPU;
- **counts** of one step: matmul FLOPs (``FlopCounterMode``), the aten operations dispatched (about one
  kernel launch each) and the bytes they read and write (each operation's tensor arguments and results;
  views move nothing) -- the three terms of a roofline time model;
- on CUDA, **the kernels** of one step (``torch.profiler``): how many, and how long the GPU was busy;
- **ms per step**: two runs of ``n1`` and ``n2`` steps over an endless iterator (``train`` then skips its
  memory check), timed with the device synchronised; the difference over ``n2 - n1`` leaves set-up out;
- **peak memory**: ``torch.cuda.max_memory_allocated`` over the timed runs.
"""

from __future__ import annotations

import itertools
import os
import time
import warnings
from typing import Any

import torch
from gpu_check_pack import PackedRun, unpack_model
from step_counts import counted

from fromscratch.training import TrainConfig, to_device, train
from fromscratch.training.precision import PrecisionWarning, choose_precision

LR = 1e-4  # small: the weights are redrawn, not trained; the check is about time, memory and overflow


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def steps(model, batches, loss_fn, n: int, precision: str, device: torch.device):
    """``train`` for ``n`` steps (given a list, ``train`` first checks on a GPU that a step fits)."""
    config = TrainConfig(steps=n, lr=LR, precision=precision, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        return train(model, batches, loss_fn, config, device=device)


def timed(model, batch, loss_fn, n: int, precision: str, device: torch.device) -> float:
    """Seconds of ``n`` steps through ``train``, the device synchronised before and after."""
    sync(device)
    started = time.perf_counter()
    steps(model, itertools.repeat(batch), loss_fn, n, precision, device)
    sync(device)
    return time.perf_counter() - started


def counts(model, batch, loss_fn, precision: str, device: torch.device) -> dict[str, float]:
    """Matmul FLOPs, aten operations and bytes moved of one training step (forward, backward, AdamW)."""
    c = counted(lambda: steps(model, iter([batch]), loss_fn, 1, precision, device))
    return {"flops": c.flops, "ops": c.ops, "bytes": c.bytes}


def kernels(model, batch, loss_fn, precision: str, device: torch.device) -> dict[str, float]:
    """Kernels launched in one step and the milliseconds the GPU spent in them (CUDA only)."""
    if device.type != "cuda" or os.environ.get("GPU_CHECK_NO_PROFILER"):
        return {}
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        steps(model, iter([batch]), loss_fn, 1, precision, device)
        sync(device)
    gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return {"kernels": len(gpu), "kernel_ms": sum(e.device_time for e in gpu) / 1000}


def measure_run(
    run: PackedRun, device: torch.device, precisions: list[str], seconds: float
) -> dict[str, Any]:
    """Everything the check reports for one run, in each of ``precisions`` ("auto", and "fp16" as a T4)."""
    row: dict[str, Any] = {"chapter": run.chapter, "run": run.name, "params": run.params}
    row.update(tokens=run.tokens, steps=run.steps, minutes=run.minutes, count=run.count)
    row["estimated_mib"] = {p: b / 2**20 for p, b in run.estimated.items()}
    batch = to_device(run.batch, device)
    for asked in precisions:
        precision = run.precision if asked == "auto" else asked
        if run.precision == "fp32":  # the chapter asks for fp32 on every card: nothing else to see
            precision = "fp32"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrecisionWarning)
            name = choose_precision(device, precision).name
        key = "auto" if asked == "auto" else name
        if any(r["precision"] == name for r in row.get("precisions", {}).values()):
            continue  # e.g. a run the chapter keeps in fp32: once is enough
        result: dict[str, Any] = {"precision": name}
        model = unpack_model(run, device)
        try:
            started = time.perf_counter()
            steps(model, [batch], run.loss, 2, precision, device)  # warm-up, and check_run
            sync(device)
            first = (time.perf_counter() - started) / 2
            try:  # a count that fails (an attention kernel the counter does not know) costs only the count
                result.update(counts(model, batch, run.loss, precision, device))
            except Exception as error:
                result["count_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            if asked == "auto":  # the profiler once per run
                result.update(kernels(model, batch, run.loss, precision, device))
            n = max(3, min(40, int(seconds / max(first, 1e-4))))
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            short = timed(model, batch, run.loss, 2, precision, device)
            long = timed(model, batch, run.loss, 2 + n, precision, device)
            result["ms_per_step"] = 1000 * max(long - short, 1e-9) / n
            result["timed_steps"] = n
            if device.type == "cuda":
                result["peak_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
                result["reserved_mib"] = torch.cuda.max_memory_reserved(device) / 2**20
        except Exception as error:  # reported, and the check goes on with the next run
            result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
        finally:
            del model
            if device.type == "cuda":
                torch.cuda.empty_cache()
        row.setdefault("precisions", {})[key] = result
    return row


def card(device: torch.device, quick: bool) -> dict[str, float]:
    """The card's own ceilings: copy bandwidth, matmul rates by type, and the host's launch rate."""
    from fromscratch.utils import time_call

    out: dict[str, float] = {}
    n_bytes = (8 if quick else 1024) * 2**20
    a = torch.empty(n_bytes // 4, device=device).normal_()
    b = torch.empty_like(a)
    out["copy_GBps"] = 2 * n_bytes / time_call(lambda: b.copy_(a), repeats=10, statistic="median") / 1e9
    a = b = None  # the copy's 2 GiB back before the matrices
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16"), (torch.float32, "fp32")):
        n = 256 if quick else 8192
        x = torch.randn(n, n, device=device, dtype=dtype)
        y = torch.randn(n, n, device=device, dtype=dtype)
        seconds = time_call(lambda x=x, y=y: x @ y, repeats=5, statistic="median")
        out[f"matmul_{name}_TFLOPs"] = 2 * n**3 / seconds / 1e12
    small = torch.zeros(16, device=device)
    calls = 200 if quick else 5000
    sync(device)
    started = time.perf_counter()
    for _ in range(calls):
        small.add_(1.0)
    sync(device)
    out["launch_us"] = 1e6 * (time.perf_counter() - started) / calls
    return out


def measure_cell(cell, profile: str, device: torch.device) -> dict[str, Any]:
    """A heavy cell (``heavy_cells.Cell``) on ``device``: each part's unit timed once after a warm-up,
    times its units; the seconds the cell takes at the profile's sizes."""
    from fromscratch.chapters import get_profile

    started = time.perf_counter()
    result: dict[str, Any] = {"chapter": cell.chapter, "cell": cell.name, "parts": {}}
    try:
        total = 0.0
        for part in cell.parts(get_profile(profile), device):
            part.unit()  # warm-up: allocation, kernel choice
            sync(device)
            begun = time.perf_counter()
            part.unit()
            sync(device)
            seconds = time.perf_counter() - begun
            result["parts"][part.name] = {"unit_ms": 1000 * seconds, "units": part.units}
            total += seconds * part.units
        result["seconds_at_gpu_size"] = total
        slowest = max(result["parts"].items(), key=lambda kv: kv[1]["unit_ms"] * kv[1]["units"])
        name, most = slowest
        result["summary"] = f"{total:.1f} s, most in {name} ({most['unit_ms']:.1f} ms x {most['units']:,.0f})"
    except Exception as error:  # reported; the check goes on
        result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
    finally:
        if device.type == "cuda":
            torch.cuda.empty_cache()
    result["wall_seconds"] = time.perf_counter() - started
    return result
