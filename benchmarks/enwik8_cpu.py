"""Benchmark: the `cpu` profile's enwik8 generator after 10 minutes of training on 2 CPU threads.

Trains ``Generator(get_profile("cpu").ch07.model)`` with ``fromscratch.training`` for a fixed
wall-clock budget and prints bits per byte on held-out bytes (the first ``eval_bytes`` of the
validation split, every byte scored once, see ``fromscratch.metrics.bits_per_byte``).

The budget is met by calibration: a few timed steps on a throwaway copy of the model measure the
seconds per step, and the run gets as many steps as fit (so its learning-rate schedule warms up and
decays to zero within the budget).

It needs the full enwik8 (``enwik8.zip``, the standard 90M / 5M / 5M split); without it, it stops
with the data registry's error saying how to get the file. ``--prefix`` runs on the 1,000,000-byte
prefix instead (a mirror provides it), cut 90 / 5 / 5 in proportion: NOT the standard split, and
labelled so in the output.

    python benchmarks/enwik8_cpu.py                   # the benchmark: 10 minutes, 2 threads
    python benchmarks/enwik8_cpu.py --prefix --minutes 0.2   # a quick try on the prefix
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace

import torch

from fromscratch.chapters import get_profile, seed_everything
from fromscratch.chapters.ch07_masking_generation.profile import Enwik8Run
from fromscratch.data import DataError, enwik8
from fromscratch.metrics import bits_per_byte
from fromscratch.models import Generator
from fromscratch.training import train
from fromscratch.training.losses import next_byte_loss
from fromscratch.utils import count_parameters, time_call


def seconds_per_step(run: Enwik8Run, batches, *, warmup: int = 3, timed: int = 12) -> float:
    """Time ``timed`` training steps (after ``warmup`` untimed ones) of a throwaway model."""
    model = Generator(run.model)

    def steps(n: int) -> None:
        config = replace(run.train, steps=n, warmup_steps=0, progress=False)
        train(model, batches, next_byte_loss, config)

    steps(warmup)
    return time_call(lambda: steps(timed), repeats=1, warmup=0) / timed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="training wall-time budget (default 10)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument(
        "--prefix",
        action="store_true",
        help="use the 1,000,000-byte prefix (NOT the standard split) when the full file is missing",
    )
    parser.add_argument(
        "--eval-bytes", type=int, default=None, help="held-out bytes to score (default: the profile's)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    seed_everything(args.seed)
    run = get_profile("cpu").ch07
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", enwik8.PrefixWarning)  # said below, in the results
            data = enwik8.load(enwik8.PREFIX_BYTES if args.prefix else run.data_bytes)
    except DataError as error:
        print(
            f"enwik8_cpu: {error}\n\nThis benchmark needs the full enwik8 for the standard split. To try it "
            f"on the 1,000,000-byte prefix instead (not comparable with published numbers), add --prefix.",
            file=sys.stderr,
        )
        return 1

    batches = enwik8.RandomSubsequences(
        data.train, context=run.model.context, batch_size=run.batch_size, seed=args.seed
    )
    per_step = seconds_per_step(run, batches)
    budget = args.minutes * 60
    steps = max(1, int(budget / per_step))
    model = Generator(run.model)
    config = replace(  # the profile's learning rate and warm-up, for as many steps as fit the budget
        run.train,
        steps=steps,
        warmup_steps=min(run.train.warmup_steps, steps // 10),
        progress=sys.stderr.isatty(),
    )
    start = time.perf_counter()
    history = train(model, batches, next_byte_loss, config)
    trained = time.perf_counter() - start
    eval_bytes = args.eval_bytes or run.eval_bytes
    start = time.perf_counter()
    bpb = bits_per_byte(model, data.val, context=run.model.context, batch_size=64, max_bytes=eval_bytes)
    scored = time.perf_counter() - start

    print(f"data:       {data.note}")
    c = run.model
    print(
        f"model:      cpu profile, emb={c.emb} heads={c.heads} depth={c.depth} context={c.context} "
        f"batch={run.batch_size}, {count_parameters(model):,} parameters"
    )
    print(
        f"training:   {steps:,} steps in {trained / 60:.1f} min on {args.threads} threads "
        f"({per_step:.3f} s/step calibrated), final training loss {history.last('loss'):.3f} bits/byte"
    )
    print(
        f"held out:   first {min(eval_bytes, len(data.val)):,} bytes of the validation split, "
        f"stride {c.context // 2} ({scored:.0f} s)"
    )
    print(f"bits per byte: {bpb:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
