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
import tempfile
from collections.abc import Iterator

import numpy as np
import torch

from fromscratch.data.batching import bucketed_batches, pad_batch
from fromscratch.data.masking import mask_tokens
from fromscratch.data.registry import ACL_IMDB, cache_dir, extract
from fromscratch.tokenizers.special import CLS, PAD, UNK
from fromscratch.tokenizers.words import Vocab, tokenize

CACHE_VERSION = 1


def _cache_file():
    return cache_dir() / "tokens" / f"aclImdb-unsup-v{CACHE_VERSION}.npz"


def _tokenize(folder, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``words, ids, offsets`` of the reviews ``names`` in ``folder``; review i is
    ``ids[offsets[i]:offsets[i+1]]``, indices into ``words``."""
    index: dict[str, int] = {}
    ids: list[int] = []
    offsets = [0]
    for name in names:
        text = (folder / name).read_text(encoding="utf-8")
        ids.extend(index.setdefault(token, len(index)) for token in tokenize(text))
        offsets.append(len(ids))
    return np.array(list(index), dtype=str), np.array(ids, np.int32), np.array(offsets, np.int64)


def _read_unsup(reviews: int | None, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``words, ids, offsets`` of the unlabelled reviews: all (cached after the first reading), or a
    seeded subset of ``reviews`` (read alone, unless the cache of all exists)."""
    path = _cache_file()
    folder = extract(ACL_IMDB) / "aclImdb" / "train" / "unsup"
    if path.is_file():
        with np.load(path) as f:
            words, ids, offsets = f["words"], f["ids"], f["offsets"]
    elif reviews is not None:  # a small subset: read only its files
        names = sorted(os.listdir(folder))
        chosen = sorted(np.random.default_rng(seed).permutation(len(names))[:reviews].tolist())
        return _tokenize(folder, [names[i] for i in chosen])
    else:
        words, ids, offsets = _tokenize(folder, sorted(os.listdir(folder)))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, words=words, ids=ids, offsets=offsets)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)  # atomic: readers see the whole file or none
    if reviews is None:
        return words, ids, offsets
    chosen = sorted(np.random.default_rng(seed).permutation(len(offsets) - 1)[:reviews].tolist())
    pieces = [ids[offsets[i] : offsets[i + 1]] for i in chosen]
    return words, np.concatenate(pieces), np.concatenate([[0], np.cumsum([len(p) for p in pieces])])


def load_unlabelled(
    vocab: Vocab, max_len: int, *, reviews: int | None = None, seed: int = 0
) -> list[torch.Tensor]:
    """The unlabelled reviews as id tensors ``(t_i,)``, ``t_i <= max_len``, encoded with ``vocab``.

    reviews: a seeded random subset of this many (None: all 50,000). Reading and tokenising all the
    files takes about half a minute the first time; later calls read the cache.
    """
    words, ids, offsets = _read_unsup(reviews, seed)
    table = np.array([vocab.stoi.get(w, UNK) for w in words.tolist()], dtype=np.int64)
    flat = torch.from_numpy(table[ids])
    return [flat[offsets[i] : min(offsets[i + 1], offsets[i] + max_len)] for i in range(len(offsets) - 1)]


class MaskedBatches:
    """Padded, length-bucketed batches of id sequences, masked for BERT's pretraining; iterate per epoch.

    Each sequence gets ``<cls>`` in front (cut to ``max_len``). Each batch is a dict: ``tokens (b, t)``
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
        max_len: int,
        rate: float = 0.15,
        seed: int = 0,
    ) -> None:
        head = torch.tensor([CLS])
        self.seqs = [torch.cat([head, s[: max_len - 1]]) for s in seqs if len(s) > 0]
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
