"""What a GPU check's measurements say about the GPU plan: measured beside estimated, and the T4 again.

Reads the JSON of ``gpu_check.py`` (one report, or ``{chapter: report}`` when each chapter ran in its own
process) and prints, for every training run it timed:

- the first plan's estimate for the card (FLOPs / (peak x MFU) with the H100's figures: an H200 computes
  as an H100; the plan used this model until this check), the measured ms per step, and the ratio;
- a second time model, fitted on the same measurements, that counts what the first leaves out: a step is
  ``ops`` aten operations, each costing the host about ``c`` us to dispatch (Python, autocast, the
  launch), and about ``1.15 x ops`` kernels, each costing the GPU at least ``l`` us, plus its FLOPs at the
  card's matmul rate and its bytes at the card's bandwidth::

      ms/step = max(ops x c,  kernels x l + FLOPs / matmul rate + bytes / bandwidth)

  ``c`` is the median of measured ms / ops over the runs; ``l`` comes from the runs the profiler timed
  (their GPU-busy time less the FLOP and byte terms, per kernel); the rates are the card's own, measured;
- the same model for a T4 with its assumptions (below), the run's minutes there, beside the plan's.

    python benchmarks/gpu_check_report.py benchmarks/results/gpu_check_2026-11-26/run2.json
    python benchmarks/gpu_check_report.py RUN.json --write book/running.md   # between the markers
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from step_counts import CARDS, Card, Counts

# The plan this check tested (gpu_plan.py until 2026-11-26): a step's matmul FLOPs at an assumed share (MFU)
# of the card's dense peak; kept to show how far it was off. The plan now uses step_counts' time model.
V1_PEAK = {"H100": {"bf16": 989e12, "fp16": 989e12, "fp32": 67e12}, "T4": {"fp16": 65e12, "fp32": 8.1e12}}
V1_MFU = {"H100": {"bf16": 0.05, "fp16": 0.05, "fp32": 0.40}, "T4": {"fp16": 0.20, "fp32": 0.40}}
# The T4 in the second model: step_counts.CARDS's effective rates (assumptions, written there), with the
# host and kernel costs fitted here: a kernel costs a T4 at least what it costs the measured card, and a
# Colab host dispatches an operation as fast as the measured machine's host (its 2 slow vCPUs make that a
# lower bound).
KERNELS_PER_OP = 1.15  # if no run of the report was profiled
START, END = "<!-- gpu-check: start -->", "<!-- gpu-check: end -->"


def reports(paths: list[str]) -> list[dict[str, Any]]:
    """Every report in ``paths`` (a file holds one report, or ``{chapter: report}``)."""
    found = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        found += [data] if "runs" in data else list(data.values())
    return found


def cell_lines(all_reports: list[dict[str, Any]]) -> list[str]:
    """The heavy cells other than training, as measured (once each, scaled to the chapter's gpu sizes)."""
    cells = [c for report in all_reports for c in report.get("cells", [])]
    if not cells:
        return []
    lines = ["| cell | at `gpu` size on this card | what was timed |", "|---|---:|---|"]
    for c in cells:
        seconds = f"{c['seconds_at_gpu_size']:.0f} s" if "seconds_at_gpu_size" in c else "failed"
        lines.append(f"| {c['chapter']} {c['cell']} | {seconds} | {c.get('summary', c.get('error', ''))} |")
    return lines


def planned_memory(page: Path) -> dict[str, float]:
    """``{"07 7.6 generator": MiB}``: the plan's T4 estimate (book/running.md's table) less the CUDA context,
    which ``max_memory_allocated`` does not count."""
    from fromscratch.training.memory import CUDA_CONTEXT

    found = {}
    for row in page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) > 6 and ("MiB (" in cells[5] or "GiB (" in cells[5]):
            value, unit = cells[5].split()[:2]
            found[cells[0]] = float(value) * (1024 if unit == "GiB" else 1) - CUDA_CONTEXT / 2**20
    return found


def rows_of(all_reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run with an "auto" measurement: its counts, its time, its run's length, and the card's
    measured rates (from whichever report measured them: the same machine)."""
    rows = []
    measured = next((report["card"] for report in all_reports if report.get("card")), {})
    for report in all_reports:
        for run in report["runs"]:
            auto = run["precisions"].get("auto", {})
            if "ms_per_step" in auto and "flops" in auto:
                rows.append({**run, **auto, "card": report.get("card") or measured})
    return rows


def fit(rows: list[dict[str, Any]], rates: dict[str, float], bandwidth: float) -> dict[str, float]:
    """``c`` (us per op, host), ``l`` (us per kernel, GPU) and kernels per op, from the measured rows."""
    host = statistics.median(1000 * r["ms_per_step"] / r["ops"] for r in rows)
    profiled = [r for r in rows if "kernel_ms" in r]
    per_kernel, per_op = [], []
    for r in profiled:
        work = 1000 * (r["flops"] / rates[r["precision"]] + r["bytes"] / bandwidth)  # ms
        per_kernel.append(1000 * max(r["kernel_ms"] - work, 0) / r["kernels"])
        per_op.append(r["kernels"] / r["ops"])
    return {
        "host_us": host,
        "kernel_us": statistics.median(per_kernel) if per_kernel else 10.0,
        "kernels_per_op": statistics.median(per_op) if per_op else KERNELS_PER_OP,
    }


def card_of(k: dict[str, float], rates: dict[str, float], bandwidth: float, name: str) -> Card:
    """The time model's card with the fitted host, kernel and kernels-per-operation costs."""
    return Card(name, rates, bandwidth, k["kernel_us"], k["host_us"], k["kernels_per_op"])


def model_ms(r: dict[str, Any], card: Card, name: str) -> float:
    """The time model's ms per step for row ``r`` on ``card`` in precision ``name``."""
    return card.ms(Counts(r["flops"], r["ops"], r["bytes"]), name)


def plan_ms(r: dict[str, Any], gpu: str, name: str) -> float:
    """The first plan's ms per step: FLOPs / (peak x MFU)."""
    return 1000 * r["flops"] / (V1_PEAK[gpu][name] * V1_MFU[gpu][name])


def minutes(r: dict[str, Any], ms: float, steps: bool = True) -> str:
    """The run's minutes at ``ms`` per step; a time budget with the steps it buys (``steps``)."""
    if r["minutes"] is not None:
        bought = f" ({60000 * r['minutes'] / ms:,.0f} steps)" if steps else ""
        return f"{r['minutes'] * r['count']:g} budget{bought}"
    return f"{r['steps'] * r['count'] * ms / 60000:.1f}"


def peak(r: dict[str, Any], memory: dict[str, float]) -> str:
    """The peak in the T4's precision (fp16, or the run's fp32) against the plan's estimate."""
    measured = r["precisions"].get("fp16", r)["peak_mib"] if "fp16" in r["precisions"] else r["peak_mib"]
    planned = memory.get(f"{r['chapter']} {r['run']}")
    return (
        f"{measured:,.0f} / {planned:,.0f} ({measured / planned:.2f})" if planned else f"{measured:,.0f} / -"
    )


def ratio(measured: float, estimated: float) -> str:
    return f"{measured / estimated:.1f}" if estimated >= 0.05 else "-"  # a plan of ~0 ms: no ratio


def table(rows: list[dict[str, Any]], memory: dict[str, float]) -> tuple[list[str], dict[str, float]]:
    card = rows[0]["card"]
    if not card:
        raise SystemExit("No report holds the card's measured rates (gpu_check.py without --no-card).")
    rates = {n: 1e12 * card[f"matmul_{n}_TFLOPs"] for n in ("bf16", "fp16", "fp32")}
    bandwidth = 1e9 * card["copy_GBps"]
    k = fit(rows, rates, bandwidth)
    measured = card_of(k, rates, bandwidth, "measured")
    t4_card = card_of(k, CARDS["T4"].rate, CARDS["T4"].bandwidth, "T4")
    lines = [
        "| run | precision | ops | GFLOP | GB moved | plan ms | measured ms | measured / plan | model ms "
        "| measured / model | T4: plan min | T4: model ms | T4: model min | fp16 peak MiB: measured / plan |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        name = r["precision"]
        t4 = "fp32" if name == "fp32" else "fp16"  # what "auto" picks on a T4
        plan, model = plan_ms(r, "H100", name), model_ms(r, measured, name)
        t4_plan, t4_model = plan_ms(r, "T4", t4), model_ms(r, t4_card, t4)
        lines.append(
            f"| {r['chapter']} {r['run']} | {name} | {r['ops']:,} | {r['flops'] / 1e9:,.1f} "
            f"| {r['bytes'] / 1e9:.1f} | {plan:.1f} | {r['ms_per_step']:.1f} "
            f"| {ratio(r['ms_per_step'], plan)} "
            f"| {model:.1f} | {r['ms_per_step'] / model:.2f} | {minutes(r, t4_plan, False)} | {t4_model:.0f} "
            f"| {minutes(r, t4_model)} | {peak(r, memory)} |"
        )
    ratios = [r["ms_per_step"] / model_ms(r, measured, r["precision"]) for r in rows]
    k["ratio_median"], k["ratio_low"], k["ratio_high"] = statistics.median(ratios), min(ratios), max(ratios)
    return lines, k


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("json", nargs="+", help="the JSON gpu_check.py wrote (one or more)")
    parser.add_argument("--write", help="a Markdown page whose gpu-check block is replaced by the table")
    args = parser.parse_args()
    all_reports = reports(args.json)
    rows = rows_of(all_reports)
    page = Path(__file__).parents[1] / "book" / "running.md"
    lines, k = table(rows, planned_memory(page))
    device = all_reports[0]["device"]
    fitted = (
        f"Fitted on {len(rows)} runs ({device}): the host dispatches an operation in {k['host_us']:.0f} us "
        f"(median), a kernel costs the GPU at least {k['kernel_us']:.1f} us, {k['kernels_per_op']:.2f} "
        f"kernels per operation; measured / model: median {k['ratio_median']:.2f}, "
        f"from {k['ratio_low']:.2f} to {k['ratio_high']:.2f}."
    )
    cells = cell_lines(all_reports)
    print("\n".join(lines))
    print()
    print(fitted)
    print()
    print("\n".join(cells))
    if args.write:
        page = Path(args.write)
        text = page.read_text(encoding="utf-8")
        if START not in text or END not in text:
            raise SystemExit(f"{page} has no {START} ... {END} block for the table; add the two lines.")
        head, rest = text.split(START, 1)
        made = f"Printed by `python benchmarks/gpu_check_report.py {' '.join(args.json)}`:"
        body = "\n".join([START, "", made, "", *lines, "", fitted, "", *cells, "", END])
        page.write_text(head + body + rest.split(END, 1)[1], encoding="utf-8")
        print(f"wrote the table into {page}")


if __name__ == "__main__":
    main()
