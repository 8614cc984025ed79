"""Data parallelism with ``torch.distributed`` (chapter 12): one model per process, gradients averaged.

``torchrun --nproc_per_node N script.py`` starts ``N`` copies of a script and gives each its
``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` and a rendezvous address. In the script::

    device = fromscratch.training.distributed.init()          # nccl, one GPU per process; else gloo on CPU
    history = train(model, shard(batches), loss_fn, config, device=device)
    fromscratch.training.distributed.finish()

:func:`~fromscratch.training.train` notices the process group: it wraps the model in
``DistributedDataParallel`` (after checking every rank built the same model), which all-reduces
(averages) the gradients during the backward pass, so every rank takes the same optimiser step.
Each rank must see **different** data: :func:`shard` keeps every ``world``-th batch.

The same command on other machines:

- one node with 8 GPUs: ``torchrun --standalone --nproc_per_node 8 script.py`` (nccl);
- several nodes: on each, ``torchrun --nnodes 4 --nproc_per_node 8 --rdzv_backend c10d
  --rdzv_endpoint HOST:29500 --rdzv_id JOB script.py`` with ``HOST`` one node every other reaches.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


def is_distributed() -> bool:
    """True inside an initialised process group with more than one process."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    """This process's rank (0 outside a process group)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


_rank = rank  # for functions whose keyword argument is called `rank`


def world_size() -> int:
    """The number of processes (1 outside a process group)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def is_main() -> bool:
    """True on rank 0, the process that prints, evaluates and writes checkpoints."""
    return rank() == 0


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now (for a local rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def choose_backend(
    local_rank: int, local_world: int, gpus: int, asked: str | None = None
) -> tuple[str, torch.device]:
    """The backend and this rank's device, for ``local_world`` processes on a node with ``gpus`` GPUs.

    nccl gives each process its own GPU (number ``local_rank``), so None picks it only when there is
    one GPU per process on this node; otherwise gloo on the CPU (e.g. 2 processes on Colab's one GPU,
    where ``cuda:1`` does not exist). Asking for nccl without enough GPUs raises a ValueError.
    """
    enough = 0 < local_world <= gpus
    backend = asked if asked is not None else "nccl" if enough else "gloo"
    if backend != "nccl":
        return backend, torch.device("cpu")
    if not enough:
        fewer = f"start at most {gpus} per node (torchrun --nproc_per_node {gpus}), or " if gpus else ""
        raise ValueError(
            f"nccl needs one GPU per process: {local_world} processes on this node, {gpus} GPU(s). "
            f"To fix, {fewer}use gloo on the CPU: init('gloo'), or init(), which picks it when GPUs are few."
        )
    return backend, torch.device("cuda", local_rank)


def init(backend: str | None = None, timeout_s: float = 120.0) -> torch.device:
    """Join the process group ``torchrun`` set up (its environment variables) and return this rank's device.

    backend: "gloo" (CPU) or "nccl" (CUDA, the GPU numbered ``LOCAL_RANK``); None picks nccl when this
    node has a GPU for each of its processes, else gloo on the CPU (:func:`choose_backend`), and says
    so on rank 0 when GPUs are there but too few. Use the returned device for the model and ``train``.
    """
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing:
        raise ValueError(
            f"Not started by torchrun: {', '.join(missing)} not set. Launch with "
            f"`torchrun --nproc_per_node 2 script.py` (or set them yourself)."
        )
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"]))
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    chosen, device = choose_backend(int(os.environ.get("LOCAL_RANK", 0)), local_world, gpus, backend)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        if backend is None and chosen == "gloo" and gpus > 0 and int(os.environ["RANK"]) == 0:
            why = f"{local_world} processes but {gpus} GPU(s) on this node (nccl needs one GPU per process)"
            print(f"distributed.init: {why}, so gloo on the CPU", flush=True)
        dist.init_process_group(chosen, timeout=timedelta(seconds=timeout_s))
    return device


def finish() -> None:
    """Leave the process group (the end of a torchrun script)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def shard(
    batches: Iterable[Any] | Callable[[], Iterator[Any]], *, rank: int | None = None, world: int | None = None
):
    """This rank's share of ``batches``: batches ``rank, rank + world, rank + 2 world, ...``.

    Takes what :func:`~fromscratch.training.train` takes (an iterable, or a function returning an
    iterator) and returns a function returning an iterator. For a ``DataLoader`` over a data set,
    ``torch.utils.data.DistributedSampler`` does the same without reading the other ranks' batches.
    """
    r = _rank() if rank is None else rank
    w = world_size() if world is None else world
    if not 0 <= r < w:
        raise ValueError(f"rank must be in 0..{w - 1}, got {r}.")

    def iterator() -> Iterator[Any]:
        source = batches() if callable(batches) else batches
        for i, batch in enumerate(source):
            if i % w == r:
                yield batch

    return iterator


def describe_model(model: nn.Module) -> str:
    """What must agree across ranks: the model's config (if it has one) and its parameter shapes."""
    shapes = [(name, tuple(p.shape)) for name, p in model.named_parameters()]
    return f"config={getattr(model, 'config', None)!r} parameters={shapes}"


def check_same_model(model: nn.Module) -> None:
    """Raise a ValueError on every rank unless all ranks built the same model (config and shapes)."""
    if not is_distributed():
        return
    mine = describe_model(model)
    everyone: list[str | None] = [None] * world_size()
    dist.all_gather_object(everyone, mine)
    different = [r for r, d in enumerate(everyone) if d != everyone[0]]
    if different:
        raise ValueError(
            f"Ranks {different} built a different model than rank 0 (rank 0: {str(everyone[0])[:200]}; "
            f"rank {different[0]}: {str(everyone[different[0]])[:200]}). Every rank must build the same "
            f"config: read it from the same profile, not from anything that depends on the rank."
        )


def wrap(model: nn.Module, device: torch.device) -> nn.Module:
    """``model`` (already on ``device``) in ``DistributedDataParallel``, starting from rank 0's weights."""
    from torch.nn.parallel import DistributedDataParallel

    ids = [device.index] if device.type == "cuda" and device.index is not None else None
    return DistributedDataParallel(model, device_ids=ids)


def no_sync(net: nn.Module, skip: bool) -> contextlib.AbstractContextManager:
    """``net.no_sync()`` (no gradient all-reduce: a micro-batch before the last of a step) for a DDP
    model when ``skip``; else nothing."""
    return net.no_sync() if skip and hasattr(net, "no_sync") else contextlib.nullcontext()


def mean_over_ranks(value: torch.Tensor) -> torch.Tensor:
    """The average of a scalar tensor over all ranks (the tensor itself outside a process group); it
    stays on its device, so no rank waits for its GPU here."""
    if not is_distributed():
        return value
    total = value.detach().clone()
    dist.all_reduce(total)
    return total / world_size()


def barrier() -> None:
    """Wait until every rank gets here (nothing outside a process group)."""
    if is_distributed():
        dist.barrier()


def launch(args: list[str], *, processes: int = 2, timeout_s: float = 900.0) -> str:
    """Run ``torchrun --nproc_per_node processes ARGS`` on this machine (127.0.0.1, a free port); its output.

    E.g. ``launch(["-m", "fromscratch.training.distributed"])`` runs :func:`demo` in 2 processes, one CPU
    thread each. Raises a RuntimeError with the end of the log when a process fails.
    """
    import subprocess
    import sys

    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "1",
        "--nproc_per_node",
        str(processes),
    ]
    command += ["--master_addr", "127.0.0.1", "--master_port", str(free_port()), *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    if run.returncode != 0:
        raise RuntimeError(f"torchrun failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    return run.stdout


__all__ = [
    "barrier",
    "check_same_model",
    "choose_backend",
    "describe_model",
    "finish",
    "free_port",
    "init",
    "is_distributed",
    "is_main",
    "launch",
    "mean_over_ranks",
    "no_sync",
    "rank",
    "shard",
    "wrap",
    "world_size",
]
