"""The GPU check's pack: the runs the chapters train at their ``gpu`` size, read from their record.

    python benchmarks/gpu/notebooks.py --record records.jsonl --profile gpu   # here: every train call
    python benchmarks/gpu/pack.py records.jsonl                                # the runs it holds

The record (``record.py``, beside this file) is the pack: one JSON line per ``train`` call, with its
model, its longest batch's shapes, its loss and its ``TrainConfig``; :func:`runs` groups the calls into
distinct runs (one model trained on each of seven tasks: one run, ``count`` 7). No data travels:
:func:`batch_of` draws a batch of the recorded shapes (tokens in the recorded range, masks with the
recorded share of True), all a timing needs. :func:`rebuild` makes the model on the device, as
``Class(Config(...))`` where the record says that builds it (real initialisation and buffers), else
from the recorded structure, each weight drawn with its recorded mean and spread (tied weights tied
again, the large buffers zero). A loss defined in a notebook cannot be imported: its run is skipped.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import importlib
import io
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn

NOT_THE_RUN = ("checkpoint", "checkpoint_every", "resume", "progress", "eval_every")  # TrainConfig fields


class Skipped(ValueError):
    """A run the check cannot make here (its model or loss lives in a notebook)."""


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def key(entry: dict[str, Any]) -> str:
    """12 hex digits naming a run by what decides a step's time: model, batch, loss, config."""
    model = {k: v for k, v in entry["model"].items() if k not in ("init", "pickle")}
    config = {k: v for k, v in entry["config"].items() if k not in NOT_THE_RUN}
    text = json.dumps([entry["chapter"], model, entry["batch"], entry["loss"], config], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def runs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's ``train`` lines, one per distinct run, with its ``count`` and the ``cells`` it is in."""
    grouped: dict[str, dict[str, Any]] = {}
    for entry in (e for e in records if e.get("kind") == "train"):
        run = grouped.setdefault(key(entry), {**entry, "key": key(entry), "count": 0, "cells": []})
        run["count"] += 1
        run["cells"].append(entry.get("cell"))
    return list(grouped.values())


def leaves(tree: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    """The tensors of a recorded batch."""
    if tree and "shape" in tree:
        yield tree
    elif tree:
        for part in tree.get("list", tree.get("tuple", list(tree.get("dict", {}).values()))):
            yield from leaves(part)


def tokens(tree: dict[str, Any] | None) -> int:
    """Token positions a step reads: the first 2-d integer tensor's elements, else the batch size."""
    tensors = list(leaves(tree))
    two = [t for t in tensors if len(t["shape"]) == 2 and "min" in t]
    return math.prod(two[0]["shape"]) if two else next((t["shape"][0] for t in tensors if t["shape"]), 0)


def name(run: dict[str, Any]) -> str:
    model = run.get("name") or run["model"]["class"].rpartition(".")[2]
    return f"{run['chapter'][:2]} {model} (cell {run['cells'][0]})"


# --- on the device --------------------------------------------------------------------------------------


RENAMED = {"max_len": "context"}  # attributes the package renamed since a record was pickled: old -> new


def renamed(model: nn.Module) -> None:
    """Give a model pickled before a rename the attributes (and config fields) today's code reads."""
    for module in model.modules():
        for old, new in RENAMED.items():
            if old in vars(module) and new not in vars(module):
                setattr(module, new, vars(module)[old])
        config = vars(module).get("config")
        if config is not None and dataclasses.is_dataclass(config):
            for old, new in RENAMED.items():
                if old in vars(config) and new not in vars(config):
                    object.__setattr__(config, new, vars(config)[old])


def rebuild(run: dict[str, Any], device: torch.device) -> nn.Module:
    """The run's model on ``device`` (see the module's docstring)."""
    about = run["model"]
    if "config" in about:  # the recorder checked that Class(Config(**config)) builds the same parameters
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in about["config"].items()}
        with torch.device(device):
            return _imported(about["class"])(_imported(about["config_class"])(**fields))
    if "pickle" not in about:
        raise Skipped(f"{about['class']} cannot be rebuilt: {about.get('not_pickled', 'no structure')}")
    try:
        model = torch.load(io.BytesIO(base64.b64decode(about["pickle"])), weights_only=False)
    except AttributeError as error:  # a class the notebook defined
        raise Skipped(f"{about['class']} is defined in its notebook ({error})") from None
    renamed(model)
    fresh: dict[int, torch.Tensor] = {}  # one new tensor per recorded one: tied weights stay tied
    for module in model.modules():
        for store in (module._parameters, module._buffers):
            for field, t in store.items():
                if t is not None and t.is_meta:
                    if id(t) not in fresh:
                        zeros = torch.zeros_like(t, device=device)
                        fresh[id(t)] = (
                            nn.Parameter(zeros, t.requires_grad) if isinstance(t, nn.Parameter) else zeros
                        )
                    store[field] = fresh[id(t)]
    model.to(device)  # the small buffers, recorded with their values
    with torch.no_grad():
        for weight, p in model.named_parameters():
            mean, std = about.get("init", {}).get(weight, (0.0, 0.02))
            p.normal_(mean, std) if std > 0 else p.fill_(mean)
    return model


def _imported(path: str) -> Any:
    """``module.qualname`` imported, trying the longest module first (``pkg.mod.Class.method``)."""
    module, qualname = path, ""
    while module and "<locals>" not in path and not module.startswith("__main__"):
        try:
            found: Any = importlib.import_module(module)
            for part in filter(None, qualname.split(".")):
                found = getattr(found, part)
            return found
        except (ImportError, AttributeError):
            module, _, head = module.rpartition(".")
            qualname = f"{head}.{qualname}"
    raise Skipped(f"{path} is defined in its notebook: it cannot be imported here")


def loss_of(path: str) -> Callable:
    return _imported(path)


def batch_of(tree: dict[str, Any] | None, device: torch.device, generator: torch.Generator) -> Any:
    """A batch of the recorded layout, drawn at random, on ``device``."""
    if tree is None:
        raise Skipped("no batch recorded (the run read a one-shot iterator)")
    if "shape" in tree:
        dtype = getattr(torch, tree["dtype"])
        if dtype == torch.bool:
            return (torch.rand(tree["shape"], generator=generator) < tree.get("true", 1.0)).to(device)
        if "min" in tree:  # integers: ids, labels (negative ones, IGNORE, only where all were)
            low = max(tree["min"], 0) if tree["max"] > 0 else tree["min"]
            return torch.randint(low, tree["max"] + 1, tree["shape"], generator=generator, dtype=dtype).to(
                device
            )
        return torch.randn(tree["shape"], generator=generator).to(device, dtype)
    if "dict" in tree:
        return {k: batch_of(v, device, generator) for k, v in tree["dict"].items()}
    if "list" in tree or "tuple" in tree:
        parts = [batch_of(v, device, generator) for v in tree.get("list", tree.get("tuple"))]
        return parts if "list" in tree else tuple(parts)
    return tree.get("value")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("record", type=Path)
    found = runs(read(parser.parse_args().record))
    for run in found:
        steps = f"{run['config']['minutes']} min" if run["steps"] is None else f"{run['steps']:,} steps"
        print(
            f"  {name(run)}: {run['model']['parameters']:,} weights, {steps} x {run['count']}, {run['loss']}"
        )
    print(f"pack: {len(found)} runs of {len({r['chapter'] for r in found})} chapters")


if __name__ == "__main__":
    main()
