"""The training runs of every chapter, read from a profile, for ``gpu_plan.py``: one small adapter each.

An adapter ``chapter_NN(prof)`` returns the chapter's :class:`Run` s: how to build the real model and one
real batch (the longest where lengths vary: the peak), the loss ``train`` is given, and how long the run
is (its ``TrainConfig``'s steps, epochs or minutes). Each copies what the chapter's notebook does; when a
chapter changes its runs, its adapter here changes with it. Chapters 02-05 train nothing; 10-14's adapters
are in ``gpu_plan_later.py``, 15's in ``gpu_plan_chat.py``. Not planned (no training, or seconds on any GPU):
08.1's step timings at the smaller lengths (covered: twice the largest) and the GRU's (latency-bound), 10's
GPT-2 samples, its control and label-efficiency fine-tunes (short runs of the planned BERT's size), 12's DDP
demo, 13's graphs.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from fromscratch.chapters.ch08_design_considerations.step_times import random_batch
from fromscratch.chapters.ch09_encoder_decoder.pipeline import prepare
from fromscratch.data import enwik8, mnist
from fromscratch.data.imdb import ReviewBatches, load_imdb
from fromscratch.data.movielens import load_movielens
from fromscratch.data.multi30k import TokenBatches
from fromscratch.models import (
    Classifier,
    EncoderDecoder,
    Generator,
    RNNSeq2Seq,
    SequenceClassifier,
)
from fromscratch.models.recommender import MatrixFactorization, rating_loss
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training import TrainConfig
from fromscratch.training.losses import (
    classification_loss,
    next_byte_loss,
    translation_loss,
)

Built = tuple[nn.Module, Any, Callable[[nn.Module, Any], torch.Tensor]]  # model, one batch, loss


@dataclass(frozen=True)
class Run:
    """One kind of training run of a chapter, ``count`` times (e.g. once per distance or model)."""

    chapter: str  # "07"
    name: str  # what the chapter calls it, with its section
    build: Callable[[], Built]  # the real model, one real batch of the real data, the loss `train` gets
    steps: int | None = None  # optimiser steps of one run
    minutes: float | None = None  # or its time budget (TrainConfig.minutes)
    count: int = 1  # runs of this kind in the chapter
    precision: str = "auto"  # the run's TrainConfig.precision
    attention: str | None = "fast"  # chapter 12's estimator with this attention path; None: counted
    tokens: Callable[[Any], int] | None = None  # token positions of a batch (default: its 2-D ids)


def length(config: TrainConfig, per_epoch: int | None = None) -> dict[str, Any]:
    """``steps=`` or ``minutes=`` of a run from its TrainConfig (epochs need the batches per epoch)."""
    if config.minutes is not None and config.steps is None:
        return {"minutes": config.minutes}
    if config.steps is not None:
        return {"steps": config.steps}
    return {"steps": math.ceil(config.epochs * per_epoch / config.accumulate)}


def longest(batches) -> Any:
    """The batch with the most padded token positions: the step with the highest peak."""
    return max(batches, key=lambda b: b["tokens"].numel())


# --- data, loaded once per size --------------------------------------------------------------------
@functools.cache
def imdb(words: int, max_len: int, train_reviews: int | None, valid_reviews: int):
    train, _, _ = load_imdb(words, max_len, train_reviews=train_reviews, test_reviews=1_000)
    return train.hold_out(valid_reviews)[0]


@functools.cache
def enwik8_prefix() -> enwik8.Enwik8:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", enwik8.PrefixWarning)
        return enwik8.load(enwik8.PREFIX_BYTES, progressbar=False)


def bytes_batch(context: int, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return next(
        iter(enwik8.RandomSubsequences(enwik8_prefix().train, context=context, batch_size=batch, seed=0))
    )


@functools.cache
def digits() -> mnist.Images:
    return mnist.load("mnist", progressbar=False)


# --- the chapters ----------------------------------------------------------------------------------
def chapter_01(prof) -> list[Run]:
    ml = prof.movielens
    data = load_movielens(max_ratings=ml.max_ratings)
    tables = dict(n_users=data.n_users, n_items=data.n_items, global_mean=data.train.rating.mean().item())
    per_epoch = math.ceil(len(data.train) / ml.batch_size)

    def build(factors: int) -> Built:
        batch = next(data.train.batches(ml.batch_size)())
        return MatrixFactorization(factors=factors, **tables), batch, functools.partial(rating_loss, l2=ml.l2)

    spec = dict(**length(ml.train, per_epoch), precision=ml.train.precision, attention=None)
    return [
        Run("01", "1.5 biases only", lambda: build(0), **spec),
        Run("01", "1.6 factorisation", lambda: build(ml.factors), **spec),
    ]


def chapter_06(prof) -> list[Run]:
    size = prof.imdb
    train = imdb(size.vocab_words, size.model.max_len, size.train_reviews, size.valid_reviews)
    per_epoch = len(ReviewBatches(train, size.batch_size))

    def build(cls: bool = False, **fields) -> Built:
        batch = longest(ReviewBatches(train, size.batch_size, shuffle=False, cls=cls))
        return Classifier(size.model, **fields), batch, classification_loss

    spec = length(size.train, per_epoch)
    return [
        Run("06", "6.3 bag of embeddings", lambda: build(depth=0, positions=None, dropout=0.0), **spec),
        Run("06", "6.4 transformer", build, **spec),
        Run("06", "6.7 CLS token", lambda: build(True, pooling="cls"), **spec),
    ]


def chapter_07(prof) -> list[Run]:
    size = prof.enwik8

    def build(context: int, causal: bool = True) -> Built:
        model = Generator(size.model, context=context, causal=causal)
        return model, bytes_batch(context, size.batch_size), next_byte_loss

    return [
        Run(
            "07",
            "7.2 with and without a mask",
            lambda: build(size.demo_context),
            **length(size.demo),
            count=2,
        ),
        Run("07", "7.6 generator", lambda: build(size.model.context), **length(size.train)),
    ]


def chapter_08(prof) -> list[Run]:
    run = prof.sequence
    task = run.configs(vocab_size=run.task.vocab, max_len=run.task.length)
    words = run.imdb_vocab_words + len(SPECIALS)
    reviews = run.configs(vocab_size=words, max_len=run.imdb_max_len)
    timed = run.configs(vocab_size=run.timing_vocab, max_len=max(run.timing_lengths))

    def build_task(name: str) -> Built:
        training, _ = run.task.split(max(run.task_distances))
        return SequenceClassifier(task[name]), next(run.task.batches(training)()), classification_loss

    def build_imdb(name: str) -> Built:
        train = imdb(run.imdb_vocab_words, run.imdb_max_len, run.imdb_train_reviews, run.imdb_valid_reviews)
        batch = longest(ReviewBatches(train, run.imdb_batch, shuffle=False))
        return SequenceClassifier(reviews[name]), batch, classification_loss

    def build_timing(name: str) -> Built:
        batch = random_batch(run.timing_batch, max(run.timing_lengths), run.timing_vocab)
        return SequenceClassifier(timed[name]), batch, classification_loss

    runs = []
    for name in task:
        runs.append(
            Run(
                "08",
                f"8.2 match task, {name}",
                functools.partial(build_task, name),
                **length(run.task_train),
                count=len(run.task_distances),
                attention=None,
            )
        )
    for name in reviews:
        runs.append(
            Run(
                "08",
                f"8.4 IMDb, {name}",
                functools.partial(build_imdb, name),
                **length(run.imdb_train),
                attention=None,
            )
        )
    # every length: at most twice the longest. The GRU is left out: at t = 8192 its step is 8192 steps
    # in sequence (latency, not FLOPs, on a GPU), and one step takes minutes on this CPU
    for name in (n for n in timed if n not in ("bag", "rnn")):
        runs.append(
            Run(
                "08",
                f"8.1 step time at t = {max(run.timing_lengths)}, {name}",
                functools.partial(build_timing, name),
                steps=2 * (run.timing_repeats + 1),
                attention=None,
            )
        )
    return runs


def chapter_09(prof) -> list[Run]:
    size = prof.translation
    loss = functools.partial(translation_loss, label_smoothing=size.label_smoothing)

    @functools.cache
    def batch():
        data = prepare(size)
        return max(TokenBatches(data.train, size.max_tokens, seed=0), key=lambda b: b["tgt_in"].numel())

    def build(model: Callable[[], nn.Module]) -> Built:
        return model(), batch(), loss

    def tokens(b) -> int:
        return b["src"].numel() + b["tgt_in"].numel()

    common = dict(attention=None, tokens=tokens)
    return [
        Run(
            "09",
            "9.3 GRU bottleneck",
            lambda: build(lambda: RNNSeq2Seq(size.rnn)),
            **length(size.rnn_train),
            **common,
        ),
        Run(
            "09",
            "9.3 GRU + Bahdanau",
            lambda: build(lambda: RNNSeq2Seq(size.rnn_attention)),
            **length(size.rnn_train),
            **common,
        ),
        Run(
            "09",
            "9.5 transformer",
            lambda: build(lambda: EncoderDecoder(size.model)),
            **length(size.train),
            **common,
        ),
    ]
