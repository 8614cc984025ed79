"""Chapter 10's label-efficiency curve: its sizes, one entry per profile (``prof.ch10.label_efficiency``).

The same fine-tuning from three starting points (random weights, our pretrained BERT, MiniLM) on ``N``
labelled reviews, every size held equal across them; :mod:`.label_efficiency`
runs it, in chapter 10 (``chapter_labels``, one seed) and in ``benchmarks/label_efficiency.py`` (the table).
"""

from __future__ import annotations

from dataclasses import replace

from fromscratch.training import TrainConfig
from fromscratch.training.finetune import LabelEfficiencyRun

# smoke: two tiny cells per starting point, to prove the code runs (seconds)
SMOKE = LabelEfficiencyRun(
    labels=(16, 32),
    seeds=2,
    many_seeds_up_to=16,
    test_reviews=32,
    val_reviews=16,
    lr_labels=16,
    lrs=(("random", (1e-3,)), ("ours", (1e-3,)), ("minilm", (1e-4, 3e-4))),
    picked=(("random", 1e-3), ("ours", 1e-3), ("minilm", 1e-4)),
    chapter_labels=(16, 32),
    context=24,
    batch=8,
    finetune=TrainConfig(epochs=1, weight_decay=0.01),
    min_steps=2,
    warmup=0.1,
    pooling="mean",
    dropout=0.0,
)
# cpu: ~60 min on 2 threads with the pretraining (14 min); the cost that fixed context and the steps is
# in benchmarks/label_efficiency.py's docstring
CPU = replace(
    SMOKE,
    labels=(100, 300, 1_000, 3_000),
    seeds=3,
    many_seeds_up_to=1_000,
    test_reviews=2_000,
    val_reviews=500,
    lr_labels=300,
    lrs=(("random", (3e-4, 1e-3, 3e-3)), ("ours", (3e-4, 1e-3, 3e-3)), ("minilm", (3e-5, 1e-4, 3e-4))),
    picked=(("random", 1e-3), ("ours", 3e-3), ("minilm", 1e-4)),  # measured: the benchmark's lr pick
    picked_in="cpu",
    chapter_labels=(100, 1_000),
    context=128,
    batch=16,
    min_steps=60,
    dropout=0.1,
)
# gpu: the cpu table plus all the labels (24,500: 500 are held out to pick the lr), at the gpu profile's
# fine-tuning length (its pretraining's); not run yet (no GPU was lent), so its lrs are the cpu ones
# until the benchmark picks its own
GPU = replace(CPU, labels=(100, 300, 1_000, 3_000, 24_500), context=256)

LABEL_EFFICIENCY_RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["LABEL_EFFICIENCY_RUNS", "LabelEfficiencyRun"]
