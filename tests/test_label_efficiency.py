"""The label-efficiency benchmark of chapter 10 (issue 23): its smoke profile end to end, on the real
IMDb and MiniLM files of the mirror; head + tail truncation."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fromscratch.chapters.ch10_modern_transformers.label_sizes import LABEL_EFFICIENCY_RUNS
from fromscratch.training.finetune import head_tail

ROOT = Path(__file__).resolve().parents[1]


def test_head_tail_keeps_a_quarter_of_the_start_and_the_end():
    assert head_tail([1, 2, 3], 5) == [1, 2, 3]
    assert head_tail(torch.arange(20), 8) == [0, 1, 14, 15, 16, 17, 18, 19]


def test_every_arm_trains_equally_long():
    run = LABEL_EFFICIENCY_RUNS["cpu"]
    assert [run.steps(n) for n in run.labels] == [60, 60, 63, 188]
    assert run.config(300, 1e-3).warmup_steps == 6


def test_the_smoke_benchmark_prints_the_table(mirror, tmp_path):
    env = os.environ | {"FROMSCRATCH_MIRROR": str(mirror)}
    plot = tmp_path / "curve.png"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "label_efficiency.py"),
            "--profile",
            "smoke",
            "--plot",
            str(plot),
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    cells = re.findall(r"^labels=(\d+) init=(\w+) seed=(\d) accuracy=(0\.\d{4})", out, re.M)
    # N=16: 2 seeds, N=32: 1 seed, three starting points each
    assert len(cells) == 9, out
    assert {c[1] for c in cells} == {"random", "ours", "minilm"}
    assert "unigram baseline" in out and "load average at end" in out
    assert plot.stat().st_size > 1000


def test_masked_lm_eval_scores_every_chosen_position_or_only_the_mask_ones():
    from fromscratch.chapters.ch10_modern_transformers.label_efficiency import masked_lm_eval
    from fromscratch.data.pretraining import MaskedBatches
    from fromscratch.models.bert import BertConfig, BertForPretraining

    torch.manual_seed(0)
    model = BertForPretraining(BertConfig(vocab_size=12, emb=16, heads=2, depth=1, context=16, dropout=0.0))
    seqs = [torch.randint(3, 11, (12,)) for _ in range(40)]
    batches = MaskedBatches(seqs, 8, mask_id=11, vocab_size=11, context=16, rate=0.5, seed=0)
    chosen = masked_lm_eval(model, batches)
    masked = masked_lm_eval(model, batches, positions="masked")
    assert masked > 0 and chosen > 0 and masked != chosen
    with pytest.raises(ValueError, match="positions"):
        masked_lm_eval(model, batches, positions="all")


def test_chapter_15_fine_tunes_minilm_with_chapter_10s_recipe():
    """Chapter 15 writes chapter 10's MiniLM recipe out in its own profile (a chapter owns its folder):
    the fine-tuning fields must stay equal to chapter 10's."""
    from fromscratch.chapters.ch15_assistant.profile import MINILM_CPU, MINILM_SMOKE

    for name, ours in (("smoke", MINILM_SMOKE), ("cpu", MINILM_CPU), ("gpu", MINILM_CPU)):
        theirs = LABEL_EFFICIENCY_RUNS[name]
        for field in ("batch", "finetune", "warmup", "pooling", "dropout"):
            assert getattr(ours, field) == getattr(theirs, field), (name, field)
        assert ours.lr("minilm") == theirs.lr("minilm"), name
