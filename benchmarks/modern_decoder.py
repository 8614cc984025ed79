"""Chapter 14's measurements: the ablation from a GPT-2-style decoder to a Llama-style one, and the KV
cache and decoding speed of grouped-query attention.

Run it alone on the machine (it times things), e.g. under the shared lock:

    flock /tmp/heavy.lock timeout 1800 .venv/bin/python benchmarks/modern_decoder.py | tee /tmp/decoder.log

Sizes come from the ``cpu`` profile's ``decoders`` run (``--profile`` picks another). Every rung of the
ablation trains for the same wall-clock budget (``run.train.minutes``), from the same seed, on the same
batches of **the first 1,000,000 bytes of enwik8** (the registered prefix, cut 90/5/5: NOT the standard
split, so the bits per byte compare the rungs with each other, never with published enwik8 results),
and is scored on the same validation bytes. ``--parts`` runs a subset: ``ablation``, ``gqa``;
``--plot FILE`` saves the learning curves; ``--threads N`` sets torch's CPU threads (on a busy shared
machine one thread per process is steadier than two competing for the same cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import warnings
from dataclasses import replace
from functools import partial

import torch

from fromscratch.attention.grouped import cache_bytes
from fromscratch.data import enwik8
from fromscratch.generate import generate_tokens
from fromscratch.metrics import bits_per_byte
from fromscratch.models import Llama
from fromscratch.profiles import get_profile
from fromscratch.training import train
from fromscratch.training.losses import next_byte_loss
from fromscratch.utils import count_parameters, time_call

PARTS = ("ablation", "gqa")


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"


def ablation(run, plot: str | None) -> None:
    minutes = run.train.minutes
    print(
        f"\n== ablation: {len(run.ladder)} rungs, {minutes:g} min of training each, same batches and seed =="
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = enwik8.load(run.data_bytes)
    curves, rows = {}, []
    for name, config in run.ladder:
        torch.manual_seed(0)
        model = Llama(config)
        batches = enwik8.RandomSubsequences(
            data.train, context=config.context, batch_size=run.batch_size, seed=0
        )
        history = train(model, batches, next_byte_loss, replace(run.train, progress=False))
        steps, losses = history.series("loss")
        seconds_per_step = 60 * minutes / len(steps)
        bpb = bits_per_byte(model, data.val, context=config.context, max_bytes=run.eval_bytes)
        rows.append((name, count_parameters(model), 1000 * seconds_per_step, len(steps), bpb))
        curves[name] = ([s * seconds_per_step for s in steps], losses)
        print(f"  {name:<22} done: {len(steps):,} steps, {bpb:.3f} bits per byte (load {load()})", flush=True)
    print(f"\n{'variant':<22} {'parameters':>10} {'ms/step':>8} {'steps':>6} {'val bits/byte':>14}")
    for name, params, ms, steps, bpb in rows:
        print(f"{name:<22} {params:>10,} {ms:>8.1f} {steps:>6,} {bpb:>14.3f}")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        from fromscratch.viz.decoders import ablation_curves

        ablation_curves(curves).savefig(plot, dpi=100)
        print(f"learning curves saved to {plot}")


def gqa(run) -> None:
    c = run.gqa
    print(
        f"\n== grouped-query attention: e={c.emb}, h={c.heads}, {c.depth} blocks; batch {run.gqa_batch}, "
        f"prompt {run.gqa_prompt}, then {run.gqa_new} tokens decoded one at a time with the cache =="
    )
    print(f"{'kv heads':>8} {'parameters':>11} {'cache MiB':>10} {'h/hk':>5} {'ratio':>6} {'tokens/s':>9}")
    prompt = torch.randint(
        0, c.vocab_size, (run.gqa_batch, run.gqa_prompt), generator=torch.Generator().manual_seed(0)
    )
    full = None
    for kv_heads in sorted(run.gqa_kv_heads, reverse=True):
        torch.manual_seed(0)
        model = Llama(c, kv_heads=kv_heads).eval()
        cache = model.new_cache()
        with torch.no_grad():
            model(prompt, cache=cache)
        size = cache_bytes(cache)
        full = full or size
        decode = partial(generate_tokens, model, prompt, run.gqa_new, context=c.context, temperature=0)
        seconds = time_call(decode, repeats=run.gqa_repeats)
        rate = run.gqa_batch * run.gqa_new / seconds
        print(
            f"{kv_heads:>8} {count_parameters(model):>11,} {size / 2**20:>10.2f} {c.heads // kv_heads:>5} "
            f"{full / size:>6.2f} {rate:>9.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "gpu"))
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument("--plot", default=None, help="save the ablation's learning curves to this file")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    run = get_profile(args.profile).decoders
    print(
        f"profile={args.profile}, torch {torch.__version__}, {platform.machine()}, "
        f"{torch.get_num_threads()} threads, load average at start {load()}"
    )
    if "ablation" in args.parts:
        ablation(run, args.plot)
    if "gqa" in args.parts:
        gqa(run)
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    main()
