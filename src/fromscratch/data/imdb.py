"""The IMDb Large Movie Review dataset v1.0: reviews read, encoded and batched (chapter 06).

The data (Maas et al. 2011) are 50,000 movie reviews from IMDb, half for training and half for
testing, each split half positive (rating 7-10 of 10) and half negative (rating 1-4). Every review
is one small text file, ``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt``.

The pipeline, in the order the chapter shows it:

1. tokenise every review and build the vocabulary of the **training** split
   (:func:`fromscratch.tokenizers.words.tokenize`, :func:`~fromscratch.tokenizers.words.build_vocab`);
2. :func:`load_imdb`: read both splits (or a balanced, seeded subset), encode them with the
   vocabulary and truncate each review to ``context`` tokens, giving :class:`Reviews`;
3. :class:`ReviewBatches`: batches of ``tokens (b, t)``, ``padding_mask (b, t)`` (True = a real
   token, may be attended to), ``labels (b,)`` and ``index (b,)``, padded to the longest review *in
   the batch* and bucketed by length (:mod:`fromscratch.data.batching`).

Reading 25,000 small files and tokenising them takes several seconds per split, so a complete
split's tokens are cached (:mod:`fromscratch.data.imdb_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from fromscratch.data.batching import bucketed_batches, pad_batch
from fromscratch.data.imdb_tokens import (
    TokenizedSplit,
    cache_path,
    list_split,
    load_full_split,
    read_text,
    select_reviews,
    tokenize_files,
)
from fromscratch.data.registry import ACL_IMDB, DataFile, extract, lookup
from fromscratch.tokenizers.special import CLS, UNK
from fromscratch.tokenizers.words import Vocab, build_vocab

SPLITS = ("train", "test")


# --- choosing and encoding reviews ---------------------------------------------------------------
def _balanced_subset(names: list[str], n: int | None, seed: int) -> list[int]:
    """Indices of ``n`` reviews, half positive and half negative, chosen with ``seed`` (sorted)."""
    if n is None:
        return list(range(len(names)))
    pos = [i for i, name in enumerate(names) if name.startswith("pos/")]
    neg = [i for i, name in enumerate(names) if name.startswith("neg/")]
    if not 1 <= n <= len(names):
        raise ValueError(
            f"Asked for {n} reviews, but the split has {len(names)}; "
            f"choose 1..{len(names)} (or None for all)."
        )
    rng = np.random.default_rng(seed)
    n_pos = (n + 1) // 2
    chosen = rng.permutation(pos)[:n_pos].tolist() + rng.permutation(neg)[: n - n_pos].tolist()
    return sorted(chosen)


@dataclass
class Reviews:
    """One encoded split: review ``i`` is ``ids[i]`` (at most ``context`` ids) with ``labels[i]``."""

    split: str  # "train" or "test"
    ids: list[torch.Tensor]  # n tensors of shape (t_i,), int64, t_i <= context
    labels: torch.Tensor  # (n,) int64: 1 = positive, 0 = negative
    ratings: torch.Tensor  # (n,) int64: the reviewer's stars, 1-4 or 7-10
    lengths: torch.Tensor  # (n,) int64: tokens before truncation
    names: list[str]  # n file names, "pos/<id>_<rating>.txt"
    context: int
    root: Path  # the extracted archive (for :meth:`text`)

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, i: int) -> str:
        """The original text of review ``i`` (read from its file)."""
        return read_text(self.root, self.split, self.names[i])

    def subset(self, rows: list[int]) -> Reviews:
        """The reviews at positions ``rows``, in that order."""
        return replace(
            self,
            ids=[self.ids[i] for i in rows],
            labels=self.labels[rows],
            ratings=self.ratings[rows],
            lengths=self.lengths[rows],
            names=[self.names[i] for i in rows],
        )

    def hold_out(self, n: int, seed: int = 0) -> tuple[Reviews, Reviews]:
        """Split off ``n`` balanced, seeded reviews (e.g. for validation): ``rest, held_out``."""
        held = _balanced_subset(self.names, n, seed)
        chosen = set(held)
        return self.subset([i for i in range(len(self)) if i not in chosen]), self.subset(held)


def _encode(tokens: TokenizedSplit, vocab: Vocab, split: str, context: int, root: Path) -> Reviews:
    # one look-up table from this split's words to vocabulary ids, then a vectorised gather
    table = np.array([vocab.stoi.get(word, UNK) for word in tokens.words.tolist()], dtype=np.int64)
    flat = torch.from_numpy(table[tokens.ids]) if len(tokens.ids) else torch.zeros(0, dtype=torch.long)
    offsets = tokens.offsets.tolist()
    ids = [flat[start : min(end, start + context)] for start, end in pairwise(offsets)]
    names = tokens.names.tolist()
    ratings = torch.tensor([int(name.rsplit("_", 1)[1].split(".")[0]) for name in names], dtype=torch.long)
    labels = torch.tensor([name.startswith("pos/") for name in names], dtype=torch.long)
    return Reviews(
        split=split,
        ids=ids,
        labels=labels,
        ratings=ratings,
        lengths=torch.from_numpy(np.diff(tokens.offsets)),
        names=names,
        context=context,
        root=root,
    )


class ImdbData(NamedTuple):
    train: Reviews
    test: Reviews
    vocab: Vocab


def load_imdb(
    vocab_size: int,
    context: int,
    *,
    train_reviews: int | None = None,
    test_reviews: int | None = None,
    seed: int = 0,
    dataset: DataFile | str = ACL_IMDB,
    cache: bool = True,
) -> ImdbData:
    """The IMDb reviews, tokenised, encoded and truncated: ``train, test, vocab = load_imdb(...)``.

    vocab_size: words kept (most frequent in the training reviews used), plus the 3 special tokens.
    context: each review keeps its first ``context`` tokens.
    train_reviews, test_reviews: a balanced subset of this many reviews per split, chosen with
    ``seed`` (None: all 25,000). A complete split is cached after its first reading; a subset reads
    only its own files unless that cache already exists. cache=False reads every file afresh.
    """
    if context < 1:
        raise ValueError(f"context must be at least 1, got {context}.")
    dataset = lookup(dataset)
    root = extract(dataset)
    split_tokens = {}
    for split, n in (("train", train_reviews), ("test", test_reviews)):
        if cache and (n is None or cache_path(dataset, split).is_file()):
            tokens = load_full_split(root, dataset, split)
            rows = _balanced_subset(tokens.names.tolist(), n, seed)
            split_tokens[split] = tokens if n is None else select_reviews(tokens, rows)
        else:  # read only the chosen files
            names = list_split(root, split)
            split_tokens[split] = tokenize_files(
                root, split, [names[i] for i in _balanced_subset(names, n, seed)]
            )
    vocab = build_vocab(split_tokens["train"].counts(), vocab_size)
    train, test = (_encode(split_tokens[s], vocab, s, context, root) for s in SPLITS)
    return ImdbData(train, test, vocab)


# --- batches ---------------------------------------------------------------------------------------
class ReviewBatches:
    """Padded, length-bucketed batches of ``reviews``; iterate once per epoch.

    Each batch is a dict: ``tokens (b, t)`` int64, ``padding_mask (b, t)`` bool (True = real token),
    ``labels (b,)`` and ``index (b,)`` (positions in ``reviews``, to put predictions back in order).

    shuffle=True: each iteration draws a fresh order from ``bucketed_batches`` (random chunks of
    ``bucket`` batches, each sorted by length; batches in random order). Like a ``DataLoader``, the
    order is drawn from ``generator`` (default: PyTorch's global one) when the iteration starts, so a
    seeded run is repeatable. shuffle=False: every review once, sorted by length (the fastest way to
    evaluate). cls=True puts ``<cls>`` before every review, dropping its last token if it would then
    exceed ``reviews.context``.
    """

    def __init__(
        self,
        reviews: Reviews,
        batch_size: int,
        *,
        shuffle: bool = True,
        bucket: int = 50,
        cls: bool = False,
        generator: torch.Generator | None = None,
    ):
        if batch_size < 1 or bucket < 1:
            raise ValueError(f"batch_size and bucket must be positive, got {batch_size} and {bucket}.")
        self.reviews, self.batch_size, self.shuffle, self.bucket = reviews, batch_size, shuffle, bucket
        self.cls, self.generator = cls, generator
        self.lengths = torch.tensor([len(ids) for ids in reviews.ids], dtype=torch.long)  # (n,)

    def __len__(self) -> int:
        return -(-len(self.reviews) // self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        order = bucketed_batches(  # drawn now, when the pass starts
            self.lengths, self.batch_size, shuffle=self.shuffle, bucket=self.bucket, generator=self.generator
        )
        return self._batches(order)

    def _batches(self, order: list[torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        for index in order:
            seqs = [self.reviews.ids[i] for i in index.tolist()]
            if self.cls:
                head = torch.tensor([CLS])
                seqs = [torch.cat([head, seq[: self.reviews.context - 1]]) for seq in seqs]
            tokens, padding_mask = pad_batch(seqs)  # (b, t), (b, t)
            yield {
                "tokens": tokens,
                "padding_mask": padding_mask,
                "labels": self.reviews.labels[index],
                "index": index,
            }


__all__ = ["ImdbData", "ReviewBatches", "Reviews", "load_imdb"]
