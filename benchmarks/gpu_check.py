"""The GPU check: every chapter's ``gpu``-profile training and heavy cells on a real GPU, beside the plan.

One prepared script for a GPU machine that is lent for minutes, has no network and takes 64 MiB of files.
Two steps:

    python benchmarks/gpu_check.py --pack gpu_pack.pt       # here, on the CPU, with the data: ~10 MB
    python benchmarks/gpu_check.py --from gpu_pack.pt --json out.json   # there, on the GPU

For every training run of the GPU plan (``gpu_plan_runs.py``, ``gpu_plan_later.py``) it rebuilds the
model at its ``gpu`` size with the pack's real batch (see ``gpu_check_pack.py``) and trains it through
``train`` for 3-40 steps (see ``gpu_check_measure.py``), in the precision "auto" picks on this card
and in fp16 with a loss scaler, as on a T4. It prints per run the precision, ms per step, the peak memory
beside the plan's estimate, the FLOPs, bytes and kernels of a step, and the run's minutes at that rate;
then each heavy cell that is not training (``heavy_cells.py``), a unit of each part timed and multiplied;
then one line per chapter, beside the plan, and last ``GPU check: <n> chapters, <k> problems``.
A problem is a crash, a non-finite loss, a peak over the estimate, or a cell over 60 s.

    python benchmarks/gpu_check.py --quick     # the same code on the CPU at smoke sizes (make test)

``--budget`` (seconds) stops starting new runs once spent, so a lease is never overrun; what was measured
is in the JSON, written after every run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
from gpu_check_measure import card, measure_cell, measure_run
from gpu_check_pack import load_pack, make_pack, save_pack
from gpu_plan_measure import GPUS
from heavy_cells import CELLS
from step_counts import Counts

from fromscratch.training.precision import device_name

MEMORY_SLACK = 1.15  # a peak above 115 % of the plan's estimate (+ 64 MiB) is a problem
CELL_LIMIT = 60.0  # seconds: a cell over this at gpu size is a problem (it belongs on the device or the plan)


def plan_card(device: torch.device):
    """The GPU plan's entry for this card (an H200 computes as an H100), or None."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for gpu in GPUS:
        if gpu.name in name or (gpu.name == "H100" and "H200" in name):
            return gpu
    return None


def plan_ms(row: dict[str, Any], result: dict[str, Any], gpu) -> float | None:
    """The plan's ms per step on ``gpu``: its time model (``step_counts``) on the counts measured here."""
    if gpu is None or "flops" not in result:
        return None
    return gpu.card.ms(Counts(result["flops"], result["ops"], result["bytes"]), result["precision"])


def run_minutes(row: dict[str, Any], ms: float) -> float:
    """The run's minutes (all its ``count``) at ``ms`` per step, or its budget."""
    if row["minutes"] is not None:
        return row["minutes"] * row["count"]
    return row["steps"] * row["count"] * ms / 60000


def problems_of(row: dict[str, Any]) -> list[str]:
    found = []
    for r in row["precisions"].values():
        where = f"{row['chapter']} {row['run']} ({r['precision']})"
        if "error" in r:
            found.append(f"{where}: {r['error']}")
            continue
        estimate = row["estimated_mib"].get(r["precision"])
        if "peak_mib" in r and estimate and r["peak_mib"] > MEMORY_SLACK * estimate + 64:
            found.append(f"{where}: peak {r['peak_mib']:.0f} MiB over the estimate {estimate:.0f} MiB")
    return found


def line(row: dict[str, Any], gpu) -> str:
    parts = []
    for r in row["precisions"].values():
        if "error" in r:
            parts.append(f"{r['precision']} FAILED")
            continue
        planned = plan_ms(row, r, gpu)
        beside = f" (plan {planned:.1f})" if planned else ""
        peak = f", peak {r['peak_mib']:.0f} MiB" if "peak_mib" in r else ""
        est = row["estimated_mib"].get(r["precision"])
        peak += f" (est {est:.0f})" if est else ""
        busy = f", {r['kernels']} kernels, GPU busy {r['kernel_ms']:.1f} ms" if "kernels" in r else ""
        parts.append(
            f"{r['precision']} {r['ms_per_step']:.2f} ms/step{beside}{peak}, "
            + (
                f"{r['flops'] / 1e9:.1f} GFLOP, {r['bytes'] / 1e9:.2f} GB, {r['ops']} ops"
                if "flops" in r
                else ""
            )
            + f"{busy}, "
            f"run {run_minutes(row, r['ms_per_step']):.1f} min"
        )
    return f"  {row['chapter']} {row['run']}: " + "; ".join(parts)


def chapter_table(rows: list[dict[str, Any]], cells: list[dict[str, Any]], gpu) -> list[str]:
    """One line per chapter: precision, training minutes measured and planned, peak, cells."""
    out = ["| chapter | runs | precision | train min measured | train min plan | peak MiB | cells s |"]
    out.append("|---|---:|---|---:|---:|---:|---:|")
    for chapter in sorted({r["chapter"] for r in rows} | {c["chapter"] for c in cells}):
        mine = [r for r in rows if r["chapter"] == chapter]
        auto = [r["precisions"].get("auto", {}) for r in mine]
        ok = [(r, a) for r, a in zip(mine, auto, strict=True) if "ms_per_step" in a]
        measured = sum(run_minutes(r, a["ms_per_step"]) for r, a in ok)
        planned = [plan_ms(r, a, gpu) for r, a in ok]
        plan = sum(run_minutes(r, p) for (r, _), p in zip(ok, planned, strict=True)) if all(planned) else None
        peak = max((a.get("peak_mib", 0) for a in auto), default=0)
        precision = ",".join(sorted({a.get("precision", "?") for a in auto})) or "-"
        secs = sum(c.get("seconds_at_gpu_size", 0) for c in cells if c["chapter"] == chapter)
        plan_text = f"{plan:.1f}" if plan is not None else "-"
        cols = [chapter, len(mine), precision, f"{measured:.1f}", plan_text, f"{peak:.0f}", f"{secs:.0f}"]
        out.append("| " + " | ".join(map(str, cols)) + " |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pack", help="build the pack from the real data (CPU) into this file, then stop")
    parser.add_argument("--from", dest="source", help="the pack to check on this machine's GPU")
    parser.add_argument("--quick", action="store_true", help="the whole check on the CPU at smoke sizes")
    parser.add_argument("--chapters", nargs="*", help="some chapters (default: all)")
    parser.add_argument("--json", help="write the measurements here (after every run)")
    parser.add_argument("--budget", type=float, default=420, help="seconds after which no new run starts")
    parser.add_argument("--seconds", type=float, default=0.6, help="about this long timing each run")
    parser.add_argument("--no-cells", action="store_true", help="training runs only")
    parser.add_argument("--no-card", action="store_true", help="skip measuring the card's ceilings")
    args = parser.parse_args()
    started = time.perf_counter()
    from gpu_plan_later import CHAPTERS

    chapters = args.chapters or list(CHAPTERS)
    if args.pack:
        runs = make_pack("gpu", chapters)
        save_pack(runs, args.pack, "gpu")
        print(f"wrote {len(runs)} runs to {args.pack} ({Path(args.pack).stat().st_size / 2**20:.1f} MiB)")
        return
    if args.quick:
        device, profile = torch.device("cpu"), "smoke"
        buffer = io.BytesIO()  # through the same pack and unpack as on a GPU machine
        save_pack(make_pack(profile, chapters, log=lambda *a, **k: None), buffer, profile)
        buffer.seek(0)
        _, runs = load_pack(buffer)
        precisions = ["auto"]
    else:
        if not args.source:
            parser.error("give --from PACK (made with --pack), or --quick")
        if not torch.cuda.is_available():
            raise SystemExit("No CUDA GPU here: the check is for a GPU machine (--quick runs it on the CPU).")
        device = torch.device("cuda")
        profile, runs = load_pack(args.source)
        runs = [r for r in runs if r.chapter in chapters]
        rank = {id(r): sum(o.chapter == r.chapter for o in runs[:i]) for i, r in enumerate(runs)}
        runs.sort(key=lambda r: rank[id(r)])  # each chapter's first run, then each one's second...: under
        # --budget, every chapter is seen
        precisions = ["auto", "fp16"]
    gpu = plan_card(device)
    report: dict[str, Any] = {"device": device_name(device), "profile": profile, "torch": torch.__version__}
    report.update(python=platform.python_version(), load_average=os.getloadavg()[0], runs=[], cells=[])
    print(f"GPU check: {report['device']}, profile {profile}, torch {torch.__version__}", flush=True)
    report["card"] = {} if args.no_card else card(device, args.quick)
    print("  card: " + ", ".join(f"{k} {v:,.1f}" for k, v in report["card"].items()), flush=True)

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")

    problems, skipped = [], []
    for cell in CELLS:
        if cell.chapter not in chapters or args.no_cells:
            continue
        if time.perf_counter() - started > args.budget:
            skipped.append(f"cell {cell.chapter} {cell.name}")
            continue
        result = measure_cell(cell, profile, device)
        report["cells"].append(result)
        if "error" in result:
            problems.append(f"cell {cell.chapter} {cell.name}: {result['error']}")
        elif result["seconds_at_gpu_size"] > CELL_LIMIT and not args.quick:
            problems.append(f"cell {cell.chapter} {cell.name}: {result['seconds_at_gpu_size']:.0f} s")
        print(f"  cell {cell.chapter} {cell.name}: {result.get('summary', result.get('error'))}", flush=True)
        save()
    for run in runs:
        if time.perf_counter() - started > args.budget:
            skipped.append(f"{run.chapter} {run.name}")
            continue
        row = measure_run(run, device, precisions, args.seconds)
        report["runs"].append(row)
        problems += problems_of(row)
        print(line(row, gpu), flush=True)
        save()
    print()
    print("\n".join(chapter_table(report["runs"], report["cells"], gpu)))
    if skipped:
        problems.append(f"{len(skipped)} not run within --budget {args.budget:.0f} s: " + "; ".join(skipped))
    for problem in problems:
        print(f"PROBLEM {problem}")
    report.update(problems=problems, seconds=time.perf_counter() - started)
    save()
    print(f"({time.perf_counter() - started:.0f} s)")
    print(f"GPU check: {len({r['chapter'] for r in report['runs']})} chapters, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
