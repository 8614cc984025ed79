"""Training translation models on Multi30k within a time budget, and scoring them (chapter 09).

The chapter and ``benchmarks/translation.py`` share these steps, so both measure the same thing:

- :func:`prepare`: the data of a run profile, tokenised (:class:`TranslationData`);
- :func:`train_for_minutes`: the one training loop (:func:`fromscratch.train.train`) with a step
  count chosen so that the linear learning-rate decay reaches zero when the time budget runs out
  (the seconds per step are measured first, on a copy of the model);
- :func:`load_or_train`: reuse a checkpoint saved for the same configuration and budget, or train
  and save one (under the data cache, :func:`fromscratch.checkpoints.checkpoint_path`);
- :func:`evaluate`: translate the test set (greedy or beam search) and score it with sacreBLEU.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from fromscratch.checkpoints import checkpoint_path, load_checkpoint, save_checkpoint
from fromscratch.data.multi30k import EncodedPairs, Multi30k, TokenBatches, encode_pairs, load_multi30k
from fromscratch.data.multi30k import multi30k_tokenizer as _tokenizer
from fromscratch.generate.beam import translate
from fromscratch.losses import translation_loss
from fromscratch.metrics.translation import BleuScore, bleu
from fromscratch.train import TrainConfig, to_device, train


@dataclass
class TranslationData:
    """A run's Multi30k: the tokenizer, the tokenised training pairs and the test pairs as text."""

    tokenizer: Any  # tokenizers.Tokenizer, joint English+German BPE
    train: EncodedPairs  # training pairs within max_len tokens
    test: list[tuple[str, str]]  # (english, german) test pairs
    raw: Multi30k  # all three splits as text


def prepare(run) -> TranslationData:
    """Load Multi30k, the tokenizer of ``run.vocab_size`` tokens, and the run's subsets of the splits."""
    raw = load_multi30k()
    tokenizer = _tokenizer(run.vocab_size, raw)
    pairs = raw.train if run.train_pairs is None else raw.train[: run.train_pairs]
    test = raw.test if run.test_pairs is None else raw.test[: run.test_pairs]
    return TranslationData(tokenizer, encode_pairs(pairs, tokenizer, max_len=run.max_len), test, raw)


def seconds_per_step(model: nn.Module, batches: TokenBatches, loss_fn, *, steps: int = 8, device="cpu") -> float:
    """The median time of a training step (forward, backward, AdamW), measured on a copy of ``model``."""
    twin = copy.deepcopy(model).to(device).train()
    optimizer = torch.optim.AdamW(twin.parameters(), lr=1e-4)
    times = []
    for i, batch in enumerate(batches):
        if i >= steps + 2:
            break
        start = time.perf_counter()
        loss_fn(twin, to_device(batch, device)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device != "cpu" and torch.cuda.is_available():
            torch.cuda.synchronize()
        if i >= 2:  # the first steps allocate memory and pick kernels
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def train_for_minutes(
    model: nn.Module,
    data: TranslationData,
    run,
    *,
    minutes: float,
    lr: float,
    device="cpu",
    label_smoothing: float | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train ``model`` on ``data.train`` for about ``minutes``, the schedule ending at that time.

    Returns ``{"history", "steps", "minutes", "seconds_per_step"}`` (``minutes``: measured).
    """
    smoothing = run.label_smoothing if label_smoothing is None else label_smoothing
    loss_fn = functools.partial(translation_loss, label_smoothing=smoothing)
    batches = TokenBatches(data.train, run.max_tokens, seed=0)
    per_step = seconds_per_step(model, batches, loss_fn, device=device)
    steps = max(1, int(minutes * 60 / per_step))
    if run.max_steps is not None:
        steps = min(steps, run.max_steps)
    config = TrainConfig(steps=steps, lr=lr, warmup_steps=min(run.warmup_steps, steps // 4), weight_decay=0.0,
                         progress=progress)  # fmt: skip
    start = time.perf_counter()
    history = train(model, batches, loss_fn, config, device=device)
    took = (time.perf_counter() - start) / 60
    return {"history": history, "steps": steps, "minutes": took, "seconds_per_step": per_step}


TRAINING_FIELDS = ("vocab_size", "max_len", "train_pairs", "max_tokens", "warmup_steps", "label_smoothing", "max_steps")


def checkpoint_name(kind: str, config: Any, minutes: float, lr: float, run) -> str:
    """A file name that changes whenever anything that shapes the trained weights changes:
    the model's config, the time budget, the learning rate and the run's data and training fields."""
    training = {field: getattr(run, field) for field in TRAINING_FIELDS}
    key = json.dumps({"config": asdict(config), "minutes": minutes, "lr": lr, "run": training}, sort_keys=True)
    return f"09_{kind}_{hashlib.sha256(key.encode()).hexdigest()[:12]}.pt"


def load_or_train(model: nn.Module, kind: str, data: TranslationData, run, *, minutes: float, lr: float, device="cpu"):
    """Load the weights saved for this exact setting if there are any, else train and save them.

    Returns ``(info, loaded)``: the training record (steps, minutes, losses) and whether it was loaded.
    """
    path = checkpoint_path(checkpoint_name(kind, model.config, minutes, lr, run))
    if path.is_file():
        state = load_checkpoint(path)
        model.load_state_dict(state["model"])
        return state["info"], True
    info = train_for_minutes(model, data, run, minutes=minutes, lr=lr, device=device)
    record = {k: info[k] for k in ("steps", "minutes", "seconds_per_step")}
    record["loss"] = info["history"].series("loss")
    save_checkpoint(path, {"model": model.state_dict(), "info": record})
    return record, False


def evaluate(model: nn.Module, data: TranslationData, *, beam_size: int = 1, **options) -> tuple[BleuScore, list[str]]:
    """Translate ``data.test`` and return its corpus BLEU (sacreBLEU) and the translations."""
    hypotheses = translate(model, data.tokenizer, [en for en, _ in data.test], beam_size=beam_size, **options)
    return bleu(hypotheses, [de for _, de in data.test]), hypotheses


__all__ = [
    "TranslationData",
    "checkpoint_name",
    "evaluate",
    "load_or_train",
    "prepare",
    "seconds_per_step",
    "train_for_minutes",
]
