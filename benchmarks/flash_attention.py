"""FlashAttention from scratch (chapter 16): the memory of a forward + backward pass against the length,
the work counted, and the Triton kernel timed against PyTorch's fused kernel on a GPU.

    flock /tmp/heavy.lock python benchmarks/flash_attention.py memory   # peak MiB, t = 1k .. 16k (CPU)
    python benchmarks/flash_attention.py work                           # FLOPs and bytes (no timing)
    python benchmarks/flash_attention.py kernel                         # CUDA: Triton vs PyTorch, bf16
    python benchmarks/flash_attention.py --smoke                        # all three, tiny: seconds

``memory`` measures one head (``(1, 1, t, 64)`` fp32) on the CPU with ``pipeline.peak_bytes`` (every
allocation and free the PyTorch profiler records during the pass, summed in order): naive attention
(the ``t x t`` scores, softmax and weighted sum), ours (``flash_attention``, blocks of 256) and PyTorch's
``F.scaled_dot_product_attention``; each row prints the machine's load average when it was measured.

``kernel`` needs CUDA and triton: forward and forward + backward of ``triton_flash_attention`` and of
``F.scaled_dot_product_attention`` in bf16, ``b x t = 16,384`` tokens, 16 heads of 64 (FlashAttention-2's
benchmark shape), causal and not; TFLOP/s counted as FlashAttention's benchmarks count them (forward
``4 b h t² d``, backward 2.5 times that, halved when causal: ``attention_cost``'s numbers, the diagonal
tiles aside), as a fraction of PyTorch's speed and of the card's dense bf16 peak.
"""

from __future__ import annotations

import argparse
import functools
import os

import torch
import torch.nn.functional as F

from fromscratch.attention.flash import flash_attention
from fromscratch.attention.flash_cost import attention_cost
from fromscratch.chapters.ch16_flash_attention.pipeline import (
    attention_step,
    load_average,
    naive_attention,
    peak_bytes,
    random_qkv,
)
from fromscratch.utils import time_call

MiB = 2**20
LENGTHS = (1024, 2048, 4096, 8192, 16384)
SMOKE_LENGTHS = (64, 128)  # --smoke: every mode at these lengths, d = 16 (the kernel: t = 128, d = 64)
PEAK_BF16 = {  # dense bf16 (fp16 on the T4) tensor-core peaks, TFLOP/s, from the vendor's data sheets
    "H200": 989.0,
    "H100": 989.0,  # SXM; the PCIe card: 756
    "A100": 312.0,
    "L4": 121.0,
    "A10": 125.0,
    "T4": 65.0,
}


def memory(lengths: tuple[int, ...], d: int, block: int) -> None:
    """One row per length: the peak MiB of a forward + backward pass, three ways, and the load average.

    No seconds: the profiler that counts the bytes records every operation, and its overhead would be
    most of any time measured here (chapter 16 times the passes without it)."""
    contenders = {
        "naive": naive_attention,
        "ours": functools.partial(flash_attention, block_q=block, block_k=block),
        "F.sdpa": F.scaled_dot_product_attention,
    }
    print(f"## peak memory of one forward + backward pass, (1, 1, t, {d}) fp32, CPU; ours: blocks of {block}")
    print("| t | naive MiB | ours MiB | F.sdpa MiB | 3 t² x 4 B, MiB | load |")
    print("|---:|---:|---:|---:|---:|---:|")
    for t in lengths:
        peaks = {}
        for name, attention in contenders.items():
            inputs = random_qkv(t, d)
            peaks[name] = peak_bytes(lambda a=attention, x=inputs: attention_step(a, *x))
            del inputs
        print(
            f"| {t:,} | {peaks['naive'] / MiB:,.1f} | {peaks['ours'] / MiB:.1f} "
            f"| {peaks['F.sdpa'] / MiB:.1f} | {3 * t * t * 4 / MiB:,.0f} | {load_average():.1f} |",
            flush=True,
        )


def work(d: int = 64, lengths: tuple[int, ...] = LENGTHS) -> None:
    """FLOPs and main-memory bytes of one head's forward + backward pass: naive against tiles."""
    print(f"## one head, d = {d}, fp32, forward + backward: GFLOP, MB moved, FLOPs per byte")
    print("| t | naive | tiles of 64 | tiles of 128 | tiles of 128, causal |")
    print("|---:|---|---|---|---|")
    for t in lengths:
        cells = []
        for block, causal in ((None, False), (64, False), (128, False), (128, True)):
            passes = [
                attention_cost(t, t, d, causal=causal, block_q=block, block_k=block or 64, backward=b)
                for b in (False, True)
            ]
            flops, moved = sum(c.flops for c in passes), sum(c.bytes for c in passes)
            cells.append(f"{flops / 1e9:,.1f} / {moved / 1e6:,.0f} / {flops / moved:.0f}")
        print(f"| {t:,} | " + " | ".join(cells) + " |")


def _peak(name: str) -> float | None:
    return next((tflops for card, tflops in PEAK_BF16.items() if card in name), None)


def kernel(repeats: int, lengths: tuple[int, ...] = LENGTHS, heads: int = 16, tokens: int = 16_384) -> None:
    """Triton kernel against PyTorch's fused kernel on CUDA, bf16: ms, TFLOP/s and the two fractions.

    ``heads`` of 64, ``b = tokens // t`` sequences at each length ``t`` (FlashAttention-2's shape)."""
    if not torch.cuda.is_available():
        print("kernel: no CUDA device here; the Triton kernel is timed on a GPU only (see the docstring).")
        return
    from fromscratch.attention.flash_triton import triton_flash_attention

    name = torch.cuda.get_device_name()
    peak = _peak(name)
    d = 64
    print(f"## {name}: bf16, {heads} heads of {d}, b x t = {tokens:,}; dense bf16 peak {peak or '?'} TFLOP/s")
    print("| t | causal | pass | Triton ms | PyTorch ms | Triton TFLOP/s | of PyTorch's | of the peak |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for t in lengths:
        b = max(1, tokens // t)
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v, dout = (
            torch.randn(b, heads, t, d, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(4)
        )
        q, k, v = (x.requires_grad_() for x in (q, k, v))
        for causal in (False, True):
            ours = functools.partial(triton_flash_attention, causal=causal, block_q=64, block_k=64)
            theirs = functools.partial(F.scaled_dot_product_attention, is_causal=causal)
            for label, backward in (("forward", False), ("fwd + bwd", True)):
                # FlashAttention's convention: forward 4 b h t² d, halved when causal; backward 2.5 times that
                flops = 4 * b * heads * t * t * d / (2 if causal else 1) * (3.5 if backward else 1)

                def run(attention, backward=backward, inputs=(q, k, v, dout)):
                    out = attention(*inputs[:3])
                    if backward:
                        out.backward(inputs[3])

                ms = [time_call(lambda a=a: run(a), repeats=repeats, warmup=2) * 1e3 for a in (ours, theirs)]
                tflops = flops / (ms[0] / 1e3) / 1e12
                of_peak = f"{tflops / peak:.0%}" if peak else "?"
                print(
                    f"| {t:,} | {causal} | {label} | {ms[0]:.2f} | {ms[1]:.2f} | {tflops:.1f} "
                    f"| {ms[1] / ms[0]:.0%} | {of_peak} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", nargs="?", choices=["memory", "work", "kernel"], help="what to measure")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, in seconds (all three modes if none is named)"
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--block", type=int, default=256, help="ours: block_q = block_k (memory)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per kernel measurement")
    parser.add_argument("--threads", type=int, default=None, help="torch's CPU threads (memory)")
    args = parser.parse_args()
    if args.what is None and not args.smoke:
        parser.error("say what to measure: memory, work or kernel (or --smoke: all three at tiny sizes)")
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, {torch.get_num_threads()} threads")
    if args.smoke:  # the code paths of every mode, at sizes that take seconds; no number here means anything
        for what in [args.what] if args.what else ["memory", "work", "kernel"]:
            if what == "memory":
                memory(SMOKE_LENGTHS, 16, 32)
            elif what == "work":
                work(16, SMOKE_LENGTHS)
            else:
                kernel(2, SMOKE_LENGTHS[-1:], heads=2, tokens=2 * SMOKE_LENGTHS[-1])
    elif args.what == "memory":
        memory(tuple(args.lengths), args.head_dim, args.block)
    elif args.what == "work":
        work(args.head_dim)
    else:
        kernel(args.repeats)


if __name__ == "__main__":
    main()
