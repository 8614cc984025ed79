"""Batches of sequences of different lengths: padding and length bucketing (chapter 06, reused later).

Sequences of token ids rarely share a length. To stack ``b`` of them into one ``(b, t)`` tensor,

- :func:`pad_batch` fills each up to the longest one with the ``<pad>`` id and returns a
  ``padding_mask (b, t)`` that says which positions are real tokens (True: may be attended to),
  built by :func:`fromscratch.attention.masks.padding_mask`;
- :func:`bucketed_batches` chooses which sequences share a batch. Sorting by length inside large
  random chunks puts sequences of similar length together, so little compute goes to padding,
  while the batches still come in a random order.

Any data set whose examples are id sequences uses both: IMDb reviews (chapter 06), sentence pairs
for translation in later chapters.
"""

from __future__ import annotations

import torch

from fromscratch.attention.masks import padding_mask
from fromscratch.tokenizers.special import PAD


def pad_batch(seqs: list[torch.Tensor], pad_id: int = PAD) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack 1-D sequences ``(t_i,)`` of different lengths: ``tokens (b, t)`` and ``padding_mask (b, t)``.

    ``t`` is the longest length; shorter rows are filled with ``pad_id``. The mask is boolean,
    True at real tokens (they may be attended to) and False at padding.
    """
    if not seqs:
        raise ValueError("pad_batch needs at least one sequence; pass a non-empty list of 1-D tensors.")
    lengths = torch.tensor([len(seq) for seq in seqs], dtype=torch.long)  # (b,)
    t = int(lengths.max())
    tokens = torch.full((len(seqs), t), pad_id, dtype=torch.long)  # (b, t)
    for row, seq in enumerate(seqs):
        tokens[row, : len(seq)] = seq
    return tokens, padding_mask(lengths, t)  # (b, t), (b, t)


def bucketed_batches(
    lengths: torch.Tensor,
    batch_size: int,
    *,
    shuffle: bool = True,
    bucket: int = 50,
    generator: torch.Generator | None = None,
) -> list[torch.Tensor]:
    """One pass over ``n`` sequences of the given ``lengths (n,)``: a list of index tensors ``(b,)``.

    shuffle=True: a fresh random order is cut into chunks of ``bucket`` batches; each chunk is sorted
    by length and cut into batches, and the batches of all chunks come in a random order. The
    randomness comes from ``generator`` (default: PyTorch's global one), drawn when this is called.
    shuffle=False: every sequence once, sorted by length (the fastest way to evaluate).
    """
    if batch_size < 1 or bucket < 1:
        raise ValueError(f"batch_size and bucket must be positive, got {batch_size} and {bucket}.")
    if not shuffle:
        return list(torch.argsort(lengths, stable=True).split(batch_size))
    order = torch.randperm(len(lengths), generator=generator)  # (n,)
    batches = []
    for chunk in order.split(batch_size * bucket):
        chunk = chunk[torch.argsort(lengths[chunk], stable=True)]  # similar lengths side by side
        batches.extend(chunk.split(batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


__all__ = ["bucketed_batches", "pad_batch"]
