"""Time SelfAttention's teaching path against its fast path (chapter 04's closing note).

The teaching path (``attention=[]``) writes out ``softmax(q kᵀ / sqrt(s)) v`` and keeps the
``(b, h, t, t)`` weights; the fast path calls ``torch.nn.functional.scaled_dot_product_attention``.
Sizes come from the run profiles: the ``cpu`` profile on the CPU, the ``gpu`` profile on CUDA.
Each measurement is the fastest of ``timing_repeats`` forward passes after one warm-up pass.

    python benchmarks/attention_timing.py                 # CPU, and CUDA when present
    python benchmarks/attention_timing.py --threads 2     # as on the course's CI machines
    python benchmarks/attention_timing.py --smoke         # the smoke profile's sizes: seconds
"""

from __future__ import annotations

import argparse
import platform

import torch

from fromscratch.attention import KINDS, SelfAttention
from fromscratch.chapters import get_profile
from fromscratch.chapters.ch02_basic_self_attention.profile import AttentionRun
from fromscratch.utils import count_parameters, time_call


def ms_per_call(fn, repeats: int) -> float:
    """Fastest time in milliseconds of ``repeats`` calls of ``fn()``, after one warm-up call.

    The minimum, as ``timeit`` recommends: other work on the machine only ever adds time, so the
    fastest run is the best estimate of what the computation itself costs.
    """
    return time_call(fn, repeats=repeats, warmup=1, statistic="min") * 1e3


def table(run: AttentionRun, device: torch.device, kinds: bool) -> None:
    print(
        f"\n## {device.type}: batch {run.timing_batch}, emb {run.timing_emb}, heads {run.timing_heads}, "
        f"fastest of {run.timing_repeats} forward passes after a warm-up (ms)"
    )
    print(f"| {'t':>5} | {'teaching':>9} | {'fast':>9} | {'speed-up':>8} |")
    print(f"|{'-' * 7}|{'-' * 11}|{'-' * 11}|{'-' * 10}|")
    torch.manual_seed(0)
    attention = SelfAttention(run.timing_emb, run.timing_heads).to(device)
    with torch.no_grad():
        for t in run.timing_lengths:
            x = torch.randn(run.timing_batch, t, run.timing_emb, device=device)
            teaching = ms_per_call(lambda x=x: attention(x, attention=[]), run.timing_repeats)
            fast = ms_per_call(lambda x=x: attention(x), run.timing_repeats)
            print(f"| {t:>5} | {teaching:>9.3f} | {fast:>9.3f} | {teaching / fast:>7.1f}x |")
        if kinds:
            t = run.timing_lengths[-1]
            x = torch.randn(run.timing_batch, t, run.timing_emb, device=device)
            print(f"\nfast path by kind at t = {t}:")
            for kind, Attention in KINDS.items():
                module = Attention(run.timing_emb, run.timing_heads).to(device)
                print(
                    f"  {kind:>8}: "
                    f"{ms_per_call(lambda module=module: module(x), run.timing_repeats):9.3f} ms, "
                    f"{count_parameters(module):,} parameters"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument("--profile", default=None, help="profile for the CPU table (default: cpu)")
    parser.add_argument("--no-kinds", action="store_true", help="skip the standard/wide/narrow comparison")
    parser.add_argument("--smoke", action="store_true", help="the smoke profile on every device: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.profile = "smoke"
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{torch.get_num_threads()} CPU threads"
    )
    table(get_profile(args.profile or "cpu").ch02, torch.device("cpu"), not args.no_kinds)
    if torch.cuda.is_available():
        print(f"\nGPU: {torch.cuda.get_device_name()}")
        table(get_profile(args.profile or "gpu").ch02, torch.device("cuda"), not args.no_kinds)


if __name__ == "__main__":
    main()
