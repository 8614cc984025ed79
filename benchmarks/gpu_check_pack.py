"""The GPU check's data pack: every chapter's training runs, small enough to carry to a GPU machine.

A GPU machine lent for the check has no network and takes at most 64 MiB of files, so it cannot read
the raw archives (IMDb alone is 84 MB). :func:`make_pack` builds each run of the GPU plan's adapters
(``gpu_plan_runs.py``, ``gpu_plan_later.py``) on the CPU, from the real data, and keeps what a step
needs:

- the batch the plan measures (the real data, the longest batch where lengths vary), its own storage;
- the model **without its weights**: the module pickled with its parameters on the ``meta`` device (a
  few kB), and the mean and standard deviation of each parameter as the model's own initialisation drew
  it; :func:`unpack_model` puts the model on the GPU and draws every weight again from a normal
  distribution with those two numbers (constants stay constants), so activations, losses and overflows
  are of the same size as with the real initialisation;
- the loss and the run's length (the plan's memory estimates are compared afterwards, from the JSON).

    python benchmarks/gpu_check.py --pack gpu_pack.pt    # on the CPU: about a minute, ~10 MB
"""

from __future__ import annotations

import copy
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_map_only

PACK_VERSION = 1


@dataclass
class PackedRun:
    """One training run, ready to rebuild on any device."""

    chapter: str  # "07"
    name: str  # "7.6 generator"
    model: bytes  # torch.save of the module, parameters on the meta device
    init: dict[str, tuple[float, float]]  # parameter name -> (mean, std) of its initial values
    batch: Any  # one real batch, on the CPU
    loss: Any  # loss_fn(model, batch), picklable
    steps: int | None  # optimiser steps of one run, or
    minutes: float | None  # its time budget
    count: int  # runs of this kind in the chapter
    precision: str  # the run's TrainConfig.precision ("auto" for most)
    params: int
    tokens: int  # token positions per step
    estimated: dict[str, int]  # precision name -> estimated peak bytes (empty: compared afterwards)


def init_stats(model: nn.Module) -> dict[str, tuple[float, float]]:
    """``{name: (mean, std)}`` of every parameter (each tied weight once)."""
    stats = {}
    for name, p in model.named_parameters():
        values = p.detach().double()
        stats[name] = (values.mean().item(), values.std().item() if values.numel() > 1 else 0.0)
    return stats


def model_bytes(model: nn.Module) -> bytes:
    """The module pickled with its parameters (not its buffers) on the meta device: structure only."""
    skeleton = copy.deepcopy(model)  # tied parameters stay one object in the copy
    moved: dict[int, nn.Parameter] = {}
    for module in skeleton.modules():
        for name, p in module.named_parameters(recurse=False):
            if id(p) not in moved:
                moved[id(p)] = nn.Parameter(p.detach().to("meta"), requires_grad=p.requires_grad)
            module._parameters[name] = moved[id(p)]
    out = io.BytesIO()
    torch.save(skeleton, out)
    return out.getvalue()


def unpack_model(run: PackedRun, device: torch.device | str, seed: int = 0) -> nn.Module:
    """The run's model on ``device``, its weights drawn again with their original mean and spread."""
    model = torch.load(io.BytesIO(run.model), weights_only=False)
    made: dict[int, nn.Parameter] = {}  # not Module.to_empty: it would untie tied weights
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if id(p) not in made:
                made[id(p)] = nn.Parameter(torch.empty_like(p, device=device), requires_grad=p.requires_grad)
            module._parameters[name] = made[id(p)]
    model = model.to(device)  # the buffers
    generator = torch.Generator(device=device).manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            mean, std = run.init[name]
            if std == 0.0:
                p.fill_(mean)
            else:
                p.normal_(mean, std, generator=generator)
    return model


def own_storage(batch: Any) -> Any:
    """The batch with each tensor copied into its own storage (a slice would carry its whole dataset)."""
    return tree_map_only(torch.Tensor, lambda t: t.clone().contiguous(), batch)


def make_pack(profile: str, chapters: list[str], log=print) -> list[PackedRun]:
    """Build every run of ``chapters`` at ``profile`` from the real data (the CPU; needs the data)."""
    from gpu_plan_later import CHAPTERS

    from fromscratch.chapters import get_profile

    prof = get_profile(profile)
    packed = []
    for chapter in chapters:
        started = time.perf_counter()
        for run in CHAPTERS[chapter](prof):
            torch.manual_seed(0)
            model, batch, loss_fn = run.build()
            model.train()
            tokens = run.tokens(batch) if run.tokens else _default_tokens(batch)
            packed.append(
                PackedRun(
                    chapter=run.chapter,
                    name=run.name,
                    model=model_bytes(model),
                    init=init_stats(model),
                    batch=own_storage(batch),
                    loss=loss_fn,
                    steps=run.steps,
                    minutes=run.minutes,
                    count=run.count,
                    precision=run.precision,
                    params=sum(p.numel() for p in model.parameters()),
                    tokens=tokens,
                    estimated={},
                )
            )
        log(f"  packed chapter {chapter} in {time.perf_counter() - started:.1f} s", flush=True)
    return packed


def _default_tokens(batch: Any) -> int:
    from gpu_plan_measure import _default_tokens as tokens

    return tokens(batch)


def save_pack(runs: list[PackedRun], path: str | Path | io.BytesIO, profile: str) -> None:
    """Write the pack, atomically to a file (one file; batches shared between runs are stored once)."""
    content = {"version": PACK_VERSION, "profile": profile, "runs": [vars(r) for r in runs]}
    if isinstance(path, io.BytesIO):
        torch.save(content, path)
        return
    tmp = Path(path).with_suffix(Path(path).suffix + ".tmp")
    torch.save(content, tmp)
    tmp.replace(path)


def load_pack(path: str | Path | io.BytesIO) -> tuple[str, list[PackedRun]]:
    """``(profile, runs)`` of a pack written by :func:`save_pack`."""
    content = torch.load(path, weights_only=False)
    if content.get("version") != PACK_VERSION:
        raise SystemExit(
            f"{path} is a pack of version {content.get('version')}, this script reads {PACK_VERSION}: "
            "make it again with --pack."
        )
    return content["profile"], [PackedRun(**r) for r in content["runs"]]
