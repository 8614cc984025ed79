"""The two training losses of the course, written once (chapters 06 and 07).

Both have the signature ``loss(model, batch) -> scalar tensor`` that :func:`fromscratch.train.train`
expects, so a chapter passes them as they are: ``train(model, batches, classification_loss, config)``.
"""

from __future__ import annotations

import math

import torch.nn.functional as F
from torch import Tensor, nn


def classification_loss(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
    """Cross-entropy of a classifier on a batch of padded sequences (chapter 06), in nats.

    batch: a dict with ``tokens`` int ``(b, t)``, ``padding_mask`` bool ``(b, t)`` (True at real
    tokens) and ``labels`` int ``(b,)``, as :class:`fromscratch.data.imdb.ReviewBatches` yields.
    The model is called as ``model(tokens, padding_mask=...)`` and returns logits ``(b, c)``.
    """
    logits = model(batch["tokens"], padding_mask=batch["padding_mask"])  # (b, c)
    return F.cross_entropy(logits, batch["labels"])


def next_byte_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """The mean number of bits a language model needs per predicted byte (chapter 07).

    batch: ``(inputs, targets)``, both int ``(b, t)``, where ``targets[:, i]`` is the byte after
    ``inputs[:, i]`` (:class:`fromscratch.data.enwik8.RandomSubsequences` yields them). The model
    returns logits ``(b, t, V)``. Cross-entropy is in nats; dividing by ``ln 2`` gives bits.
    """
    inputs, targets = batch  # (b, t), (b, t)
    logits = model(inputs)  # (b, t, V)
    return F.cross_entropy(logits.transpose(1, 2), targets) / math.log(2)  # cross_entropy wants (b, V, t)


__all__ = ["classification_loss", "next_byte_loss"]
