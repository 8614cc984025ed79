"""The unigram baseline of masked-LM pretraining (chapter 10): how low a loss needs no context at all.

A model that ignores its input and always predicts one fixed distribution over the vocabulary scores,
at best, the **entropy of the tokens it is asked for**: the best fixed distribution is their frequency
distribution ``p``, and its cross-entropy is ``-sum_w p(w) log p(w)``. A masked-LM loss is only
evidence that pretraining learned something beyond word frequencies when it is clearly below this.

:func:`unigram_mlm_loss` counts the labels that a masking pipeline actually produces (for example one
pass over :class:`fromscratch.data.pretraining.MaskedBatches`, whose masking is the training's), so
the baseline is computed from the data the model was scored on, not assumed from a word list.
Shape legend: ``b`` batch, ``t`` length, ``V`` vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor

from fromscratch.tokenizers.special import IGNORE


def masked_token_counts(batches: Iterable[dict[str, Tensor]], vocab_size: int) -> Tensor:
    """How often each id is a label, ``(V,)`` int64, over all ``batches`` (dicts with ``labels (b, t)``:
    the original id where the model is scored, ``IGNORE`` = -100 elsewhere)."""
    counts = torch.zeros(vocab_size, dtype=torch.long)
    for batch in batches:
        labels = batch["labels"]  # (b, t)
        chosen = labels[labels != IGNORE].cpu()  # (n,)
        if len(chosen) and (chosen.min() < 0 or chosen.max() >= vocab_size):
            raise ValueError(
                f"labels must lie in 0..{vocab_size - 1} (or be {IGNORE}); got ids "
                f"{chosen.min().item()}..{chosen.max().item()}: pass the model's vocab_size."
            )
        counts += torch.bincount(chosen, minlength=vocab_size)
    return counts


def unigram_mlm_loss(batches: Iterable[dict[str, Tensor]], vocab_size: int) -> float:
    """The masked-LM loss (nats per masked token) of always predicting the masked tokens' own frequency
    distribution: the entropy ``-sum p log p`` of the labels in ``batches``.

    No fixed prediction does better on these labels, so a pretrained model's masked-LM loss on the
    same data should sit clearly below it. Raises ValueError when no position is masked.
    """
    counts = masked_token_counts(batches, vocab_size).double()
    total = counts.sum()
    if total == 0:
        raise ValueError("No masked positions (every label is IGNORE): pass batches that mask tokens.")
    p = counts[counts > 0] / total  # (distinct labels,)
    return float(-(p * p.log()).sum())


__all__ = ["masked_token_counts", "unigram_mlm_loss"]
