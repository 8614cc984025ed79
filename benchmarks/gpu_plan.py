"""The GPU plan: what each chapter's ``gpu`` profile costs on a T4 (Colab), an L4, an A100, an H100.

For every training run of every chapter (listed from the profile by ``gpu_plan_runs.py`` and
``gpu_plan_later.py``; measured by ``gpu_plan_measure.py``) and every heavy cell that is not training
(``heavy_cells.py``):

1. the real model at its ``gpu``-profile size and one real batch of the real data (the course's loaders;
   offline, ``FROMSCRATCH_MIRROR``), the longest batch where lengths vary;
2. the counts of one training step as ``train`` runs it on a T4 (forward and loss under fp16 autocast,
   backward, clipping, AdamW), from ``step_counts.counted``: matmul FLOPs, aten operations and the bytes
   they read and write, counted on ``k`` of the batch's ``b`` sequences and extended to ``b``;
3. a few real AdamW steps in fp32 on the CPU on those ``k`` sequences, the last one watched by a
   ``TorchDispatchMode`` that adds up every tensor storage alive: the **measured** peak;
4. the peak **estimated** (chapter 12's estimator from the config, or
   :func:`fromscratch.training.fits.estimate_training`), in fp32 at ``k`` next to the measurement and
   for the T4 in fp16 at the whole batch, with the CUDA context;
5. the time of each run on each card: steps x the time model's step, or the run's own budget; the time
   model (``step_counts.Card.ms``) counts the host's cost per operation, a kernel's least cost, FLOPs and
   bytes, and was fitted on the GPU check of 2026-11-26 (an H200: measured / model, median 1.00);
6. each heavy cell: a unit of each of its parts counted the same way, times its units.

``k = b`` unless a step would take more than about 15 s on 2 cores or hold more than 3 GiB. A chapter's
time is its runs and cells, plus 5 % for the cells not listed (seconds each), plus a minute for setup.

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
from dataclasses import dataclass
from pathlib import Path

import torch
from gpu_plan_later import CHAPTERS
from gpu_plan_measure import CUDA_OPS_PER_CPU_OP, GPUS, T4, Row, measure
from heavy_cells import CELLS
from step_counts import Counts, counted

from fromscratch.chapters import get_profile
from fromscratch.training.memory import mib

MARGIN = 0.8  # a run must fit 80 % of the T4's 15 GB
EXTRA, SETUP_MINUTES = 0.05, 1.0  # a chapter: + 5 % for the cells not planned, + 1 min setup
LIMIT = 30.0  # minutes: a chapter longer than this on a T4 needs a cheaper gpu profile, or says why not


@dataclass(frozen=True)
class CellRow:
    """A heavy cell of a chapter, counted: its parts' counts times their units, and each one's precision."""

    chapter: str
    name: str
    parts: list[tuple[str, Counts, float, str]]  # (part, counts of one unit, units, precision)

    def minutes(self, gpu) -> float:
        return sum(units * gpu.card.ms(c, precision) for _, c, units, precision in self.parts) / 60_000


def on_cuda(c: Counts) -> Counts:
    """Counts made on the CPU, with the operations CUDA would dispatch (see CUDA_OPS_PER_CPU_OP)."""
    return Counts(c.flops, round(c.ops * CUDA_OPS_PER_CPU_OP), c.bytes)


def plan_cells(prof, chapters: list[str]) -> list[CellRow]:
    """Every heavy cell of ``chapters``: a unit of each part counted on the CPU."""
    rows = []
    for cell in (c for c in CELLS if c.chapter in chapters):
        torch.manual_seed(0)
        parts = [
            (p.name, on_cuda(counted(p.unit)), p.units, p.precision)
            for p in cell.parts(prof, torch.device("cpu"))
        ]
        rows.append(CellRow(cell.chapter, cell.name, parts))
        print(f"  counted cell {cell.chapter} {cell.name}", flush=True)
    return rows


def table(rows: list[Row], cells: list[CellRow]) -> list[str]:
    """The plan as Markdown lines: one row per run, one per heavy cell, then one per chapter."""
    gpus = " | ".join(f"{g.name} min" for g in GPUS)
    lines = [
        f"| run | parameters | tokens/step | GFLOP/step | GB/step | ops/step | steps | T4 ms/step "
        f"| T4 memory (precision) | fp32 on the CPU: estimated / measured (k of b) | {gpus} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|" + "---:|" * len(GPUS),
    ]
    for r in rows:
        steps = f"{r.run.minutes:g} min" if r.run.minutes is not None else f"{r.run.steps:,}"
        steps += f" x {r.run.count}" if r.run.count > 1 else ""
        share = r.gpu_bytes / T4.memory
        times = " | ".join(f"{r.minutes(g):.1f}" for g in GPUS)
        c = r.counts
        lines.append(
            f"| {r.run.chapter} {r.run.name} | {r.params:,} | {r.tokens:,} | {c.flops / 1e9:,.1f} "
            f"| {c.bytes / 1e9:,.2f} | {c.ops:,} | {steps} | {r.step_ms(T4):.1f} "
            f"| {mib(r.gpu_bytes)} ({share:.0%}, {r.precision}) | {mib(r.estimated)} / {mib(r.measured)} "
            f"({r.k} of {r.b}): est/measured {r.estimated / r.measured:.2f} | {times} |"
        )
    lines += ["", f"| heavy cell (not training) | its largest part on a T4 | GFLOP | GB | ops | {gpus} |"]
    lines.append("|---|---|---:|---:|---:|" + "---:|" * len(GPUS))
    for cell in cells:
        total = sum((c * units for _, c, units, _ in cell.parts), Counts(0, 0, 0))
        name, _, units, _ = max(cell.parts, key=lambda p: p[2] * T4.card.ms(p[1], p[3]))
        names = f"{name} x {units:,.0f} (of {len(cell.parts)} parts)"
        times = " | ".join(f"{cell.minutes(g):.1f}" for g in GPUS)
        lines.append(
            f"| {cell.chapter} {cell.name} | {names} | {total.flops / 1e9:,.0f} | {total.bytes / 1e9:,.1f} "
            f"| {total.ops:,} | {times} |"
        )
    lines += ["", f"| chapter | training on a T4 | heavy cells on a T4 | largest T4 memory | {gpus} |"]
    lines.append("|---|---:|---:|---:|" + "---:|" * len(GPUS))
    for chapter, minutes in chapter_minutes(rows, cells).items():
        mine = [r for r in rows if r.run.chapter == chapter]
        top = max((r.gpu_bytes for r in mine), default=0)
        trained = sum(r.minutes(T4) for r in mine)
        spent = sum(c.minutes(T4) for c in cells if c.chapter == chapter)
        times = " | ".join(
            f"**{m:.0f}**" if g is T4 and m > LIMIT else f"{m:.0f}"
            for g, m in zip(GPUS, minutes, strict=True)
        )
        memory = f"{mib(top)} ({top / T4.memory:.0%})" if mine else "-"
        lines.append(f"| {chapter} | {trained:.0f} | {spent:.0f} | {memory} | {times} |")
    return lines


def chapter_minutes(rows: list[Row], cells: list[CellRow]) -> dict[str, list[float]]:
    """``{chapter: [minutes on each of GPUS]}``: its runs and heavy cells, + EXTRA, + SETUP_MINUTES."""
    chapters: dict[str, list[float]] = {}
    for item in [*rows, *cells]:
        chapter = item.run.chapter if isinstance(item, Row) else item.chapter
        spent = chapters.setdefault(chapter, [0.0] * len(GPUS))
        for i, gpu in enumerate(GPUS):
            spent[i] += item.minutes(gpu)
    ordered = dict(sorted(chapters.items()))
    return {c: [m * (1 + EXTRA) + SETUP_MINUTES for m in ms] for c, ms in ordered.items()}


def verdict(rows: list[Row], cells: list[CellRow]) -> str:
    """The plan's last line."""
    over = [r for r in rows if r.gpu_bytes > MARGIN * T4.memory]
    minutes = chapter_minutes(rows, cells)
    longest = max(m[0] for m in minutes.values())
    long = [f"{c} ({m[0]:.0f})" for c, m in minutes.items() if m[0] > LIMIT]
    if over:
        names = ", ".join(f"{r.run.chapter} {r.run.name} ({r.gpu_bytes / T4.memory:.0%})" for r in over)
        return f"GPU plan: {len(rows)} runs, {len(over)} do NOT fit a 15 GB T4 with >= 20 % to spare: {names}"
    return (
        f"GPU plan: {len(rows)} runs and {len(cells)} heavy cells, all fit a 15 GB T4 with >= 20 % to spare, "
        f"longest chapter {math.ceil(longest)} min on a T4; over {LIMIT:.0f} min: {', '.join(long) or 'none'}"
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
    cells = plan_cells(prof, chosen)
    print()
    print("\n".join(table(rows, cells)))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if failed:
        print(f"NOT PLANNED ({len(failed)}): " + "; ".join(failed))
    print(verdict(rows, cells))
    if args.write and not failed:
        write(args.write, [*table(rows, cells), "", verdict(rows, cells)], prof.name, args.threads)
    raise SystemExit(1 if failed or "do NOT fit" in verdict(rows, cells) else 0)


if __name__ == "__main__":
    main()
