"""Training throughput (tokens/second) of our models at the blog's two settings (chapters 05-07).

One training step = forward + backward + AdamW step, on random tokens of the full length:

- **C** (the IMDb classifier): ``Classifier`` with emb 128, heads 8, depth 6, length 512, batch 4,
  vocabulary 50,000, mean pooling;
- **G** (the enwik8 generator): ``Generator`` (a causal stack) with emb 256, heads 8, depth 12,
  context 256, batch 32, vocabulary 256.

Each runs twice: the **teaching path** (attention written out as matmuls and a softmax, asked for
by ``attention=[]``; about what the blog's own code does) and the **fast path**
(``F.scaled_dot_product_attention``). Both paths use the same weights. The figure is the median
step time after warm-up steps. ``--profile`` adds a torch.profiler breakdown of one path's step by
kind of work, to show where the time goes.

Each row also runs in a chosen **precision** (chapter 12), set up as ``train`` does it
(``fromscratch.training.precision.choose_precision``): ``fp32``, ``bf16`` autocast (the matmuls in
bf16, the weights, optimiser and loss in fp32) or ``fp16`` autocast with a gradient scaler. A 16-bit
type is skipped on a CPU without units for it (bf16: ``cpu_has_bf16``; fp16: always on a CPU): there
PyTorch's reference kernels are hundreds of times slower than fp32, as the printed matmul peaks show;
``--force-bf16`` runs it anyway.

**MFU** (model FLOP utilisation): the FLOPs a training step needs, counted from the model's config
(3 x the forward pass: every linear layer's ``2 x in x out`` per token, plus ``4 t e`` per token and
layer for the scores and the weighted sum), per second, as a fraction of the matmul peak measured in
the same run (a large square matmul in that dtype). ``--bpb-steps N`` also trains setting G for N
steps in each precision from the same seed on the enwik8 prefix and prints bits per byte on its
validation bytes.

    python benchmarks/throughput.py                       # CPU with 2 threads (+ CUDA when present)
    python benchmarks/throughput.py --profile             # ... and where the time goes
    python benchmarks/throughput.py --quick               # seconds: tiny sizes, checks the script runs
    python benchmarks/throughput.py --only G --bpb-steps 40   # + bits per byte after 40 steps
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections import defaultdict
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.models import Classifier, Generator
from fromscratch.training.losses import next_token_loss
from fromscratch.training.precision import DTYPES, Precision, choose_precision, cpu_has_bf16
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


def build(setting: Setting, device: torch.device, precision: str = "fp32"):
    """A function doing one training step (teaching or fast path) in ``precision``, and the model."""
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
            context=setting.length,
        ).to(device)
        labels = torch.randint(0, 2, (setting.batch,), generator=gen).to(device)
        mask = torch.ones_like(tokens, dtype=torch.bool)

        def loss_of(teaching: bool):
            out = model(tokens, padding_mask=mask, attention=[] if teaching else None)
            return F.cross_entropy(out, labels)
    else:
        model = Generator(
            vocab_size=setting.vocab,
            emb=setting.emb,
            heads=setting.heads,
            depth=setting.depth,
            context=setting.length,
        ).to(device)

        def loss_of(teaching: bool):
            return next_token_loss(model, tokens, teaching=teaching)

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    chosen = choose_precision(device, precision)  # as `train` does: autocast, a scaler exactly for fp16
    scaler = chosen.grad_scaler(device)

    def step(teaching: bool) -> None:
        with chosen.autocast(device):
            loss = loss_of(teaching)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    return step, model


def training_flops(model: nn.Module, setting: Setting, tokens: int) -> float:
    """FLOPs of one training step counted from the model: 3 x (linear layers + attention) of the forward."""
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))  # in x out, summed
    t = setting.length
    forward_per_token = 2 * linear + setting.depth * 4 * t * setting.emb  # scores q kᵀ and weights @ v
    return 3.0 * forward_per_token * tokens


def matmul_peak(device: torch.device, precision: str, n: int, repeats: int = 3) -> float:
    """FLOP/s of an ``n x n`` matmul in ``precision`` on ``device`` (the best of ``repeats``)."""
    dtype = Precision.named(precision).compute_dtype  # what a matmul runs in under autocast to it
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    seconds = time_call(lambda: a @ b, repeats=repeats, warmup=1, statistic="min")
    return 2 * n**3 / seconds


def train_bpb(
    setting: Setting, precision: str, steps: int, eval_bytes: int, threads: int
) -> tuple[float, float]:
    """Train setting G for ``steps`` from seed 0 on the enwik8 prefix; (validation bits per byte, seconds)."""
    from fromscratch.data import enwik8
    from fromscratch.metrics import bits_per_byte
    from fromscratch.training import TrainConfig, train
    from fromscratch.training.losses import next_byte_loss

    torch.manual_seed(0)
    data = enwik8.load(enwik8.PREFIX_BYTES, progressbar=False)
    model = Generator(
        vocab_size=setting.vocab,
        emb=setting.emb,
        heads=setting.heads,
        depth=setting.depth,
        context=setting.length,
    )
    batches = enwik8.RandomSubsequences(data.train, context=setting.length, batch_size=setting.batch, seed=0)
    config = TrainConfig(
        steps=steps, lr=1e-3, warmup_steps=max(1, steps // 10), precision=precision, progress=True
    )
    start = time.perf_counter()
    train(model, batches, next_byte_loss, config)
    seconds = time.perf_counter() - start
    bpb = bits_per_byte(model, data.val, context=setting.length, max_bytes=eval_bytes)
    return bpb, seconds


def seconds_per_step(step, teaching: bool, warmup: int, repeats: int) -> float:
    """The median time of ``repeats`` steps after ``warmup`` (allocations, kernel choice, optimiser state)."""
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
    (
        "copies and reshapes",
        ("copy_", "clone", "contiguous", "cat", "_to_copy", "transpose", "view", "reshape"),
    ),
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
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="CPU threads (default 2, as on the course's CI)"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed steps per measurement (the median counts)"
    )
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--profile", action="store_true", help="also break a step down by kind of work")
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes and 1 repeat: checks the script runs"
    )
    parser.add_argument("--cpu-only", action="store_true", help="skip CUDA even when it is present")
    parser.add_argument("--only", choices=["C", "G"], help="run one setting only")
    parser.add_argument("--precision", default="fp32,bf16", help="comma-separated: fp32, bf16, fp16")
    parser.add_argument(
        "--force-bf16", action="store_true", help="run 16-bit types on a CPU without their units"
    )
    parser.add_argument(
        "--bpb-steps", type=int, default=0, help="train setting G this many steps per precision"
    )
    parser.add_argument("--bpb-eval-bytes", type=int, default=20_000, help="validation bytes scored for bpb")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    settings = [
        s for s in (QUICK if args.quick else SETTINGS) if args.only is None or s.name.startswith(args.only)
    ]
    precisions = [p.strip() for p in args.precision.split(",")]
    if any(p not in DTYPES for p in precisions):
        parser.error(f"--precision takes fp32, bf16 and/or fp16, got {args.precision!r}")
    repeats, warmup = (1, 1) if args.quick else (args.repeats, args.warmup)
    devices = [torch.device("cpu")]
    if torch.cuda.is_available() and not args.cpu_only:
        devices.append(torch.device("cuda"))
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{args.threads} CPU threads, load average {os.getloadavg()[0]:.2f} at start, "
        f"CPU bf16 units: {cpu_has_bf16()}{' (QUICK: tiny sizes, not the benchmark)' if args.quick else ''}"
    )

    def runs(device: torch.device, precision: str) -> bool:
        fast_here = precision == "bf16" and cpu_has_bf16()  # a CPU has no fp16 matrix units we use
        return precision == "fp32" or device.type == "cuda" or fast_here or args.force_bf16

    peaks = {}
    for device in devices:
        for precision in precisions:
            big = 256 if args.quick else 2048
            n = big if runs(device, precision) else 256  # a small probe where bf16 is emulated (slow)
            peaks[device.type, precision] = matmul_peak(device, precision, n)
            peak = peaks[device.type, precision] / 1e9
            print(f"matmul peak {device.type} {precision}: {peak:,.1f} GFLOP/s ({n}²)")
    print(
        "\n| setting | device | precision | tokens/step | teaching (tok/s) | fast (tok/s) | fast / teaching "
        "| GFLOP/step | fast GFLOP/s | MFU |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    steps = {}
    for setting in settings:
        for device in devices:
            for precision in precisions:
                label = (
                    f"| {setting.name} (e={setting.emb}, depth {setting.depth}, t={setting.length}, "
                    f"b={setting.batch}, V={setting.vocab:,}) | {device.type} | {precision} |"
                )
                if not runs(device, precision):
                    print(f"{label} skipped: no {precision} units on this CPU (--force-bf16 runs it) |||||||")
                    continue
                step, model = build(setting, device, precision)
                steps[setting.name, device.type, precision] = step
                tokens = setting.batch * (setting.length - (0 if setting.name.startswith("C") else 1))
                teaching = tokens / seconds_per_step(step, True, warmup, repeats)
                fast = tokens / seconds_per_step(step, False, warmup, repeats)
                flops = training_flops(model, setting, tokens)
                achieved = flops * fast / tokens
                mfu = achieved / peaks[device.type, precision]
                print(
                    f"{label} {tokens:,} | {teaching:,.0f} | {fast:,.0f} | {fast / teaching:.2f}x | "
                    f"{flops / 1e9:,.1f} | {achieved / 1e9:,.1f} | {mfu:.1%} |",
                    flush=True,
                )
    if args.profile:
        for setting in settings:
            step = steps[setting.name, "cpu", "fp32"]
            for teaching in (True, False):
                profile_step(
                    step, teaching, f"{setting.name.split()[0]}, {'teaching' if teaching else 'fast'} path"
                )
    if args.bpb_steps:
        setting = QUICK[1] if args.quick else SETTINGS[1]
        print(f"\nbits per byte after {args.bpb_steps} steps of setting G (seed 0, enwik8 prefix, CPU):")
        for precision in precisions:
            if not runs(torch.device("cpu"), precision):
                print(f"  {precision}: skipped (no {precision} units on this CPU; --force-bf16 runs it)")
                continue
            bpb, seconds = train_bpb(setting, precision, args.bpb_steps, args.bpb_eval_bytes, args.threads)
            print(
                f"  {precision}: {bpb:.3f} bits per byte on {args.bpb_eval_bytes:,} validation bytes; "
                f"training took {seconds:.0f} s"
            )


if __name__ == "__main__":
    main()
