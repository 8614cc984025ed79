"""The training losses of the course, written once (chapters 06, 07 and 09).

All have the signature ``loss(model, batch) -> scalar tensor`` that :func:`fromscratch.training.train`
expects, so a chapter passes them as they are: ``train(model, batches, classification_loss, config)``.
"""

from __future__ import annotations

import math

import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.tokenizers.special import IGNORE


def classification_loss(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
    """Cross-entropy of a classifier on a batch of padded sequences (chapter 06), in nats.

    batch: a dict with ``tokens`` int ``(b, t)``, ``padding_mask`` bool ``(b, t)`` (True at real
    tokens) and ``labels`` int ``(b,)``, as :class:`fromscratch.data.imdb.ReviewBatches` yields.
    The model is called as ``model(tokens, padding_mask=...)`` and returns logits ``(b, c)``.
    """
    logits = model(batch["tokens"], padding_mask=batch["padding_mask"])  # (b, c)
    return F.cross_entropy(logits, batch["labels"])


def token_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy, in nats, of logits ``(b, t, V)`` against target ids ``(b, t)``, taken in fp32
    (under autocast the logits may be 16-bit; ``F.cross_entropy`` wants the classes second: ``(b, V, t)``)."""
    return F.cross_entropy(logits.float().transpose(1, 2), targets)


def next_token_loss(model: nn.Module, tokens: Tensor, *, teaching: bool = False) -> Tensor:
    """A language model's loss on a batch of token sequences ``(b, t + 1)``, in nats (chapters 07, 12, 14).

    The model reads ``tokens[:, :-1]`` and predicts every next token ``tokens[:, 1:]``: logits
    ``(b, t, V)``. ``teaching=True`` runs it with ``attention=[]`` (the attention weights written
    out, chapter 12's memory measurements).
    """
    logits = model(tokens[:, :-1], attention=[]) if teaching else model(tokens[:, :-1])  # (b, t, V)
    return token_cross_entropy(logits, tokens[:, 1:])


def next_byte_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """The mean number of bits a language model needs per predicted byte (chapter 07).

    batch: ``(inputs, targets)``, both int ``(b, t)``, where ``targets[:, i]`` is the byte after
    ``inputs[:, i]`` (:class:`fromscratch.data.enwik8.RandomSubsequences` yields them). The model
    returns logits ``(b, t, V)``. Cross-entropy is in nats; dividing by ``ln 2`` gives bits.
    """
    inputs, targets = batch  # (b, t), (b, t)
    logits = model(inputs)  # (b, t, V)
    return token_cross_entropy(logits, targets) / math.log(2)


def translation_loss(model: nn.Module, batch: dict[str, Tensor], *, label_smoothing: float = 0.1) -> Tensor:
    """Teacher-forced cross-entropy of an encoder-decoder (chapter 09), in nats per target token.

    batch: a dict with ``src (b, ts)``, ``src_padding_mask (b, ts)``, ``tgt_in (b, tt)`` (``<s>`` +
    the target minus its last token), ``tgt_out (b, tt)`` (the target: what each position predicts)
    and ``tgt_padding_mask (b, tt)``, as :class:`fromscratch.data.multi30k.TokenBatches` yields.
    Padded positions of ``tgt_out`` do not count. ``label_smoothing`` moves that much probability
    from the right token to all tokens evenly (Vaswani et al. 2017: 0.1; 0.0 is plain cross-entropy);
    pass another value with ``functools.partial(translation_loss, label_smoothing=0.0)``.
    """
    logits = model(batch["src"], batch["tgt_in"], batch["src_padding_mask"])  # (b, tt, V)
    targets = batch["tgt_out"].masked_fill(~batch["tgt_padding_mask"], IGNORE)  # (b, tt): padding skipped
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), label_smoothing=label_smoothing)


def masked_lm_loss(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
    """BERT's pretraining loss (chapter 10): cross-entropy at the masked positions only, in nats.

    batch: ``tokens (b, t)`` (corrupted), ``padding_mask (b, t)`` and ``labels (b, t)`` (the original
    id where scored, IGNORE = -100 elsewhere), as :class:`fromscratch.data.pretraining.MaskedBatches` yields.
    The model is called as ``model(tokens, padding_mask, only=chosen)`` and returns ``(n, V)`` logits
    for the ``n`` chosen positions (:class:`fromscratch.models.bert.BertForPretraining`).
    """
    chosen = batch["labels"] != IGNORE  # (b, t)
    logits = model(batch["tokens"], batch["padding_mask"], only=chosen)  # (n, V)
    return F.cross_entropy(logits.float(), batch["labels"][chosen])


__all__ = [
    "next_token_loss",
    "token_cross_entropy",
    "classification_loss",
    "masked_lm_loss",
    "next_byte_loss",
    "translation_loss",
]
