"""The IMDb Large Movie Review dataset v1.0: reviews read, encoded and batched (chapter 06).

The data (Maas et al. 2011) are 50,000 movie reviews from IMDb, half for training and half for
testing, each split half positive (rating 7-10 of 10) and half negative (rating 1-4). Every review
is one small text file, ``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt``.

The pipeline, in the order the chapter shows it:

1. tokenise every review and build the vocabulary of the **training** split
   (:func:`fromscratch.tokenizers.words.tokenize`, :func:`~fromscratch.tokenizers.words.build_vocab`);
2. :func:`load_imdb`: read both splits (or a balanced, seeded subset), encode them with the
   vocabulary and truncate each review to ``max_len`` tokens, giving :class:`Reviews`;
3. :class:`ReviewBatches`: batches of ``tokens (b, t)``, ``padding_mask (b, t)`` (True = a real
   token, may be attended to), ``labels (b,)`` and ``index (b,)``, padded to the longest review *in
   the batch* and bucketed by length (:mod:`fromscratch.data.batching`).

Reading 25,000 small files and tokenising them takes several seconds per split, so a complete
split's tokens are cached (one ``.npz`` per split, written atomically) next to the extracted archive.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from fromscratch.data.batching import bucketed_batches, pad_batch
from fromscratch.data.registry import ACL_IMDB, DataError, DataFile, cache_dir, extract, lookup
from fromscratch.tokenizers.words import CLS, UNK, Vocab, build_vocab, tokenize

SPLITS = ("train", "test")
CACHE_VERSION = 1  # bump when the tokeniser changes, so old caches are not trusted


# --- reading and encoding the splits ------------------------------------------------------------
@dataclass
class _TokenizedSplit:
    """Tokens of some reviews of one split, stored compactly (what the cache holds)."""

    words: np.ndarray  # (w,) str: the distinct words of these reviews
    ids: np.ndarray  # (n_tokens,) int32: every token, as an index into ``words``
    offsets: np.ndarray  # (n + 1,) int64: review i is ids[offsets[i]:offsets[i + 1]]
    names: np.ndarray  # (n,) str: "pos/123_9.txt"

    def counts(self) -> Counter:
        freq = np.bincount(self.ids, minlength=len(self.words))
        seen = freq.nonzero()[0]  # a subset taken from a cached split does not use all its words
        return Counter(dict(zip(self.words[seen].tolist(), freq[seen].tolist(), strict=True)))


def _list_split(root: Path, split: str) -> list[str]:
    """Every review file of ``split`` as ``"pos/<id>_<rating>.txt"``, sorted (neg first)."""
    folder = root / "aclImdb" / split
    if not (folder / "pos").is_dir() or not (folder / "neg").is_dir():
        raise DataError(
            f"{folder} should hold the folders pos/ and neg/ of the aclImdb archive. Delete "
            f"{root} so that it is unpacked again from the archive."
        )
    names = (f"{label}/{name}" for label in ("neg", "pos") for name in sorted(os.listdir(folder / label)))
    return [name for name in names if name.endswith(".txt")]


def _read_text(root: Path, split: str, name: str) -> str:
    return (root / "aclImdb" / split / name).read_text(encoding="utf-8")


def _tokenize_files(root: Path, split: str, names: list[str]) -> _TokenizedSplit:
    index: dict[str, int] = {}
    ids: list[int] = []
    offsets = [0]
    for name in names:
        ids.extend(index.setdefault(token, len(index)) for token in tokenize(_read_text(root, split, name)))
        offsets.append(len(ids))
    return _TokenizedSplit(
        words=np.array(list(index), dtype=str),
        ids=np.array(ids, dtype=np.int32),
        offsets=np.array(offsets, dtype=np.int64),
        names=np.array(names, dtype=str),
    )


def _cache_path(dataset: DataFile, split: str) -> Path:
    return cache_dir() / "tokens" / f"{dataset.name}-{split}-v{CACHE_VERSION}.npz"


def _load_full_split(root: Path, dataset: DataFile, split: str) -> _TokenizedSplit:
    """All reviews of ``split``: from the token cache, or read, tokenised and cached atomically."""
    path = _cache_path(dataset, split)
    if path.is_file():
        with np.load(path) as f:
            return _TokenizedSplit(words=f["words"], ids=f["ids"], offsets=f["offsets"], names=f["names"])
    tokens = _tokenize_files(root, split, _list_split(root, split))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, words=tokens.words, ids=tokens.ids, offsets=tokens.offsets, names=tokens.names)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)  # atomic: readers see the whole file or none
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return tokens


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


def _take(tokens: _TokenizedSplit, rows: list[int]) -> _TokenizedSplit:
    starts, ends = tokens.offsets[rows], tokens.offsets[np.array(rows, dtype=np.int64) + 1]
    lengths = ends - starts
    ids = (
        np.concatenate([tokens.ids[s:e] for s, e in zip(starts, ends, strict=True)])
        if rows
        else tokens.ids[:0]
    )
    return _TokenizedSplit(
        words=tokens.words,
        ids=ids,
        offsets=np.concatenate([[0], np.cumsum(lengths)]),
        names=tokens.names[rows],
    )


@dataclass
class Reviews:
    """One encoded split: review ``i`` is ``ids[i]`` (at most ``max_len`` ids) with ``labels[i]``."""

    split: str  # "train" or "test"
    ids: list[torch.Tensor]  # n tensors of shape (t_i,), int64, t_i <= max_len
    labels: torch.Tensor  # (n,) int64: 1 = positive, 0 = negative
    ratings: torch.Tensor  # (n,) int64: the reviewer's stars, 1-4 or 7-10
    lengths: torch.Tensor  # (n,) int64: tokens before truncation
    names: list[str]  # n file names, "pos/<id>_<rating>.txt"
    max_len: int
    root: Path  # the extracted archive (for :meth:`text`)

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, i: int) -> str:
        """The original text of review ``i`` (read from its file)."""
        return _read_text(self.root, self.split, self.names[i])

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


def _encode(tokens: _TokenizedSplit, vocab: Vocab, split: str, max_len: int, root: Path) -> Reviews:
    # one look-up table from this split's words to vocabulary ids, then a vectorised gather
    table = np.array([vocab.stoi.get(word, UNK) for word in tokens.words.tolist()], dtype=np.int64)
    flat = torch.from_numpy(table[tokens.ids]) if len(tokens.ids) else torch.zeros(0, dtype=torch.long)
    offsets = tokens.offsets.tolist()
    ids = [flat[start : min(end, start + max_len)] for start, end in pairwise(offsets)]
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
        max_len=max_len,
        root=root,
    )


class ImdbData(NamedTuple):
    train: Reviews
    test: Reviews
    vocab: Vocab


def load_imdb(
    vocab_size: int,
    max_len: int,
    *,
    train_reviews: int | None = None,
    test_reviews: int | None = None,
    seed: int = 0,
    dataset: DataFile | str = ACL_IMDB,
    cache: bool = True,
) -> ImdbData:
    """The IMDb reviews, tokenised, encoded and truncated: ``train, test, vocab = load_imdb(...)``.

    vocab_size: words kept (most frequent in the training reviews used), plus the 3 special tokens.
    max_len: each review keeps its first ``max_len`` tokens.
    train_reviews, test_reviews: a balanced subset of this many reviews per split, chosen with
    ``seed`` (None: all 25,000). A complete split is cached after its first reading; a subset reads
    only its own files unless that cache already exists. cache=False reads every file afresh.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}.")
    dataset = lookup(dataset)
    root = extract(dataset)
    split_tokens = {}
    for split, n in (("train", train_reviews), ("test", test_reviews)):
        if cache and (n is None or _cache_path(dataset, split).is_file()):
            tokens = _load_full_split(root, dataset, split)
            rows = _balanced_subset(tokens.names.tolist(), n, seed)
            split_tokens[split] = tokens if n is None else _take(tokens, rows)
        else:  # read only the chosen files
            names = _list_split(root, split)
            split_tokens[split] = _tokenize_files(
                root, split, [names[i] for i in _balanced_subset(names, n, seed)]
            )
    vocab = build_vocab(split_tokens["train"].counts(), vocab_size)
    train, test = (_encode(split_tokens[s], vocab, s, max_len, root) for s in SPLITS)
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
    exceed ``reviews.max_len``.
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
                seqs = [torch.cat([head, seq[: self.reviews.max_len - 1]]) for seq in seqs]
            tokens, padding_mask = pad_batch(seqs)  # (b, t), (b, t)
            yield {
                "tokens": tokens,
                "padding_mask": padding_mask,
                "labels": self.reviews.labels[index],
                "index": index,
            }


__all__ = ["ImdbData", "ReviewBatches", "Reviews", "load_imdb"]
