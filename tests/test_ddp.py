"""Data parallelism (chapter 12): 2 CPU processes under torchrun (gloo, 127.0.0.1) train like one.

The test launches this same file with ``python -m torch.distributed.run --nproc_per_node 2``; each
rank runs :func:`worker` and saves what it computed, and the test compares that with one process.
With ``--one-fake-gpu`` each rank instead believes CUDA has one GPU and runs chapter 12's demo
(:func:`one_fake_gpu`): ``init`` must pick gloo on the CPU, never ``cuda:1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F

from fromscratch.models import Generator, GeneratorConfig
from fromscratch.training import TrainConfig, distributed, train

CONFIG = GeneratorConfig(vocab_size=64, emb=32, heads=4, depth=2, context=16)
STEPS, BATCH = 3, 8  # optimiser steps; sequences per step over both ranks
# What the comparison means: fp32 on the CPU, in every process. "auto" is fp32 on a CPU too, but say it:
# a bf16 run's rounding of two half-batches differs from one whole batch's at ~1e-3.
FP32 = TrainConfig(steps=STEPS, lr=1e-2, precision="fp32", progress=False)
SRC = str(Path(__file__).parents[1] / "src")  # the ranks import this checkout's package, then the rest
PYTHONPATH = os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))


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
    history = train(model, distributed.shard(data()), lm_loss, FP32, device="cpu")
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
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": PYTHONPATH}
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
    lm_loss(model, (x, y)).backward()  # fp32 on the CPU
    for name, p in model.named_parameters():
        for r in ranks:
            torch.testing.assert_close(r["grads"][name], p.grad, atol=1e-6, rtol=1e-5, msg=name)

    # 2. `train` on shards = `train` on the combined batches, and both ranks end with the same weights
    halves = zip(data()[::2], data()[1::2], strict=True)
    combined = [tuple(torch.cat(p) for p in zip(a, b, strict=True)) for a, b in halves]
    model = fresh_model()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each rank (OMP_NUM_THREADS=1): the same order of additions in a matmul
    try:
        history = train(model, combined, lm_loss, FP32, device="cpu")
    finally:
        torch.set_num_threads(threads)
    # The gradients agree to rounding (1. above), but AdamW divides by sqrt(v): an entry whose gradient is
    # near zero turns a rounding difference into a visible one. 1e-4 is 1 % of one step's lr (seen: 1.3e-5 on
    # 1 of 1,024 entries on one machine, 0 on another); a wrong shard or reduction is off by far more.
    for name, p in model.state_dict().items():
        for r in ranks:
            torch.testing.assert_close(r["params"][name], p, atol=1e-4, rtol=1e-4, msg=name)
    assert ranks[0]["losses"] == ranks[1]["losses"]  # the logged loss is the mean over ranks
    torch.testing.assert_close(torch.tensor(ranks[0]["losses"]), torch.tensor(history.series("loss")[1]))

    # 3. a different model on one rank: a clear error on every rank
    for r in ranks:
        assert "built a different model than rank 0" in r["error"]


def test_choose_backend_gives_no_rank_a_gpu_that_does_not_exist():
    cpu = torch.device("cpu")
    for local_rank in (0, 1):  # 2 processes on this node
        assert distributed.choose_backend(local_rank, 2, gpus=0) == ("gloo", cpu)  # a laptop
        assert distributed.choose_backend(local_rank, 2, gpus=1) == ("gloo", cpu)  # Colab's one GPU
        assert distributed.choose_backend(local_rank, 2, gpus=2) == ("nccl", torch.device("cuda", local_rank))
        assert distributed.choose_backend(local_rank, 2, gpus=8, asked="gloo") == ("gloo", cpu)
    for gpus in (0, 1):
        with pytest.raises(ValueError, match="nccl needs one GPU per process: 2 processes on this node"):
            distributed.choose_backend(1, 2, gpus=gpus, asked="nccl")


def fake_cuda(monkeypatch, gpus: int) -> list[torch.device]:
    """CUDA with ``gpus`` devices as far as ``init`` can tell; the devices it sets come back in the list."""
    chosen: list[torch.device] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    return chosen


@pytest.mark.parametrize("gpus", [1, 2])
def test_init_on_a_two_rank_job_uses_a_gpu_per_rank_or_none(monkeypatch, capsys, gpus):
    """Faked CUDA, the variables torchrun sets, no process group: what init picks for ranks 0 and 1."""
    set_devices = fake_cuda(monkeypatch, gpus)
    groups: list[str] = []
    monkeypatch.setattr(dist, "init_process_group", lambda backend, **kw: groups.append(backend))
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    env = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    devices = []
    for r in (0, 1):
        monkeypatch.setenv("RANK", str(r))
        monkeypatch.setenv("LOCAL_RANK", str(r))
        devices.append(distributed.init())
    said = capsys.readouterr().out
    if gpus == 1:  # Colab: gloo on the CPU, said once, and nccl refused with what to do
        assert groups == ["gloo", "gloo"] and devices == [torch.device("cpu")] * 2 and set_devices == []
        assert said.count("2 processes but 1 GPU(s) on this node") == 1 and "gloo on the CPU" in said
        with pytest.raises(ValueError, match="start at most 1 per node"):
            distributed.init("nccl")
    else:  # one GPU each, as before
        assert groups == ["nccl", "nccl"] and said == ""
        assert set_devices == devices == [torch.device("cuda", 0), torch.device("cuda", 1)]


def test_the_demo_runs_in_two_processes_on_a_machine_with_one_gpu(monkeypatch):
    """Chapter 12's cell on Colab: `launch` 2 ranks that see one (fake) GPU; gloo on the CPU, no crash."""
    monkeypatch.setenv("PYTHONPATH", PYTHONPATH)
    out = distributed.launch([__file__, "--one-fake-gpu"], processes=2, timeout_s=300)
    assert "rank 0: gloo cpu" in out and "rank 1: gloo cpu" in out, out
    assert out.count("2 processes but 1 GPU(s) on this node") == 1, out
    assert "all ranks hold the same gradients: True" in out, out


def one_fake_gpu() -> None:
    """One rank whose `distributed` sees CUDA with one GPU (not to be used): init, then chapter 12's demo."""
    from fromscratch.chapters.ch12_going_big.ddp import demo

    def seen_by_init(fake, real):  # the rest of torch (AdamW checks CUDA graphs) sees the real CUDA
        return lambda: fake if sys._getframe(1).f_globals["__name__"] == distributed.__name__ else real()

    def no_such_gpu(device):
        raise RuntimeError(f"CUDA error: invalid device ordinal ({device}; the fake has no GPU at all)")

    torch.cuda.is_available = seen_by_init(True, torch.cuda.is_available)
    torch.cuda.device_count = seen_by_init(1, torch.cuda.device_count)
    torch.cuda.set_device = no_such_gpu
    device = distributed.init()
    print(f"rank {distributed.rank()}: {dist.get_backend()} {device}", flush=True)
    demo(emb=16, depth=1, context=8, batch=4, steps=1)


def test_shard_deals_batches_round_robin():
    assert list(distributed.shard(range(7), rank=1, world=3)()) == [1, 4]
    assert list(distributed.shard(lambda: iter("abcd"), rank=0, world=2)()) == ["a", "c"]
    assert distributed.world_size() == 1 and distributed.is_main() and not distributed.is_distributed()


if __name__ == "__main__":  # a rank started by torchrun
    one_fake_gpu() if sys.argv[1] == "--one-fake-gpu" else worker(Path(sys.argv[1]))
