"""Training translation models on Multi30k within a time budget, and scoring them (chapter 09).

The chapter and ``benchmarks/translation.py`` share these steps, so both measure the same thing:

- :func:`prepare`: the data of a run profile, tokenised (:class:`TranslationData`);
- :func:`train_for_minutes`: the one training loop (:func:`fromscratch.training.train`) with a time
  budget: the linear learning-rate decay reaches zero when the budget runs out;
- :func:`load_or_train`: reuse a checkpoint saved for the same configuration and budget, or train
  and save one (under the data cache, :func:`fromscratch.training.checkpoints.checkpoint_path`);
- :func:`evaluate`: translate the test set (greedy or beam search) and score it with sacreBLEU.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from torch import nn

from fromscratch.data.multi30k import EncodedPairs, Multi30k, TokenBatches, encode_pairs, load_multi30k
from fromscratch.data.multi30k import multi30k_tokenizer as _tokenizer
from fromscratch.generate.beam import translate
from fromscratch.metrics.translation import BleuScore, bleu
from fromscratch.training import TrainConfig, train
from fromscratch.training.checkpoints import checkpoint_path, load_checkpoint, save_checkpoint
from fromscratch.training.losses import translation_loss


@dataclass
class TranslationData:
    """A run's Multi30k: the tokenizer, the tokenised training pairs and the test pairs as text."""

    tokenizer: Any  # tokenizers.Tokenizer, joint English+German BPE
    train: EncodedPairs  # training pairs within max_len tokens
    test: list[tuple[str, str]]  # (english, german) test pairs
    raw: Multi30k  # all three splits as text
    split: str = "test"  # which split `test` holds ("val" when choosing settings)


def prepare(run) -> TranslationData:
    """Load Multi30k, the tokenizer of ``run.vocab_size`` tokens, and the run's subsets of the splits."""
    raw = load_multi30k()
    tokenizer = _tokenizer(run.vocab_size, raw)
    pairs = raw.train if run.train_pairs is None else raw.train[: run.train_pairs]
    test = raw.test if run.test_pairs is None else raw.test[: run.test_pairs]
    return TranslationData(tokenizer, encode_pairs(pairs, tokenizer, max_len=run.max_len), test, raw)


def train_for_minutes(
    model: nn.Module,
    data: TranslationData,
    run,
    *,
    minutes: float,
    lr: float,
    warmup_steps: int,
    max_tokens: int,
    device="cpu",
    label_smoothing: float | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train ``model`` on ``data.train`` for ``minutes`` of training steps; the learning rate decays
    to zero exactly when they run out (``TrainConfig(minutes=...)``; the smoke profile also caps the steps).

    Returns ``{"history", "steps", "minutes", "seconds_per_step"}``, all measured.
    """
    smoothing = run.label_smoothing if label_smoothing is None else label_smoothing
    loss_fn = functools.partial(translation_loss, label_smoothing=smoothing)
    batches = TokenBatches(data.train, max_tokens, seed=0)
    config = TrainConfig(minutes=minutes, steps=run.max_steps, lr=lr, warmup_steps=warmup_steps, weight_decay=0.0,
                         progress=progress)  # fmt: skip
    start = time.perf_counter()
    history = train(model, batches, loss_fn, config, device=device)
    took = time.perf_counter() - start
    steps = len(history.series("loss")[0])
    return {"history": history, "steps": steps, "minutes": took / 60, "seconds_per_step": took / steps}


TRAINING_FIELDS = ("vocab_size", "max_len", "train_pairs", "label_smoothing", "max_steps")


def checkpoint_name(kind: str, config: Any, run, **schedule: float) -> str:
    """A file name that changes whenever anything that shapes the trained weights changes: the model's
    config, the schedule (``minutes``, ``lr``, ``warmup_steps``, ``max_tokens``) and the run's data fields."""
    training = {field: getattr(run, field) for field in TRAINING_FIELDS}
    key = json.dumps({"config": asdict(config), **schedule, "run": training}, sort_keys=True)
    return f"09_{kind}_{hashlib.sha256(key.encode()).hexdigest()[:12]}.pt"


def load_or_train(model: nn.Module, kind: str, data: TranslationData, run, *, device="cpu", **schedule):
    """Load the weights saved for this exact setting if there are any, else train and save them.

    ``schedule``: :func:`train_for_minutes`' ``minutes``, ``lr``, ``warmup_steps`` and ``max_tokens``
    (``run.schedule(kind)`` gives the profile's). Returns ``(info, loaded)``: the training record
    (steps, minutes, losses) and whether it was loaded.
    """
    path = checkpoint_path(checkpoint_name(kind, model.config, run, **schedule))
    if path.is_file():
        state = load_checkpoint(path)
        model.load_state_dict(state["model"])
        return state["info"], True
    info = train_for_minutes(model, data, run, **schedule, device=device)
    record = {k: info[k] for k in ("steps", "minutes", "seconds_per_step")}
    record["loss"] = info["history"].series("loss")
    save_checkpoint(path, {"model": model.state_dict(), "info": record})
    return record, False


def evaluate(
    model: nn.Module, data: TranslationData, *, beam_size: int = 1, **options
) -> tuple[BleuScore, list[str]]:
    """Translate ``data.test`` and return its corpus BLEU (sacreBLEU) and the translations."""
    hypotheses = translate(model, data.tokenizer, [en for en, _ in data.test], beam_size=beam_size, **options)
    return bleu(hypotheses, [de for _, de in data.test]), hypotheses


__all__ = [
    "TranslationData",
    "checkpoint_name",
    "evaluate",
    "load_or_train",
    "prepare",
    "train_for_minutes",
]
