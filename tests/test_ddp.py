"""Data parallelism (chapter 12): 2 CPU processes under torchrun (gloo, 127.0.0.1) train like one.

The test launches this same file with ``python -m torch.distributed.run --nproc_per_node 2``; each
rank runs :func:`worker` and saves what it computed, and the test compares that with one process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from fromscratch.models import Generator, GeneratorConfig
from fromscratch.training import TrainConfig, distributed, train

CONFIG = GeneratorConfig(vocab_size=64, emb=32, heads=4, depth=2, context=16)
STEPS, BATCH = 3, 8  # optimiser steps; sequences per step over both ranks


def data() -> list[tuple[torch.Tensor, torch.Tensor]]:
    """2 * STEPS half-batches: rank r reads batches r, r + 2, r + 4 (its shard)."""
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 64, (2 * STEPS, BATCH // 2, 17), generator=g)
    return [(t[:, :-1], t[:, 1:]) for t in tokens]


def lm_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x).transpose(1, 2), y)


def fresh_model(**fields) -> Generator:
    torch.manual_seed(0)
    return Generator(CONFIG, **fields)


def worker(out: Path) -> None:
    """One rank: DDP gradients on its half of a batch, a `train` run on its shard, a mismatched config."""
    device = distributed.init()
    rank = distributed.rank()
    # 1. the gradients after DistributedDataParallel's all-reduce
    model = fresh_model()
    net = distributed.wrap(model, device)
    lm_loss(net, data()[rank]).backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    # 2. `train`, unchanged, on this rank's shard
    model = fresh_model()
    history = train(
        model, distributed.shard(data()), lm_loss, TrainConfig(steps=STEPS, lr=1e-2, progress=False)
    )
    # 3. ranks that built different models get a clear error before training
    try:
        train(fresh_model(emb=32 if rank == 0 else 48), data(), lm_loss, TrainConfig(steps=1, progress=False))
        error = ""
    except ValueError as e:
        error = str(e)
    torch.save(
        {"grads": grads, "params": model.state_dict(), "losses": history.series("loss")[1], "error": error},
        out / f"rank{rank}.pt",
    )
    distributed.finish()


def test_two_processes_equal_one_process_on_the_combined_batch(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2"]
    command += [
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(distributed.free_port()),
        __file__,
        str(tmp_path),
    ]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]

    # 1. all-reduced gradients = one process's gradients on both halves together
    model = fresh_model()
    x, y = (torch.cat(parts) for parts in zip(data()[0], data()[1], strict=True))
    lm_loss(model, (x, y)).backward()
    for name, p in model.named_parameters():
        for r in ranks:
            torch.testing.assert_close(r["grads"][name], p.grad, atol=1e-6, rtol=1e-5, msg=name)

    # 2. `train` on shards = `train` on the combined batches, and both ranks end with the same weights
    halves = zip(data()[::2], data()[1::2], strict=True)
    combined = [tuple(torch.cat(p) for p in zip(a, b, strict=True)) for a, b in halves]
    model = fresh_model()
    history = train(model, combined, lm_loss, TrainConfig(steps=STEPS, lr=1e-2, progress=False))
    for name, p in model.state_dict().items():
        for r in ranks:
            torch.testing.assert_close(r["params"][name], p, atol=1e-5, rtol=1e-4, msg=name)
    assert ranks[0]["losses"] == ranks[1]["losses"]  # the logged loss is the mean over ranks
    torch.testing.assert_close(torch.tensor(ranks[0]["losses"]), torch.tensor(history.series("loss")[1]))

    # 3. a different model on one rank: a clear error on every rank
    for r in ranks:
        assert "built a different model than rank 0" in r["error"]


def test_shard_deals_batches_round_robin():
    assert list(distributed.shard(range(7), rank=1, world=3)()) == [1, 4]
    assert list(distributed.shard(lambda: iter("abcd"), rank=0, world=2)()) == ["a", "c"]
    assert distributed.world_size() == 1 and distributed.is_main() and not distributed.is_distributed()


if __name__ == "__main__":  # a rank started by torchrun
    worker(Path(sys.argv[1]))
