"""Fine-tuning a BERT encoder with a fresh classification head on a few labelled reviews (chapters 10, 15).

- :class:`LabelEfficiencyRun`: the sizes of such a fine-tuning, equal for every starting point (labels,
  seeds, learning rates tried and picked, length, batch, steps);
- :func:`head_tail`: a review cut to ``n`` tokens keeping its head and its tail (Sun et al. 2019: the start
  and the end of a review say most about it);
- :func:`fresh_encoder`: the encoder to start from (random, our pretrained BERT, or MiniLM), copied;
- :func:`finetune`: ``train(classifier, batches, classification_loss, config)`` with a fresh head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from fromscratch.data.imdb import ReviewBatches, Reviews
from fromscratch.models.bert import BertConfig, BertEncoder, BertForClassification
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.training.loop import TrainConfig, train
from fromscratch.training.losses import classification_loss

INITS = ("random", "ours", "minilm")  # the starting points: fresh weights, our pretrained BERT, MiniLM


@dataclass(frozen=True)
class LabelEfficiencyRun:
    """The sizes of the label-efficiency benchmark; equal for all three starting points."""

    labels: tuple[int, ...]  # N: labelled training reviews per fine-tuning (balanced pos/neg)
    seeds: int  # seeds (training subset, head init, batch order) for N <= many_seeds_up_to
    many_seeds_up_to: int  # larger N run with seed 0 only
    test_reviews: int  # balanced test reviews, the same ones for every run
    val_reviews: int  # balanced training reviews held out to pick each arm's lr (never trained on)
    lr_labels: int  # the N at which each arm's lr is picked (seed 0)
    lrs: tuple[tuple[str, tuple[float, ...]], ...]  # per starting point, the peak lrs tried
    picked: tuple[tuple[str, float], ...]  # per starting point, the lr the benchmark picked from `lrs`
    chapter_labels: tuple[int, ...]  # the N that chapter 10 fine-tunes itself (one seed, `picked` lrs)
    context: int  # tokens per review (its own tokenizer's), [CLS] included: head + tail
    batch: int  # reviews per fine-tuning step
    finetune: TrainConfig  # epochs over the N reviews (lr, warm-up and steps filled in per run)
    min_steps: int  # at least this many steps, however small N
    warmup: float  # warm-up as a fraction of the steps
    pooling: str  # the classifier reads the mean of the outputs ("mean") or the [CLS] one ("cls")
    dropout: float  # dropout in every encoder and the head (MiniLM's own: 0.1)
    picked_in: str | None = None  # the profile whose benchmark run picked `picked` (None: set by hand)

    def steps(self, n: int) -> int:
        """Optimiser steps of a fine-tuning on ``n`` reviews: ``epochs`` passes, at least ``min_steps``."""
        return max(self.min_steps, math.ceil(self.finetune.epochs * n / self.batch))

    def config(self, n: int, lr: float) -> TrainConfig:
        """The fine-tuning's ``TrainConfig`` for ``n`` reviews at peak learning rate ``lr``."""
        steps = self.steps(n)
        return replace(
            self.finetune, steps=steps, lr=lr, warmup_steps=round(self.warmup * steps), progress=False
        )

    def grid(self, init: str) -> tuple[float, ...]:
        return dict(self.lrs)[init]

    def lr(self, init: str) -> float:
        """The peak lr of ``init`` that ``benchmarks/label_efficiency.py`` picked on the held-out reviews."""
        return dict(self.picked)[init]

    def at_edge(self, init: str) -> bool:
        """True when ``init``'s pick is the smallest or largest of a grid of three or more: the grid does
        not bracket its best rate."""
        grid = self.grid(init)
        return len(grid) > 2 and self.lr(init) in (min(grid), max(grid))


def head_tail(ids: list[int] | torch.Tensor, n: int) -> list[int]:
    """At most ``n`` ids: all of them, or the first quarter of ``n`` and the last three quarters."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    if len(ids) <= n:
        return ids
    head = n // 4
    return ids[:head] + ids[len(ids) - (n - head) :]


def fresh_encoder(
    init: str,
    config: BertConfig | None,
    *,
    seed: int,
    dropout: float,
    pretrained: BertEncoder | None = None,
    minilm: BertEncoder | None = None,
) -> BertEncoder:
    """A new encoder to fine-tune, with ``dropout``: ``random`` (seeded, of ``config``'s sizes), or a copy
    of the ``ours``/``minilm`` one's weights (``ours`` may have pretrained without dropout)."""
    if init == "random":
        torch.manual_seed(seed)
        return BertEncoder(replace(config, dropout=dropout))
    source = {"ours": pretrained, "minilm": minilm}.get(init)
    if source is None:
        raise ValueError(f"init must be one of {', '.join(INITS)} (with its encoder passed), got {init!r}.")
    encoder = BertEncoder(replace(source.config, dropout=dropout))
    encoder.load_state_dict(source.state_dict())
    return encoder


def finetune(
    encoder: BertEncoder,
    reviews: Reviews,
    run: LabelEfficiencyRun,
    lr: float,
    *,
    seed: int,
    device: torch.device | str = "cpu",
) -> BertForClassification:
    """Fine-tune ``encoder`` (changed in place: pass a copy) with a fresh head on ``reviews`` (ids ready,
    chapter 10's ``word_reviews`` or ``wordpiece_reviews``); the head, dropout and batch order follow
    ``seed``."""
    torch.manual_seed(seed)
    classifier = use_pool_dropout(BertForClassification(encoder, 2, dropout=run.dropout, pooling=run.pooling))
    batches = ReviewBatches(reviews, run.batch, generator=torch.Generator().manual_seed(seed))
    train(classifier, batches, classification_loss, run.config(len(reviews), lr), device=device)
    return classifier


__all__ = ["INITS", "LabelEfficiencyRun", "finetune", "fresh_encoder", "head_tail"]
