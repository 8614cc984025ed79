"""Training throughput (tokens/second) of our models at the blog's two settings (chapters 05-07).

One training step = forward + backward + AdamW step, on random tokens of the full length:

- **C** (the IMDb classifier): ``Classifier`` with emb 128, heads 8, depth 6, length 512, batch 4,
  vocabulary 50,000, mean pooling;
- **G** (the enwik8 generator): ``Generator`` (a causal stack) with emb 256, heads 8, depth 12,
  context 256, batch 32, vocabulary 256.

Each runs twice: the **teaching path** (attention written out as matmuls and a softmax, asked for
by ``return_attention=True``; about what the blog's own code does) and the **fast path**
(``F.scaled_dot_product_attention``). Both paths use the same weights. The figure is the median
step time after warm-up steps. ``--profile`` adds a torch.profiler breakdown of one path's step by
kind of work, to show where the time goes.

    python benchmarks/throughput.py                       # CPU with 2 threads (+ CUDA when present)
    python benchmarks/throughput.py --profile             # ... and where the time goes
    python benchmarks/throughput.py --quick               # seconds: tiny sizes, checks the script runs
"""

from __future__ import annotations

import argparse
import platform
from collections import defaultdict
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from fromscratch.models import Classifier, Generator
from fromscratch.utils import time_call


@dataclass(frozen=True)
class Setting:
    name: str
    emb: int
    heads: int
    depth: int
    length: int
    batch: int
    vocab: int


SETTINGS = [
    Setting("C  classifier", emb=128, heads=8, depth=6, length=512, batch=4, vocab=50_000),
    Setting("G  generator", emb=256, heads=8, depth=12, length=256, batch=32, vocab=256),
]
QUICK = [replace(s, depth=1, length=s.length // 8, batch=2) for s in SETTINGS]


def build(setting: Setting, device: torch.device):
    """The model, an optimiser and a function doing one training step (teaching or fast path)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(3, setting.vocab, (setting.batch, setting.length), generator=gen).to(device)
    if setting.name.startswith("C"):
        model = Classifier(
            vocab_size=setting.vocab,
            num_classes=2,
            emb=setting.emb,
            heads=setting.heads,
            depth=setting.depth,
            max_len=setting.length,
        ).to(device)
        labels = torch.randint(0, 2, (setting.batch,), generator=gen).to(device)
        mask = torch.ones_like(tokens, dtype=torch.bool)

        def loss_of(teaching: bool):
            out = model(tokens, padding_mask=mask, return_attention=teaching)
            return F.cross_entropy(out[0] if teaching else out, labels)
    else:
        model = Generator(
            vocab_size=setting.vocab, emb=setting.emb, heads=setting.heads, depth=setting.depth, context=setting.length
        ).to(device)

        def loss_of(teaching: bool):
            out = model(tokens[:, :-1], return_attention=teaching)
            logits = out[0] if teaching else out  # (b, t, V)
            return F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:])

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    amp = device.type == "cuda"

    def step(teaching: bool) -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = loss_of(teaching)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def seconds_per_step(step, teaching: bool, warmup: int, repeats: int) -> float:
    """The median time of ``repeats`` steps after ``warmup`` (allocations, kernel choice, the optimiser's state)."""
    return time_call(lambda: step(teaching), repeats=repeats, warmup=warmup, statistic="median")


CATEGORIES = [  # (category, substrings of aten op names), first match wins
    ("loss", ("cross_entropy", "log_softmax", "nll_loss")),
    ("attention: fused kernel", ("scaled_dot_product", "flash_attention")),
    ("attention: softmax", ("softmax",)),
    ("optimiser (AdamW)", ("_foreach", "addcdiv", "addcmul", "lerp", "sqrt", "adam")),
    ("embedding lookup + gradient", ("embedding",)),
    ("matmul (linear layers, scores)", ("mm", "matmul", "linear", "bmm", "baddbmm", "addmm")),
    ("layer norm", ("layer_norm",)),
    ("masking", ("masked_fill", "where", "logical", "bitwise")),
    ("copies and reshapes", ("copy_", "clone", "contiguous", "cat", "_to_copy", "transpose", "view", "reshape")),
    ("other element-wise", ("add", "mul", "div", "relu", "threshold", "fill", "zero", "sum", "dropout")),
]


def profile_step(step, teaching: bool, label: str) -> None:
    """Self CPU time of one step, by kind of work (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile

    step(teaching)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step(teaching)
    totals: dict[str, float] = defaultdict(float)
    for event in prof.key_averages():
        name = event.key.removeprefix("aten::")
        category = next((c for c, keys in CATEGORIES if any(k in name for k in keys)), "other")
        totals[category] += event.self_cpu_time_total
    whole = sum(totals.values())
    print(f"\nwhere a step's time goes, {label} (self CPU time, torch.profiler):")
    for category, micros in sorted(totals.items(), key=lambda item: -item[1]):
        if micros / whole >= 0.005:
            print(f"  {category:<32} {micros / 1e3:8.1f} ms  {micros / whole:5.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2, as on the course's CI)")
    parser.add_argument("--repeats", type=int, default=5, help="timed steps per measurement (the median counts)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--profile", action="store_true", help="also break a step down by kind of work")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 1 repeat: checks the script runs")
    parser.add_argument("--cpu-only", action="store_true", help="skip CUDA even when it is present")
    parser.add_argument("--only", choices=["C", "G"], help="run one setting only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    settings = [s for s in (QUICK if args.quick else SETTINGS) if args.only is None or s.name.startswith(args.only)]
    repeats, warmup = (1, 1) if args.quick else (args.repeats, args.warmup)
    devices = [torch.device("cpu")]
    if torch.cuda.is_available() and not args.cpu_only:
        devices.append(torch.device("cuda"))
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{args.threads} CPU threads{' (QUICK: tiny sizes, not the benchmark)' if args.quick else ''}"
    )
    print("\n| setting | device | tokens/step | teaching (tok/s) | fast (tok/s) | fast / teaching |")
    print("|---|---|---:|---:|---:|---:|")
    steps = {}
    for setting in settings:
        for device in devices:
            step = build(setting, device)
            steps[setting.name, device.type] = step
            tokens = setting.batch * (setting.length - (0 if setting.name.startswith("C") else 1))
            teaching = tokens / seconds_per_step(step, True, warmup, repeats)
            fast = tokens / seconds_per_step(step, False, warmup, repeats)
            print(
                f"| {setting.name} (e={setting.emb}, depth {setting.depth}, t={setting.length}, "
                f"b={setting.batch}, V={setting.vocab:,}) | {device.type} | {tokens:,} | {teaching:,.0f} | "
                f"{fast:,.0f} | {fast / teaching:.2f}x |",
                flush=True,
            )
    if args.profile:
        for setting in settings:
            step = steps[setting.name, "cpu"]
            for teaching in (True, False):
                profile_step(step, teaching, f"{setting.name.split()[0]}, {'teaching' if teaching else 'fast'} path")


if __name__ == "__main__":
    main()
