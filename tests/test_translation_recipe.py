"""Chapter 09's recipe: the load average that ``val_bleu`` records while a run trains, read back."""

from __future__ import annotations

import math

from fromscratch.chapters.ch09_encoder_decoder.pipeline import training_load
from fromscratch.training import History


def test_training_load_reads_the_range_recorded_with_the_evaluations():
    rows = [
        {"step": 1, "loss": 5.0, "lr": 1e-3},
        {"step": 100, "seconds": 30.0, "val_bleu": 3.0, "load": 2.1},
        {"step": 200, "seconds": 60.0, "val_bleu": 6.0, "load": 1.9},
        {"step": 300, "seconds": 90.0, "val_bleu": 7.0, "load": math.nan},  # no load average here
    ]
    assert training_load(History(rows)) == (1.9, 2.1)


def test_a_run_without_recorded_load_says_none():
    assert training_load(History([{"step": 1, "loss": 5.0}])) is None
