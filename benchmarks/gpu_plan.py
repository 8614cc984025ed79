"""The GPU plan: what each chapter's ``gpu`` profile costs on a Colab T4 and on an L4 or A100, from the CPU.

For every training run of every chapter (listed from the profile by ``gpu_plan_runs.py``
and ``gpu_plan_later.py``; measured by ``gpu_plan_measure.py``):

1. the real model at its ``gpu``-profile size and one real batch of the real data (the course's loaders;
   offline, ``FROMSCRATCH_MIRROR``), the longest batch where lengths vary;
2. FLOPs of one training step (forward and backward) counted by ``torch.utils.flop_counter.FlopCounterMode``
   on ``k`` of the batch's ``b`` sequences and scaled by ``b / k`` (linear in ``b`` at a fixed length); the
   CPU's fused attention kernel is counted with the formula PyTorch uses for the CUDA ones;
3. a few real AdamW steps in fp32 on the CPU on those ``k`` sequences, the last one watched by a
   ``TorchDispatchMode`` that adds up every tensor storage alive: the **measured** peak (what
   ``torch.cuda.max_memory_allocated`` reports on a GPU; PyTorch's own ``MemTracker`` gives the same
   figure but refuses models that call a module twice in a step);
4. the peak **estimated**: chapter 12's estimator from the config (generators, classifiers) or, for the
   other models, :func:`fromscratch.training.fits.estimate_training` (saved tensors counted for 1 and 2
   examples, extended to the batch) -- in fp32 at ``k`` next to the measurement (``est/measured``), and
   for the GPU in the precision "auto" picks on a T4 (fp16), at the whole batch, with the CUDA context;
5. the time of each run on each card: steps x FLOPs / (peak x MFU), or the run's own budget in minutes.

``k = b`` unless a step would take more than about 15 s on 2 cores or hold more than 3 GiB. A chapter's
time is the sum of its runs, plus 10 % for evaluation, sampling and its other cells, plus a minute for
setup and downloads. The MFU (the share of the card's dense peak that a step's matmul FLOPs reach) is an
assumption until the plan's GPU runs measure it: our models are small (e <= 512) and run eagerly, so a
step is hundreds of small kernels, and the element-wise work (norms, softmax, dropout, AdamW) is bound by
memory bandwidth (T4 320 GB/s, L4 300 GB/s, A100 1.5 TB/s). We take 20 % on a T4 (its 65 TFLOP/s of fp16
are reached by large matrix products only, and its 70 W cap lowers the clock under load), 15 % on an L4
and 8 % on an A100 (higher peaks, which small kernels use less), and 40 % of the fp32 peak in fp32.

    python benchmarks/gpu_plan.py                     # every chapter: the table of book/running.md
    python benchmarks/gpu_plan.py --chapters 07 09    # some chapters
    python benchmarks/gpu_plan.py --profile smoke     # tiny sizes: checks the script runs (seconds)
    python benchmarks/gpu_plan.py --write book/running.md  # and put the table into the running page
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import torch
from gpu_plan_later import CHAPTERS
from gpu_plan_measure import GPUS, T4, Row, measure

from fromscratch.profiles import get_profile
from fromscratch.training.memory import mib

MARGIN = 0.8  # a run must fit 80 % of the T4's 15 GB
EXTRA, SETUP_MINUTES = 0.10, 1.0  # a chapter: + 10 % for evaluation and other cells, + 1 min setup


def table(rows: list[Row]) -> list[str]:
    """The plan as Markdown lines: one row per run, then one per chapter."""
    gpus = " | ".join(f"{g.name} min" for g in GPUS)
    lines = [
        f"| run | parameters | tokens/step | GFLOP/step | steps | T4 memory (precision) | fp32 on the CPU: "
        f"estimated / measured (k of b) | {gpus} |",
        "|---|---:|---:|---:|---:|---:|---|" + "---:|" * len(GPUS),
    ]
    for r in rows:
        steps = f"{r.run.minutes:g} min" if r.run.minutes is not None else f"{r.run.steps:,}"
        steps += f" x {r.run.count}" if r.run.count > 1 else ""
        share = r.gpu_bytes / T4.memory
        times = " | ".join(f"{r.minutes(g):.1f}" for g in GPUS)
        lines.append(
            f"| {r.run.chapter} {r.run.name} | {r.params:,} | {r.tokens:,} | {r.flops / 1e9:,.1f} | {steps} "
            f"| {mib(r.gpu_bytes)} ({share:.0%}, {r.precision}) | {mib(r.estimated)} / {mib(r.measured)} "
            f"({r.k} of {r.b}): est/measured {r.estimated / r.measured:.2f} | {times} |"
        )
    lines += ["", f"| chapter | runs | largest T4 memory | {gpus} |", "|---|---:|---:|" + "---:|" * len(GPUS)]
    for chapter, minutes in chapter_minutes(rows).items():
        mine = [r for r in rows if r.run.chapter == chapter]
        top = max(r.gpu_bytes for r in mine)
        times = " | ".join(f"{m:.0f}" for m in minutes)
        lines.append(f"| {chapter} | {len(mine)} | {mib(top)} ({top / T4.memory:.0%}) | {times} |")
    return lines


def chapter_minutes(rows: list[Row]) -> dict[str, list[float]]:
    """``{chapter: [minutes on each of GPUS]}``: its runs, + EXTRA, + SETUP_MINUTES."""
    chapters: dict[str, list[float]] = {}
    for r in rows:
        spent = chapters.setdefault(r.run.chapter, [0.0] * len(GPUS))
        for i, gpu in enumerate(GPUS):
            spent[i] += r.minutes(gpu)
    return {c: [m * (1 + EXTRA) + SETUP_MINUTES for m in ms] for c, ms in chapters.items()}


def verdict(rows: list[Row]) -> str:
    """The plan's last line."""
    over = [r for r in rows if r.gpu_bytes > MARGIN * T4.memory]
    longest = max(m[0] for m in chapter_minutes(rows).values())
    if over:
        names = ", ".join(f"{r.run.chapter} {r.run.name} ({r.gpu_bytes / T4.memory:.0%})" for r in over)
        return f"GPU plan: {len(rows)} runs, {len(over)} do NOT fit a 15 GB T4 with >= 20 % to spare: {names}"
    return (
        f"GPU plan: {len(rows)} runs, all fit a 15 GB T4 with >= 20 % to spare, "
        f"longest chapter {math.ceil(longest)} min on a T4"
    )


START, END = "<!-- gpu-plan: start -->", "<!-- gpu-plan: end -->"


def write(page: str, lines: list[str], profile: str, threads: int) -> None:
    """Replace what stands between :data:`START` and :data:`END` in ``page`` with the plan's ``lines``."""
    text = Path(page).read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{page} has no {START} ... {END} block to put the table in; add the two lines.")
    head, rest = text.split(START, 1)
    made = f"Printed by `python benchmarks/gpu_plan.py` ({profile} profile, torch {torch.__version__}"
    made += f", {threads} CPU threads):"
    body = "\n".join([START, "", made, "", *lines, "", END])
    Path(page).write_text(head + body + rest.split(END, 1)[1], encoding="utf-8")
    print(f"wrote the table into {page}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapters", nargs="*", help=f"some of {', '.join(CHAPTERS)} (default: all)")
    parser.add_argument("--profile", default="gpu", help="the profile planned (smoke: a quick check)")
    parser.add_argument(
        "--write", help="a Markdown page whose table between the gpu-plan markers is replaced"
    )
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2, as on CI and Colab)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    prof = get_profile(args.profile)
    chosen = args.chapters or list(CHAPTERS)
    print(
        f"torch {torch.__version__}, profile {prof.name}, {args.threads} threads, "
        f"load average {os.getloadavg()[0]:.2f} at start",
        flush=True,
    )
    rows, failed = [], []
    for chapter in chosen:
        try:
            runs = CHAPTERS[chapter](prof)
        except Exception as error:  # a profile changed under its adapter: say so, plan the rest
            failed.append(f"{chapter} (its adapter: {type(error).__name__}: {error})")
            print(f"  FAILED chapter {failed[-1]}", flush=True)
            continue
        for run in runs:
            started = time.perf_counter()
            try:
                rows.append(measure(run))
            except Exception as error:
                failed.append(f"{run.chapter} {run.name} ({type(error).__name__}: {error})")
                print(f"  FAILED {failed[-1]}", flush=True)
                continue
            print(
                f"  measured {run.chapter} {run.name} in {time.perf_counter() - started:.0f} s "
                f"(one fp32 step of {rows[-1].k} on the CPU: {rows[-1].cpu_seconds:.2f} s)",
                flush=True,
            )
    print()
    print("\n".join(table(rows)))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if failed:
        print(f"NOT PLANNED ({len(failed)}): " + "; ".join(failed))
    print(verdict(rows))
    if args.write and not failed:
        write(args.write, [*table(rows), "", verdict(rows)], prof.name, args.threads)
    raise SystemExit(1 if failed or not verdict(rows).split(", ")[1].startswith("all fit") else 0)


if __name__ == "__main__":
    main()
