"""Chapter 11's measurements: KV-cache speed-up, dense vs sparse attention, Transformer-XL memory,
and length extrapolation of four position schemes.

Run it alone on the machine (it times things), e.g. under the shared lock:

    flock /tmp/heavy.lock timeout 1800 .venv/bin/python benchmarks/long_context.py | tee /tmp/long_context.log

Sizes come from the ``cpu`` profile's ``long_context`` run (``--profile`` picks another). All training
and evaluation use **only the first 1,000,000 bytes of enwik8** (the registered prefix, cut 90/5/5):
NOT the standard split, so no bits-per-byte figure here is comparable with published enwik8 results.
``--parts`` runs a subset: ``kv``, ``sparse``, ``xl``, ``sparse-model``, ``positions``. ``--seeds N``
trains every model of ``xl``, ``sparse-model`` and ``positions`` from N seeds (the weights and the batches'
order; seed 0 is the chapter's run) and prints each seed and the mean ± half the range:

    flock /tmp/heavy.lock python benchmarks/long_context.py --parts xl,sparse-model,positions --seeds 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from dataclasses import replace
from functools import partial

import torch

from fromscratch.attention import scaled_dot_product_attention
from fromscratch.attention.sparse import computed_scores, default_block, sparse_attention, sparse_mask
from fromscratch.chapters import get_profile
from fromscratch.data import enwik8
from fromscratch.generate import generate
from fromscratch.metrics import bits_per_byte
from fromscratch.models import LongContextGenerator, TransformerXL
from fromscratch.models.transformer_xl import bits_per_byte_xl, segment_loss
from fromscratch.training import train
from fromscratch.training.losses import next_byte_loss
from fromscratch.utils import loglog_slope, time_call

PARTS = ("kv", "sparse", "xl", "sparse-model", "positions")


def fit(run, model, batches, loss, steps):
    """Train ``model`` for ``steps`` with the run's schedule; returns the seconds it took."""
    start = time.perf_counter()
    config = replace(run.train, steps=steps, progress=False)
    train(model, batches, loss, config)
    return time.perf_counter() - start


def kv_cache(run) -> None:
    print("\n== KV cache: greedy generation of", run.kv_new, "tokens after a prompt, ms per new token ==")
    torch.manual_seed(0)
    model = LongContextGenerator(run.model, context=max(run.kv_prompts) + run.kv_new).eval()
    print(f"{'prompt':>7} {'no cache':>10} {'cache':>10} {'speed-up':>9}")
    for length in run.kv_prompts:
        prompt = torch.randint(0, 256, (1, length))
        times = {
            cached: time_call(
                partial(generate, model, prompt, steps=run.kv_new, temperature=0, cache=cached),
                repeats=run.kv_repeats,
            )
            for cached in (False, True)
        }
        slow, fast = (1000 * times[c] / run.kv_new for c in (False, True))
        print(f"{length:>7,} {slow:>10.2f} {fast:>10.2f} {slow / fast:>8.1f}x")


def sparse_timing(run) -> None:
    h, d = run.model.heads, run.model.emb // run.model.heads
    print(
        f"\n== dense vs sparse attention, one sequence, h={h}, d={d}, forward only; "
        "fixed pattern, block ≈ √t =="
    )
    print(f"{'t':>6} {'block':>5} {'dense ms':>9} {'sparse ms':>9} {'dense MB':>9} {'sparse MB':>9}")
    lengths, dense_ms, sparse_ms = [], [], []
    for t in run.sparse_lengths:
        block = default_block(t)
        q, k, v = (torch.randn(1, h, t, d) for _ in range(3))
        mask = sparse_mask("fixed", t, block)
        with torch.no_grad():
            dense = time_call(
                partial(scaled_dot_product_attention, q, k, v, mask), repeats=run.sparse_repeats
            )
            sparse = time_call(partial(sparse_attention, q, k, v, "fixed", block), repeats=run.sparse_repeats)
        dense_mb, sparse_mb = (4 * h * n / 2**20 for n in (t * t, computed_scores("fixed", t, block)))
        lengths.append(t)
        dense_ms.append(1000 * dense)
        sparse_ms.append(1000 * sparse)
        print(
            f"{t:>6,} {block:>5} {1000 * dense:>9.1f} {1000 * sparse:>9.1f} "
            f"{dense_mb:>9.1f} {sparse_mb:>9.1f}"
        )
    print(
        f"fitted time exponents: dense t^{loglog_slope(lengths, dense_ms):.2f}, "
        f"sparse t^{loglog_slope(lengths, sparse_ms):.2f}"
    )
    print(
        "(MB: float32 score matrices per sequence, computed from their shapes: "
        "dense h·t², sparse h·t·(2l + t/l))"
    )


def spread(values: list[float]) -> str:
    """``mean ± half the range (n seeds)``, or the one value."""
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {(max(values) - min(values)) / 2:.3f} ({len(values)} seeds)"


def transformer_xl(run, data, seeds: int = 1) -> None:
    length = run.xl.segment * run.xl_segments
    print(
        f"\n== Transformer-XL: L={run.xl.segment}, M={run.xl.memory}, {run.xl_segments} segments "
        f"per sequence, {run.xl_steps} steps, {seeds} seed(s) =="
    )
    scores: dict[str, list[float]] = {}
    for seed in range(seeds):
        results = {}
        for memory in (run.xl.memory, 0):
            torch.manual_seed(seed)
            model = TransformerXL(run.xl, memory=memory)
            batches = enwik8.RandomSubsequences(
                data.train, context=length, batch_size=run.batch_size, seed=seed
            )
            seconds = fit(run, model, batches, segment_loss, run.xl_steps)
            results[memory] = model
            print(f"seed {seed}: trained memory={memory}: {seconds:.0f} s")
        rows = {
            f"trained with M={run.xl.memory}, evaluated with it": bits_per_byte_xl(
                results[run.xl.memory], data.val, max_bytes=run.eval_bytes
            ),
            "trained and evaluated without memory (same L)": bits_per_byte_xl(
                results[0], data.val, max_bytes=run.eval_bytes
            ),
        }
        for memory in run.eval_memories:
            rows[f"the M={run.xl.memory} model evaluated with memory {memory:>4}"] = bits_per_byte_xl(
                results[run.xl.memory], data.val, memory=memory, max_bytes=run.eval_bytes
            )
        for name, bpb in rows.items():
            print(f"seed {seed}: bits per byte, {name}: {bpb:.3f}")
            scores.setdefault(name, []).append(bpb)
    for name, values in scores.items():
        print(f"bits per byte, {name}: {spread(values)}")


def sparse_model(run, data, seeds: int = 1) -> None:
    print(
        f"\n== sparse (block {run.sparse_block}) vs dense generator, context {run.sparse_context}, "
        f"{run.sparse_steps} steps, {seeds} seed(s) =="
    )
    scores: dict[str, list[float]] = {}
    for seed in range(seeds):
        for sparsity in (None, "strided", "fixed"):
            torch.manual_seed(seed)
            config = replace(
                run.model, context=run.sparse_context, sparsity=sparsity, sparse_block=run.sparse_block
            )
            model = LongContextGenerator(config)
            batches = enwik8.RandomSubsequences(
                data.train, context=run.sparse_context, batch_size=run.batch_size, seed=seed
            )
            seconds = fit(run, model, batches, next_byte_loss, run.sparse_steps)
            bpb = bits_per_byte(model, data.val, context=run.sparse_context, max_bytes=run.eval_bytes)
            scores.setdefault(sparsity or "dense", []).append(bpb)
            name = sparsity or "dense"
            print(f"seed {seed}: {name:>8}: {bpb:.3f} bits per byte ({seconds:.0f} s of training)")
    for name, values in scores.items():
        print(f"{name:>8}: {spread(values)} bits per byte")


def positions(run, data, seeds: int = 1) -> None:
    length = run.train_context
    print(
        f"\n== length extrapolation: trained at context {length} for {run.position_steps} steps, "
        f"bits per byte, {seeds} seed(s) =="
    )
    header = f"{'positions':>10} " + " ".join(f"{f'{f}x = {f * length}':>12}" for f in run.factors)
    scores: dict[str, list[list[float]]] = {}
    for seed in range(seeds):
        print(f"seed {seed}:\n{header}")
        for scheme in ("learned", "sinusoidal", "rope", "alibi"):
            torch.manual_seed(seed)
            model = LongContextGenerator(run.model, context=max(run.factors) * length, positions=scheme)
            batches = enwik8.RandomSubsequences(
                data.train, context=length, batch_size=run.batch_size, seed=seed
            )
            fit(run, model, batches, next_byte_loss, run.position_steps)
            row = [
                bits_per_byte(model, data.val, context=f * length, max_bytes=run.eval_bytes)
                for f in run.factors
            ]
            scores.setdefault(scheme, []).append(row)
            print(f"{scheme:>10} " + " ".join(f"{s:>12.3f}" for s in row))
    if seeds > 1:
        print(f"mean ± half the range over {seeds} seeds:\n{header}")
        for scheme, rows in scores.items():
            columns = [spread([r[i] for r in rows]).split(" (")[0] for i in range(len(run.factors))]
            print(f"{scheme:>10} " + " ".join(f"{c:>16}" for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "gpu"))
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated subset of {', '.join(PARTS)}"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=1, help="seeds for xl, sparse-model and positions")
    args = parser.parse_args()
    parts = args.parts.split(",")
    torch.set_num_threads(args.threads)
    run = get_profile(args.profile).ch11
    print(
        f"load average at start: {os.getloadavg()}; {platform.processor() or platform.machine()}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, profile {args.profile}"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = enwik8.load(run.data_bytes)
    print(f"DATA: {data.note}")
    start = time.perf_counter()
    if "kv" in parts:
        kv_cache(run)
    if "sparse" in parts:
        sparse_timing(run)
    if "xl" in parts:
        transformer_xl(run, data, args.seeds)
    if "sparse-model" in parts:
        sparse_model(run, data, args.seeds)
    if "positions" in parts:
        positions(run, data, args.seeds)
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
