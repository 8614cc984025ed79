"""The GPU plan: what each chapter costs on each card, from step times measured on a GPU.

    python benchmarks/gpu/report.py                          # print the plan
    python benchmarks/gpu/report.py --write book/running.md  # and put it between its gpu-plan markers

The runs are the chapters' own ``train`` calls at their ``gpu`` size, as recorded
(``benchmarks/results/records-gpu.jsonl``, made by ``notebooks.py --record``). Their step times come
from the GPU checks kept in ``benchmarks/results/gpu_check_<date>.json``, newest first: ``check.py``'s
(runs by key) and the H200 check of 2026-11-28 (an older format: runs matched by chapter and parameter
count, then tokens a step or precision). A run's minutes on a card measured are its step time there
times its steps and calls, or its time budget. For a card not at hand (:data:`CARDS`: a T4, an L4, an
A100) a time model carries the measured step over. The GPU's busy time a step splits into the matrix
products (FLOPs / the measured card's rate), the memory traffic (bytes / its bandwidth) and the rest,
a kernel's fixed cost (at least 3 us each), which any card pays the same:

    ms = max(the measured step, rest + FLOPs / this card's rate + bytes / this card's bandwidth)

the measured step being a floor, since the host's time a step (Python, launches) does not shrink on
another card; on Colab's two vCPUs it grows, so a T4's minutes are a lower bound. Heavy cells that are
not training cost what the newest kept check measured of them at ``gpu`` size (today the 2026-11-28
one); on other cards, in the proportion of their chapter's training.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

from pack import leaves, name, read, runs, tokens

RESULTS = Path(__file__).parents[1] / "results"
LATENCY_MS = 0.003  # a kernel's shortest run on any of these cards
# Effective rates (what a large product or copy reaches, of the datasheet's peak): T4 30 of 65 TFLOP/s fp16
# (its 70 W cap lowers the clock), 5 of 8.1 fp32, 230 of 320 GB/s; L4 60 of 121, 15 of 30, 240 of 300 GB/s;
# A100 40 GB 200 of 312, 15 of 19.5, 1,300 of 1,555 GB/s. "auto" trains in fp16 on a T4, bf16 on the others.
CARDS = {
    "T4": {"half": "fp16", "fp16": 30e12, "fp32": 5e12, "bandwidth": 230e9},
    "L4": {"half": "bf16", "bf16": 60e12, "fp32": 15e12, "bandwidth": 240e9},
    "A100": {"half": "bf16", "bf16": 200e12, "fp32": 15e12, "bandwidth": 1300e9},
}


def checks() -> list[dict[str, Any]]:
    """Every GPU check kept in ``benchmarks/results/``, newest first, with its card's rates."""
    found = []
    for path in sorted(RESULTS.glob("gpu_check_*.json"), reverse=True):
        check = json.loads(path.read_text())
        card = check.get("card", {})
        check["rates"] = {p: card.get(f"matmul_{p}_TFLOPs", 0) * 1e12 for p in ("bf16", "fp16", "fp32")}
        check["bandwidth"] = card.get("copy_GBps", 0) * 1e9
        check["name"] = re.search(r"\(([^,]+)", check["device"]).group(1).removeprefix("NVIDIA ")
        check["date"] = check.get("date") or re.search(r"\d{4}-\d\d-\d\d", path.name).group()
        found.append(check)
    return found


def measured(run: dict[str, Any], check: dict[str, Any]) -> dict[str, Any] | None:
    """The run's measurement in ``check``, in the run's own precision (with the fp16 step, if taken)."""
    rows = check["runs"]
    found = rows.get(run["key"]) if isinstance(rows, dict) else None
    if isinstance(rows, list):  # 2026-11-28's format
        same = [
            r for r in rows if [r["chapter"], r["params"]] == [run["chapter"][:2], run["model"]["parameters"]]
        ]
        fp32 = run["config"]["precision"] == "fp32"
        found = next((r for r in same if r["tokens"] == tokens(run["batch"])), None) or next(
            (r for r in same if (r["precisions"]["auto"]["precision"] == "fp32") == fp32), None
        )
    first = next(iter(found["precisions"].values())) if found else {}
    if "ms_per_step" not in first:
        return None
    fp16 = [
        r["ms_per_step"]
        for r in found["precisions"].values()
        if r["precision"] == "fp16" and "ms_per_step" in r
    ]
    return {**first, "fp16_ms": fp16[0] if fp16 else None}


def modelled(m: dict[str, Any], check: dict[str, Any], card: dict[str, Any]) -> float | None:
    """A step's milliseconds on ``card`` from measurement ``m`` on ``check``'s card (the module's model)."""
    if not {"kernel_ms", "flops", "bytes"} <= set(m):
        return None
    precision = card["half"] if m["precision"] != "fp32" else "fp32"
    work = 1000 * (m["flops"] / check["rates"][m["precision"]] + m["bytes"] / check["bandwidth"])
    rest = max(m.get("kernels", 0) * LATENCY_MS, m["kernel_ms"] - work)  # the same on any card
    host = max(m["ms_per_step"], m.get("fp16_ms") or 0) if precision == "fp16" else m["ms_per_step"]
    return max(host, rest + 1000 * (m["flops"] / card[precision] + m["bytes"] / card["bandwidth"]))


def minutes(run: dict[str, Any], ms: float | None) -> float | None:
    if run["steps"] is None:
        return run["count"] * run["config"]["minutes"]
    return None if ms is None else run["count"] * run["steps"] * ms / 60000


def cells(records: list[dict[str, Any]], found: list[dict[str, Any]]) -> dict[str, tuple[str, float, str]]:
    """Each heavy cell: its chapter, seconds on a GPU at ``gpu`` size, and what takes them."""
    heavy = {}
    for check in reversed(found):
        for cell in (c for c in check.get("cells", []) if "seconds_at_gpu_size" in c):
            part, most = max(cell["parts"].items(), key=lambda kv: kv[1]["unit_ms"] * kv[1]["units"])
            what = f"most in {part} ({most['unit_ms']:.1f} ms x {most['units']:,.0f})"
            heavy[f"{cell['chapter']} {cell['cell']}"] = (cell["chapter"], cell["seconds_at_gpu_size"], what)
    return heavy


def plan(record: Path) -> tuple[list[str], str]:
    """The plan's Markdown tables and its one-line summary."""
    found, records = checks(), read(record)
    cards = [found[0]["name"] if found else "H200", *CARDS]
    head = f"| run | parameters | batch | steps | {cards[0]} ms/step | GPU busy | " + " min | ".join(cards)
    lines = [head + " min |", "|---" + "|---:" * (5 + len(cards)) + "|"]
    totals: dict[str, list[float]] = {}
    missing, busy = 0, []
    for run in sorted(runs(records), key=lambda r: (r["chapter"], r["cells"][0] or 0)):
        m, check = next(((measured(run, c), c) for c in found if measured(run, c)), (None, None))
        mins = [minutes(run, m and m["ms_per_step"])]
        mins += [minutes(run, m and modelled(m, check, CARDS[card])) for card in CARDS]
        total = totals.setdefault(run["chapter"][:2], [0.0] * len(cards))
        totals[run["chapter"][:2]] = [t + (v or 0.0) for t, v in zip(total, mins, strict=True)]
        missing += m is None and run["steps"] is not None
        busy += [m["kernel_ms"] / m["ms_per_step"]] if m and "kernel_ms" in m else []
        steps = f"{run['config']['minutes']:g} min" if run["steps"] is None else f"{run['steps']:,}"
        shape = max(leaves(run["batch"]), key=lambda t: math.prod(t["shape"]), default={"shape": []})["shape"]
        row = [name(run), f"{run['model']['parameters']:,}", " x ".join(map(str, shape))]
        row += [
            steps + f" x {run['count']}" * (run["count"] > 1),
            f"{m['ms_per_step']:.1f}" if m else "not measured",
        ]
        row += [f"{100 * busy[-1]:.0f} %" if m and "kernel_ms" in m else ""]
        lines.append("| " + " | ".join(row + ["" if v is None else f"{v:.1f}" for v in mins]) + " |")
    heavy = cells(records, found)
    lines += ["", f"| heavy cell (not training) | what takes the time | {cards[0]} s |", "|---|---|---:|"]
    lines += [f"| {cell} | {what} | {seconds:.0f} |" for cell, (_, seconds, what) in sorted(heavy.items())]
    lines += ["", "| chapter | " + " min | ".join(cards) + " min |", "|---" + "|---:" * len(cards) + "|"]
    for chapter, by_card in sorted(totals.items()):  # a minute for the setup; cells scaled as the training
        seconds = sum(s for c, s, _ in heavy.values() if c == chapter)
        scaled = [v + 1 + seconds / 60 * (v / by_card[0] if by_card[0] else 1) for v in by_card]
        lines.append(f"| {chapter} | " + " | ".join(f"{v:.0f}" for v in scaled) + " |")
    longest = max(totals.items(), key=lambda kv: kv[1][1], default=("-", [0, 0]))
    source = ", ".join(sorted({f"{c['name']} {c['date']}" for c in found})) or "no GPU check yet"
    summary = (
        f"GPU plan: {len(runs(records))} runs of {len(totals)} chapters ({len(records)} records), step times "
        f"measured on {source}, {missing} runs not measured yet; GPU busy median "
        f"{100 * statistics.median(busy) if busy else 0:.0f} %; longest chapter {longest[0]}, "
        f"{longest[1][1] + 1:.0f} min of training on a T4"
    )
    return lines, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, default=RESULTS / "records-gpu.jsonl")
    parser.add_argument("--write", type=Path, help="a page with <!-- gpu-plan: start/end --> markers")
    args = parser.parse_args()
    lines, summary = plan(args.record)
    text = "\n".join(lines) + f"\n\n{summary}\n"
    print(text)
    if args.write:
        start, end = "<!-- gpu-plan: start -->", "<!-- gpu-plan: end -->"
        head, _, rest = args.write.read_text().partition(start)
        said = "Printed by `python benchmarks/gpu/report.py` from the record of the chapters at `gpu` size:"
        args.write.write_text(f"{head}{start}\n\n{said}\n\n{text}\n{end}{rest.partition(end)[2]}")


if __name__ == "__main__":
    main()
