"""Chapter 19's run: a sweep of byte-level Llamas on IMDb's unlabelled reviews, every run at a compute budget
``C`` (FLOPs), then one run at a larger budget whose loss the fits predict before it trains.

Every size is written as a difference from ``smoke`` (``CPU = replace(SMOKE, ...)``)::

    config = sweep.model_config(width, prof.ch19)      # a Llama of that width
    train(Llama(config), batches, next_byte_loss, sweep.train_config(config, budget, prof.ch19, lr))
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ScalingRun:
    """The sizes of chapter 19's sweep."""

    reviews: int  # unlabelled reviews read for training (a stream of bytes, far more than any run reads)
    held_out: int  # further reviews, never trained on: every loss is measured on them
    eval_bytes: int  # held-out bytes scored per run (bits per byte, each byte once)
    context: int  # t: the training sequence length (bytes)
    batch_size: int  # sequences per step
    depth: int  # blocks of every model (the sweep changes the width: e = 8 · heads)
    widths: tuple[int, ...]  # e of the models the sweep may pick from, in increasing order
    budgets: tuple[float, ...]  # the IsoFLOP budgets C, in FLOPs of training (19.1's count)
    per_budget: int  # sizes trained at each budget: the widths nearest a first guess of the optimum
    warmup: float  # the warm-up's share of each run's steps (then cosine to 10 % of the peak)
    lrs: tuple[float, ...]  # 19.2: the learning rates the small sweep tries, once
    lr_width: int  # ... at this width
    lr_budget: float  # ... and this budget
    verify: float  # 19.4: the verification run's budget, as a multiple of the largest budget
    draws: int  # bootstrap resamplings of every fit
    frames: int  # budgets shown by the interactive figure


# smoke: 2 budgets x 3 tiny widths, a few dozen steps each: proves the code runs (seconds), fits nothing
SMOKE = ScalingRun(
    reviews=300,
    held_out=40,
    eval_bytes=4_096,
    context=32,
    batch_size=8,
    depth=1,
    widths=(8, 16, 24),
    budgets=(1e8, 2e8),
    per_budget=3,
    warmup=0.05,
    lrs=(2e-3, 8e-3),
    lr_width=16,
    lr_budget=1e8,
    verify=3.0,
    draws=20,
    frames=4,
)
# cpu: 5 budgets doubling from 5e10 FLOPs, 6 of 8 widths at each (8 to 128: 3k to 430k parameters, two
# blocks), 8 x 64 bytes a step (a pilot at 1e11 FLOPs: 32 sequences a step left the larger models too few
# steps to learn, 3.34 bits per byte at e = 16 against 3.00 with 8); the verification run at 4x the largest
# budget. Sized for about 30 minutes from steps timed at 32 sequences; executed on 2026-12-02 it took 12
# minutes in all on a quiet 2-core machine (734 s, load 0.7 to 2.0), with every IsoFLOP minimum inside.
# Every run reads fresh bytes: the largest reads about 5M of 21M.
CPU = replace(
    SMOKE,
    reviews=16_000,
    held_out=400,
    eval_bytes=60_000,
    context=64,
    batch_size=8,
    depth=2,
    widths=(8, 16, 24, 32, 48, 64, 96, 128),
    budgets=(5e10, 1e11, 2e11, 4e11, 8e11),
    per_budget=6,
    lrs=(1e-3, 2e-3, 4e-3, 8e-3),
    lr_width=24,
    lr_budget=1e11,
    verify=4.0,
    draws=200,
    frames=12,
)
# gpu (planned, never measured: no GPU was lent to this chapter): four blocks, context 256, budgets doubling
# from 2.5e13 FLOPs, widths 48 to 384; the verification run at 3x the largest (its ~60M bytes are about
# all the reviews hold: a larger one would repeat data, which the laws do not describe)
GPU = replace(
    CPU,
    reviews=49_000,
    held_out=1_000,
    eval_bytes=500_000,
    context=256,
    batch_size=64,
    depth=4,
    widths=(48, 64, 96, 128, 192, 256, 384),
    budgets=(2.5e13, 5e13, 1e14, 2e14, 4e14),
    lr_width=96,
    lr_budget=5e13,
    verify=3.0,
)
RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["CPU", "GPU", "RUNS", "SMOKE", "ScalingRun"]
