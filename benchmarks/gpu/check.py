"""The GPU check: a few real steps of every recorded run on this GPU, through the course's own ``train``.

    python benchmarks/gpu/check.py --pack records.jsonl --json check.json [--budget 300] [--fp16]
    python benchmarks/gpu/check.py --quick      # the same code on the CPU, each run on one example

For each run of the pack (``pack.py``: the chapters' ``train`` calls at their ``gpu`` size) it rebuilds
the model, draws a batch of the recorded shapes and trains through ``train`` in the run's own precision
("auto": bf16 on an H100 or H200; ``--fp16`` adds fp16 with its loss scaler, a T4's): 2 steps to warm up,
then 2 and 2 + n steps timed with the device synchronised, the difference over n being a step's time;
then 10 steps under ``torch.profiler``, whose kernel time a step over that step time is **GPU busy**,
the share of a step the GPU computes rather than waits for the host. A step's FLOPs come from
``FlopCounterMode``, the bytes its operations read and write from a dispatch mode, its peak from
``max_memory_allocated``. One line per run, the median GPU busy, one line per chapter (its runs' minutes
at these step times), and last ``GPU check: <n> chapters, <k> problems``: a crash, a non-finite loss,
or a peak that would not fit a 15 GB T4 (``fromscratch.training.memory.fits``). The JSON, written after
every run (no run starts after ``--budget`` seconds), is ``report.py``'s: keep it in
``benchmarks/results/gpu_check_<date>.json``.

``--quick`` takes the record committed in ``benchmarks/results/`` and runs each run on the CPU with one
example a batch, one step warm and one timed: the pack's models, batches and losses, checked in CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch
from pack import Skipped, batch_of, leaves, loss_of, name, read, rebuild, runs
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from fromscratch.training import TrainConfig, train
from fromscratch.training.memory import T4_BYTES, fits
from fromscratch.training.precision import PrecisionWarning, choose_precision, device_name

RECORD = Path(__file__).parents[1] / "results" / "records-gpu.jsonl"  # notebooks.py --record, gpu size
LR = 1e-4  # small: the weights are drawn afresh, not trained; the check is about time and memory


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def steps(run: dict[str, Any], model, batch, n: int, precision: str, device: torch.device) -> float:
    """Seconds of ``n`` steps of ``train`` on ``batch`` (the run's own config, its length and lr aside)."""
    fields = {**run["config"], "steps": n, "epochs": None, "minutes": None, "lr": LR, "warmup_steps": 0}
    fields.update(eval_every=None, checkpoint=None, resume=False, progress=False, precision=precision)
    fields["betas"] = tuple(fields["betas"])
    sync(device)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        train(model, [batch], loss_of(run["loss"]), TrainConfig(**fields), device=device)
    sync(device)
    return time.perf_counter() - started


class Moved(TorchDispatchMode):
    """Bytes the operations read and write: their tensor arguments and results (views move nothing)."""

    bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not func.is_view:
            self.bytes += sum(
                t.nbytes for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)
            )
        return out


def measure(run: dict[str, Any], precision: str, device: torch.device, quick: bool) -> dict[str, Any]:
    """One run in one precision: ms a step, GPU busy, FLOPs, bytes, kernels, peak (or what went wrong)."""
    result: dict[str, Any] = {"precision": choose_precision(device, precision).name}
    try:
        model, batch = rebuild(run, device), batch_of(run["batch"], device, torch.Generator().manual_seed(0))
        first = steps(run, model, batch, 1 if quick else 2, precision, device)
        if quick:  # one step shows the code runs; its time (one example, the CPU) measures nothing
            result.update(ms_per_step=1000 * first, timed_steps=1)
            return result
        n = max(10, min(50, int(2.0 / first)))
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        short = steps(run, model, batch, 2, precision, device)
        long = steps(run, model, batch, 2 + n, precision, device)
        result.update(ms_per_step=1000 * max(long - short, 1e-9) / n, timed_steps=n)
        if device.type == "cuda":
            from torch.profiler import ProfilerActivity, profile

            result["peak_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                steps(run, model, batch, 10, precision, device)
            kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            kernel_ms = sum(e.device_time for e in kernels) / 1000 / 10
            result.update(
                kernels=len(kernels) / 10, kernel_ms=kernel_ms, busy=kernel_ms / result["ms_per_step"]
            )
        # the work of one step: its matmul FLOPs, the bytes its operations read and write
        with FlopCounterMode(display=False) as flops, Moved() as moved:
            steps(run, model, batch, 1, precision, device)
        result.update(flops=flops.get_total_flops(), bytes=moved.bytes)
    except Skipped as why:
        result["skipped"] = str(why)
    except Exception as error:  # reported; the check goes on with the next run
        result["error"] = f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:300]}"
    finally:
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return result


def card(device: torch.device) -> dict[str, float]:
    """The card's own ceilings: copy bandwidth (read + write), matmul rates, the host's launch rate."""
    from fromscratch.utils import time_call

    a = torch.empty(2**28, device=device).normal_()  # 1 GiB
    out = {"copy_GBps": 2 * a.nbytes / time_call(a.clone, repeats=10, statistic="median") / 1e9}
    for precision, dtype, n in (
        ("bf16", torch.bfloat16, 8192),
        ("fp16", torch.half, 8192),
        ("fp32", torch.float, 4096),
    ):
        x = torch.randn(n, n, device=device, dtype=dtype)
        out[f"matmul_{precision}_TFLOPs"] = (
            2 * n**3 / time_call(lambda x=x: x @ x, repeats=5, statistic="median") / 1e12
        )
    small, started = torch.zeros(16, device=device), time.perf_counter()
    for _ in range(2000):
        small.add_(1.0)
    sync(device)
    return {**out, "launch_us": 1e6 * (time.perf_counter() - started) / 2000}


def say(run: dict[str, Any], results: dict[str, Any]) -> str:
    parts = []
    for r in results.values():
        if "ms_per_step" not in r:
            parts.append(
                f"{r['precision']} "
                + (f"skipped: {r['skipped']}" if "skipped" in r else f"FAILED: {r['error']}")
            )
            continue
        busy = f", GPU busy {100 * r['busy']:.0f} %" if "busy" in r else ""
        peak = f", peak {r['peak_mib']:,.0f} MiB" if "peak_mib" in r else ""
        flops = f", {r['flops'] / 1e9:,.1f} GFLOP, {r['bytes'] / 1e9:,.2f} GB" if "flops" in r else ""
        parts.append(f"{r['precision']} {r['ms_per_step']:.2f} ms/step{busy}{peak}{flops}")
    return f"  {name(run)} x{run['count']}: " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pack", type=Path, default=RECORD, help="the record of the chapters at gpu size")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument("--quick", action="store_true", help="on the CPU, one example a batch")
    parser.add_argument("--fp16", action="store_true", help="also fp16 with its scaler (a T4's precision)")
    parser.add_argument("--budget", type=float, default=float("inf"), help="seconds: start no run after them")
    parser.add_argument("--chapters", nargs="*", default=[], help="two-digit numbers (all)")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.quick else "cpu")
    todo = [r for r in runs(read(args.pack)) if not args.chapters or r["chapter"][:2] in args.chapters]
    for run in todo if args.quick else []:  # one example: the first dimension of the batch's tensors cut to 1
        b = next(iter(leaves(run["batch"])), {"shape": [0]})["shape"][:1]
        for tensor in leaves(run["batch"]):
            tensor["shape"][:1] = [1] if tensor["shape"][:1] == b else tensor["shape"][:1]
    report: dict[str, Any] = {"device": device_name(device), "torch": torch.__version__, "runs": {}}
    report.update(date=time.strftime("%Y-%m-%d"), card=card(device) if device.type == "cuda" else {})
    print(f"GPU check: {report['device']}, torch {torch.__version__}, {len(todo)} runs", flush=True)
    started, problems, skipped, busy, chapters = time.perf_counter(), [], [], [], {}
    for run in todo:
        if time.perf_counter() - started > args.budget:
            problems.append(f"{name(run)}: not run within --budget")
            continue
        asked = [run["config"]["precision"]] + ["fp16"] * (args.fp16 and run["config"]["precision"] == "auto")
        results = {p: measure(run, p, device, args.quick) for p in asked}
        print(say(run, results), flush=True)
        first = results[asked[0]]
        skipped += [f"{name(run)}: {first['skipped']}"] if "skipped" in first else []
        problems += [
            f"{name(run)} ({r['precision']}): {r['error']}" for r in results.values() if "error" in r
        ]
        too_big = [
            r for r in results.values() if "peak_mib" in r and not fits(int(r["peak_mib"] * 2**20), T4_BYTES)
        ]
        problems += [f"{name(run)}: its peak would not fit a T4"] * bool(too_big)
        busy += [first["busy"]] if "busy" in first else []
        if "ms_per_step" in first:
            minutes = (
                run["config"]["minutes"]
                if run["steps"] is None
                else run["steps"] * first["ms_per_step"] / 6e4
            )
            chapters[run["chapter"][:2]] = chapters.get(run["chapter"][:2], 0.0) + run["count"] * minutes
        report["runs"][run["key"]] = {k: run[k] for k in ("chapter", "name", "cells", "count", "steps")}
        report["runs"][run["key"]]["precisions"] = results
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
    if busy:
        print(f"GPU busy: median {100 * statistics.median(busy):.0f} % over {len(busy)} runs (goal: 80 %)")
    for chapter, minutes in sorted(chapters.items()):
        print(f"  chapter {chapter}: {minutes:.1f} min of training at these step times")
    print(
        "".join(f"  skipped: {s}\n" for s in skipped) + "".join(f"  problem: {p}\n" for p in problems), end=""
    )
    print(f"GPU check: {len({r['chapter'] for r in todo})} chapters, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
