"""The GPU check (``benchmarks/gpu_check.py``) stays runnable between the rare loans of a GPU machine.

``--quick`` is the check's own code on the CPU at smoke sizes: every chapter's runs packed from the real
data (the mirror), rebuilt from the pack, trained through ``train`` with counts and timings, and every
heavy cell, ending with the check's summary line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_gpu_check_quick_runs_every_chapter(mirror, tmp_path):
    out = tmp_path / "check.json"
    env = {**os.environ, "FROMSCRATCH_DATA": str(tmp_path / "cache"), "FROMSCRATCH_MIRROR": str(mirror)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "GPU check: 11 chapters, 0 problems"
    report = json.loads(out.read_text())
    assert {row["chapter"] for row in report["runs"]} == {
        "01",
        "06",
        "07",
        "08",
        "09",
        "10",
        "11",
        "12",
        "13",
        "14",
        "15",
    }
    assert all(
        "ms_per_step" in r and r["flops"] >= 0 for row in report["runs"] for r in row["precisions"].values()
    )
    assert len(report["cells"]) >= 6 and all("seconds_at_gpu_size" in c for c in report["cells"])


def test_a_packed_model_keeps_its_tied_weights_and_init_scale():
    """The pack carries a model without weights; unpacked, its tied weights are one tensor again and
    every weight has the mean and spread the model's own initialisation gave it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_check_pack import PackedRun, init_stats, model_bytes, unpack_model

    from fromscratch.models import Llama
    from fromscratch.models.llama import LlamaConfig

    model = Llama(LlamaConfig(vocab_size=64, context=16, emb=32, heads=4, kv_heads=2, depth=2, hidden=64))
    run = PackedRun(
        "07", "t", model_bytes(model), init_stats(model), None, None, 1, None, 1, "auto", 0, 0, {}
    )
    assert len(run.model) < 20_000  # structure only: no weights travel
    again = unpack_model(run, "cpu")
    assert again.to_logits.weight is again.token_embedding.weight
    assert [n for n, _ in again.named_parameters()] == [n for n, _ in model.named_parameters()]
    for (name, p), (_, q) in zip(model.named_parameters(), again.named_parameters(), strict=True):
        if p.numel() > 100:
            assert abs(p.std().item() - q.std().item()) < 0.1 * p.std().item() + 1e-6, name
