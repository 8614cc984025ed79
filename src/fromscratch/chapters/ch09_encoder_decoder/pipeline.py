"""Translation on Multi30k: the data of a run, the name of its checkpoints, and scoring (chapter 09).

Chapter 09 trains its models itself, with ``train(model, batches, translation_loss, config)``; it and
``benchmarks/translation.py`` share only what a chapter should not have to write:

- :func:`prepare`: the data of a run profile, tokenised (:class:`TranslationData`);
- :func:`translation_checkpoint`: the checkpoint file of one of the chapter's runs, named from a hash
  of everything that shapes its weights, so the chapter's ``TrainConfig(checkpoint=..., resume=True)``
  finds what the benchmark trained (and a changed setting never reloads a stale file);
- :func:`training_minutes`: how long a (possibly loaded) run spent in training steps;
- :func:`evaluate`: translate the test set (greedy or beam search) and score it with sacreBLEU;
- :func:`val_bleu`: an ``evaluate`` for ``train``, so BLEU can be plotted against training minutes
  (it records the machine's load too: :func:`training_load`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from torch import nn

from fromscratch.chapters.ch09_encoder_decoder.profile import TranslationRun
from fromscratch.data.multi30k import EncodedPairs, Multi30k, encode_pairs, load_multi30k
from fromscratch.data.multi30k_tokenizer import multi30k_tokenizer as _tokenizer
from fromscratch.generate.beam import translate
from fromscratch.metrics.translation import BleuScore, bleu
from fromscratch.training import TrainConfig
from fromscratch.training.checkpoints import load_checkpoint, run_checkpoint


@dataclass
class TranslationData:
    """A run's Multi30k: the tokenizer, the tokenised training pairs and the test pairs as text."""

    tokenizer: Any  # tokenizers.Tokenizer, joint English+German BPE
    train: EncodedPairs  # training pairs within context tokens
    test: list[tuple[str, str]]  # (english, german) test pairs
    raw: Multi30k  # all three splits as text
    split: str = "test"  # which split `test` holds ("val" when choosing settings)


def prepare(run: TranslationRun) -> TranslationData:
    """Load Multi30k, the tokenizer of ``run.vocab_size`` tokens, and the run's subsets of the splits."""
    raw = load_multi30k()
    tokenizer = _tokenizer(run.vocab_size, raw)
    pairs = raw.train if run.train_pairs is None else raw.train[: run.train_pairs]
    test = raw.test if run.test_pairs is None else raw.test[: run.test_pairs]
    return TranslationData(tokenizer, encode_pairs(pairs, tokenizer, context=run.context), test, raw)


DATA_FIELDS = ("vocab_size", "context", "train_pairs", "max_tokens", "label_smoothing")  # what training reads


def translation_checkpoint(
    name: str, model_config: Any, train_config: TrainConfig, run: TranslationRun, *, seed: int = 0
) -> Path:
    """The checkpoint of chapter 09's run ``name`` ("transformer", "rnn" or "rnn_attention"):
    :func:`~fromscratch.training.checkpoints.run_checkpoint` of the model's config, the training config,
    the run's data selection (:data:`DATA_FIELDS`) and the seed. Chapter 09 and the benchmark both call it."""
    data = {field: getattr(run, field) for field in DATA_FIELDS}
    return run_checkpoint(f"09_{name}", model_config, train_config, {**data, "seed": seed})


def training_minutes(config: TrainConfig) -> float:
    """Minutes spent in training steps by the run checkpointed at ``config.checkpoint``, read from the
    file: the same number whether this call trained the model or found the run finished and loaded it."""
    if config.checkpoint is None or not Path(config.checkpoint).is_file():
        raise ValueError(
            f"training_minutes reads the run's checkpoint, and there is none at {config.checkpoint!r}; "
            "train with TrainConfig(checkpoint=translation_checkpoint(...)) first."
        )
    return load_checkpoint(config.checkpoint)["schedule"]["elapsed"] / 60


def evaluate(
    model: nn.Module, data: TranslationData, *, beam_size: int = 1, **options
) -> tuple[BleuScore, list[str]]:
    """Translate ``data.test`` and return its corpus BLEU (sacreBLEU) and the translations."""
    hypotheses = translate(model, data.tokenizer, [en for en, _ in data.test], beam_size=beam_size, **options)
    return bleu(hypotheses, [de for _, de in data.test]), hypotheses


def val_bleu(data: TranslationData, pairs: int = 200) -> Callable[[nn.Module], dict[str, float]]:
    """``train``'s ``evaluate``: greedy BLEU of the model on the first ``pairs`` **validation** pairs
    (never the test set), as ``{"val_bleu": score, "load": ...}``. ``train`` calls it every ``eval_every``
    steps and records it with the training seconds spent so far (``history.series("val_bleu",
    x="seconds")``); ``load`` is the machine's load average over the last minute (1.0 = one busy core),
    so that a run's history says how busy the machine was while it trained (:func:`training_load`)."""
    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, got {pairs}.")
    val = replace(data, test=data.raw.val[:pairs], split="val")

    def score(model: nn.Module) -> dict[str, float]:
        return {"val_bleu": evaluate(model, val)[0].score, "load": _load()}

    return score


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def training_load(history) -> tuple[float, float] | None:
    """The lowest and highest load average recorded while a run trained (by :func:`val_bleu`), or None
    when its history has none (a run trained before the load was recorded)."""
    loads = [x for x in history.series("load")[1] if x == x]  # NaN: no load average on this system
    return (min(loads), max(loads)) if loads else None


__all__ = [
    "DATA_FIELDS",
    "TranslationData",
    "evaluate",
    "prepare",
    "training_load",
    "training_minutes",
    "translation_checkpoint",
    "val_bleu",
]
