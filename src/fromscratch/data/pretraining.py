"""IMDb text for BERT's masked-LM pretraining (chapter 10): unlabelled reviews, masked batches.

The aclImdb archive holds, besides the 50,000 labelled reviews, 50,000 **unlabelled** ones
(``aclImdb/train/unsup``), written for exactly this: learning about language before learning the
task. :func:`load_unlabelled` reads them (tokenised with chapter 06's word tokeniser, cached once as
one ``.npz``) and encodes them with a vocabulary; :class:`MaskedBatches` yields padded batches of
any reviews with BERT's masking applied afresh at every pass (dynamic masking, as RoBERTa does).
Test reviews are never used for pretraining.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import torch

from fromscratch.data.batching import bucketed_batches, pad_batch
from fromscratch.data.imdb_tokens import (
    TokenizedSplit,
    cache_path,
    cached_tokens,
    select_reviews,
    tokenize_files,
)
from fromscratch.data.masking import mask_tokens
from fromscratch.data.registry import ACL_IMDB, extract
from fromscratch.tokenizers.special import CLS, PAD, UNK
from fromscratch.tokenizers.words import Vocab


def _read_unsup(reviews: int | None, seed: int) -> TokenizedSplit:
    """The tokens of the unlabelled reviews: all (cached after the first reading), or a seeded subset
    of ``reviews`` (read alone, unless the cache of all exists)."""
    root = extract(ACL_IMDB)
    path = cache_path(ACL_IMDB, "unsup")

    def names() -> list[str]:  # as read_text wants them: relative to aclImdb/train
        return [f"unsup/{name}" for name in sorted(os.listdir(root / "aclImdb" / "train" / "unsup"))]

    if reviews is not None and not path.is_file():  # a small subset: read only its files
        every = names()
        chosen = sorted(np.random.default_rng(seed).permutation(len(every))[:reviews].tolist())
        return tokenize_files(root, "train", [every[i] for i in chosen])
    tokens = cached_tokens(path, lambda: tokenize_files(root, "train", names()))
    if reviews is None:
        return tokens
    rows = np.random.default_rng(seed).permutation(len(tokens.names))[:reviews]
    return select_reviews(tokens, sorted(rows.tolist()))


def load_unlabelled(
    vocab: Vocab, context: int, *, reviews: int | None = None, seed: int = 0
) -> list[torch.Tensor]:
    """The unlabelled reviews as id tensors ``(t_i,)``, ``t_i <= context``, encoded with ``vocab``.

    reviews: a seeded random subset of this many (None: all 50,000). Reading and tokenising all the
    files takes about half a minute the first time; later calls read the cache.
    """
    tokens = _read_unsup(reviews, seed)
    offsets = tokens.offsets
    table = np.array([vocab.stoi.get(w, UNK) for w in tokens.words.tolist()], dtype=np.int64)
    flat = torch.from_numpy(table[tokens.ids])
    return [flat[offsets[i] : min(offsets[i + 1], offsets[i] + context)] for i in range(len(offsets) - 1)]


class MaskedBatches:
    """Padded, length-bucketed batches of id sequences, masked for BERT's pretraining; iterate per epoch.

    Each sequence gets ``<cls>`` in front (cut to ``context``). Each batch is a dict: ``tokens (b, t)``
    (the corrupted input), ``padding_mask (b, t)`` and ``labels (b, t)`` (the original id where the
    model is scored, ``IGNORE`` = -100 elsewhere); see :func:`fromscratch.data.masking.mask_tokens`.
    ``<pad>`` and ``<cls>`` are never chosen; ``mask_id`` is ``[MASK]``, the id after the vocabulary's
    last, and random replacements are drawn from ``0..vocab_size-1`` (never ``[MASK]`` itself).
    """

    def __init__(
        self,
        seqs: list[torch.Tensor],
        batch_size: int,
        *,
        mask_id: int,
        vocab_size: int,
        context: int,
        rate: float = 0.15,
        seed: int = 0,
    ) -> None:
        head = torch.tensor([CLS])
        self.seqs = [torch.cat([head, s[: context - 1]]) for s in seqs if len(s) > 0]
        self.batch_size, self.mask_id, self.vocab_size, self.rate = batch_size, mask_id, vocab_size, rate
        self.lengths = torch.tensor([len(s) for s in self.seqs])  # (n,)
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return -(-len(self.seqs) // self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        order = bucketed_batches(self.lengths, self.batch_size, generator=self.generator)
        for index in order:
            tokens, padding_mask = pad_batch([self.seqs[i] for i in index.tolist()])  # (b, t), (b, t)
            inputs, labels = mask_tokens(
                tokens,
                mask_id=self.mask_id,
                vocab_size=self.vocab_size,
                special_ids=(PAD, CLS),
                padding_mask=padding_mask,
                rate=self.rate,
                generator=self.generator,
            )
            yield {"tokens": inputs, "padding_mask": padding_mask, "labels": labels}


__all__ = ["MaskedBatches", "load_unlabelled"]
