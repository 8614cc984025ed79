"""The baselines of masked-LM pretraining (chapter 10): how low a loss gets without reading the context.

A model that ignores its input and always predicts one fixed distribution over the vocabulary scores,
at best, the **entropy of the tokens it is asked for**: the best fixed distribution is their frequency
distribution ``p``, and its cross-entropy is ``-sum_w p(w) log p(w)``, the **unigram baseline**.

That is the floor only where the input says nothing about the answer: at the positions that show
``[MASK]``. BERT's masking also scores positions that show a random token (10 % of the chosen ones) or
the original token itself (10 %), and there a model that reads only *its own position's* input can
already do better: the token it sees is the answer with probability ``p(x) / (p(x) + 1/R)`` (``R`` ids
to draw the random ones from), close to 1 for a frequent word. :func:`copy_aware_floor` computes the
best loss of such a model over all the scored positions, so two honest comparisons exist:

- the loss at the ``[MASK]`` positions only against the unigram baseline of the same positions
  (``unigram_mlm_loss(batches, V, mask_id=...)``): what is left below it needs the context;
- the loss at every chosen position (the training loss) against :func:`copy_aware_floor`.

:func:`masked_token_counts` counts the labels that a masking pipeline actually produces (for example one
pass over :class:`fromscratch.data.pretraining.MaskedBatches`, whose masking is the training's), so
the baselines come from the data the model was scored on, not from a word list.
Shape legend: ``b`` batch, ``t`` length, ``V`` vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import Tensor

from fromscratch.tokenizers.special import IGNORE


def masked_token_counts(
    batches: Iterable[dict[str, Tensor]], vocab_size: int, *, mask_id: int | None = None
) -> Tensor:
    """How often each id is a label, ``(V,)`` int64, over all ``batches`` (dicts with ``labels (b, t)``:
    the original id where the model is scored, ``IGNORE`` = -100 elsewhere). With ``mask_id``, only the
    positions whose input (``tokens (b, t)``) is that id count: the ``[MASK]`` positions."""
    counts = torch.zeros(vocab_size, dtype=torch.long)
    for batch in batches:
        labels = batch["labels"]  # (b, t)
        scored = labels != IGNORE  # (b, t)
        if mask_id is not None:
            scored &= batch["tokens"] == mask_id
        chosen = labels[scored].cpu()  # (n,)
        if len(chosen) and (chosen.min() < 0 or chosen.max() >= vocab_size):
            raise ValueError(
                f"labels must lie in 0..{vocab_size - 1} (or be {IGNORE}); got ids "
                f"{chosen.min().item()}..{chosen.max().item()}: pass the model's vocab_size."
            )
        counts += torch.bincount(chosen, minlength=vocab_size)
    return counts


def _distribution(counts: Tensor) -> Tensor:
    counts = counts.double()
    total = counts.sum()
    if total == 0:
        raise ValueError("No masked positions (every label is IGNORE): pass batches that mask tokens.")
    return counts / total  # (V,)


def entropy(counts: Tensor) -> float:
    """``-sum p log p`` (nats) of the distribution that ``counts (V,)`` describe."""
    p = _distribution(counts)
    p = p[p > 0]
    return float(-(p * p.log()).sum())


def unigram_mlm_loss(
    batches: Iterable[dict[str, Tensor]], vocab_size: int, *, mask_id: int | None = None
) -> float:
    """The masked-LM loss (nats per scored token) of always predicting the scored tokens' own frequency
    distribution: the entropy ``-sum p log p`` of the labels in ``batches`` (with ``mask_id``: of the
    labels at the ``[MASK]`` positions only).

    No fixed prediction does better on these labels. At the ``[MASK]`` positions it is the best loss
    without context; over all the chosen positions :func:`copy_aware_floor` is lower. Raises ValueError
    when no position is scored.
    """
    return entropy(masked_token_counts(batches, vocab_size, mask_id=mask_id))


def copy_aware_floor(counts: Tensor, *, random_ids: int, masked: float = 0.8, random: float = 0.1) -> float:
    """The best masked-LM loss (nats per chosen token) of a model that reads only the input token at the
    position it predicts, never its neighbours, under BERT's corruption: a chosen token is shown as
    ``[MASK]`` (share ``masked``), as a random id from ``0..random_ids-1`` (share ``random``) or as itself
    (the rest). ``counts (V,)``: how often each id is chosen (:func:`masked_token_counts`).

    Seeing ``[MASK]``, the best guess is the frequencies ``p``: the entropy ``H``. Seeing an id ``x``, the
    answer is ``x`` itself (kept) or any ``w`` that was swapped for ``x`` (random), so the best guess is
    ``q(w | x) = (kept p(x) [w = x] + random p(w) / R) / (kept p(x) + random / R)``; the floor is the
    expected ``-log q`` over both cases. It lies below ``H``: that gap needs no context.
    """
    kept = 1.0 - masked - random
    if not (0 <= masked <= 1 and 0 <= random <= 1 and kept >= -1e-12):
        raise ValueError(f"masked and random must be shares that sum to at most 1, got {masked}, {random}.")
    kept = max(kept, 0.0)
    if random_ids < 1:
        raise ValueError(f"random_ids must be at least 1, got {random_ids}.")
    p_all = _distribution(counts)  # (V,)
    if p_all[random_ids:].sum() > 0:
        raise ValueError(
            f"some chosen ids are >= random_ids={random_ids}; pass the range random ids come from."
        )
    h = entropy(counts)
    r = random / random_ids  # the chance that the random id is one given x
    p = torch.zeros(random_ids, dtype=torch.float64)  # (R,): p(x) for every id that can be shown
    p[: min(len(p_all), random_ids)] = p_all[:random_ids]
    total = masked * h
    if r > 0 or kept > 0:
        z = kept * p + r  # (R,): the chance of seeing x at a non-[MASK] position (times its p's scale)
        seen = p > 0
        # -log q(x | x): the shown token is the answer, kept or drawn at random
        c = torch.zeros_like(p)
        c[seen] = -torch.log((kept * p[seen] + r * p[seen]) / z[seen])
        h_x = torch.zeros_like(p)
        h_x[seen] = -p[seen] * p[seen].log()
        own = kept * p * c  # kept: the answer is x, shown as x
        swapped = r * (p * c + (h - h_x) + (1 - p) * (torch.log(z) - (math.log(r) if r > 0 else 0.0)))
        total += float((own + (swapped if r > 0 else 0.0)).sum())
    return total


__all__ = ["copy_aware_floor", "entropy", "masked_token_counts", "unigram_mlm_loss"]
