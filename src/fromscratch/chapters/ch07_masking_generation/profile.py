"""Run sizes of chapter 07 (masking and the enwik8 generator): smoke, cpu and gpu."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models import GeneratorConfig
from fromscratch.training import TrainConfig


# --- chapter 07: masking and the enwik8 generator --------------------------------------------------
@dataclass(frozen=True)
class Enwik8Run:
    data_bytes: int | None  # read only the first bytes of enwik8 (None: all 100M, standard split)
    model: GeneratorConfig  # the causal generator (blog: e = 256, 8 heads, 12 blocks, context 256)
    train: TrainConfig  # steps (blog: ~170K in ~24 h), peak AdamW lr (blog: Adam, 1e-4), warm-up, eval_every
    batch_size: int  # blog: 32
    eval_bytes: int  # held-out bytes scored for bits per byte
    demo: TrainConfig  # the with / without mask comparison (section 7.2): steps, lr, warm-up of a tenth
    demo_context: int  # context of that comparison (short: copying is found sooner)
    sample_bytes: int  # length of each generated sample


# smoke: the mirror's 1,000,000-byte prefix, a one-block model; seconds on 2 cores.
SMOKE = Enwik8Run(
    data_bytes=1_000_000,
    model=GeneratorConfig(emb=64, heads=4, depth=1, context=32),
    train=TrainConfig(steps=200, lr=5e-3, warmup_steps=20, eval_every=50),
    batch_size=16,
    eval_bytes=4_000,
    # section 7.2's short runs: the main run's lr, warmed up over a tenth of the steps
    demo=TrainConfig(steps=200, lr=5e-3, warmup_steps=20),
    demo_context=16,
    sample_bytes=120,
)
# cpu: the full enwik8 (standard split); about 0.13 s a step on 2 free cores: ~10 minutes.
CPU = replace(
    SMOKE,
    data_bytes=None,
    model=replace(SMOKE.model, emb=128, depth=2, context=128),
    train=replace(SMOKE.train, steps=4_000, lr=2e-3, warmup_steps=100, eval_every=500),
    batch_size=32,
    eval_bytes=100_000,
    demo=replace(SMOKE.demo, lr=2e-3),
    sample_bytes=300,
)
# gpu: the blog's model (12 blocks, emb 256, context 256, batch 32); the blog trained 170K batches.
# 35,000 steps: their minutes on each card are in book/running.md's plan (benchmarks/gpu/report.py)
GPU = replace(
    CPU,
    model=replace(CPU.model, emb=256, heads=8, depth=12, context=256),
    train=replace(CPU.train, steps=35_000, lr=3e-4, warmup_steps=1_000, eval_every=2_500),
    eval_bytes=1_000_000,
    demo=replace(CPU.demo, steps=1_000, lr=3e-4, warmup_steps=100),
    demo_context=32,
    sample_bytes=600,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
