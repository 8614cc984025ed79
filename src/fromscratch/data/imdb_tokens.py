"""The tokens of IMDb's review files, read once and cached (chapter 06's data, :mod:`fromscratch.data.imdb`).

Reading 25,000 small files and tokenising them takes several seconds per split, so a complete
split's tokens are cached: one ``.npz`` per split under the data cache, written atomically.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fromscratch.data.registry import DataError, DataFile, cache_dir
from fromscratch.tokenizers.words import tokenize

CACHE_VERSION = 2  # bump when the tokeniser or the format changes, so old caches are not trusted


# --- reading and encoding the splits ------------------------------------------------------------
@dataclass
class TokenizedSplit:
    """Tokens of some reviews of one split, stored compactly (what the cache holds)."""

    words: np.ndarray  # (w,) str: the distinct words of these reviews
    ids: np.ndarray  # (n_tokens,) int32: every token, as an index into ``words``
    offsets: np.ndarray  # (n + 1,) int64: review i is ids[offsets[i]:offsets[i + 1]]
    names: np.ndarray  # (n,) str: "pos/123_9.txt"

    def counts(self) -> Counter:
        freq = np.bincount(self.ids, minlength=len(self.words))
        seen = freq.nonzero()[0]  # a subset taken from a cached split does not use all its words
        return Counter(dict(zip(self.words[seen].tolist(), freq[seen].tolist(), strict=True)))


def list_split(root: Path, split: str) -> list[str]:
    """Every review file of ``split`` as ``"pos/<id>_<rating>.txt"``, sorted (neg first)."""
    folder = root / "aclImdb" / split
    if not (folder / "pos").is_dir() or not (folder / "neg").is_dir():
        raise DataError(
            f"{folder} should hold the folders pos/ and neg/ of the aclImdb archive. Delete "
            f"{root} so that it is unpacked again from the archive."
        )
    names = (f"{label}/{name}" for label in ("neg", "pos") for name in sorted(os.listdir(folder / label)))
    return [name for name in names if name.endswith(".txt")]


def read_text(root: Path, split: str, name: str) -> str:
    return (root / "aclImdb" / split / name).read_text(encoding="utf-8")


def tokenize_files(root: Path, split: str, names: list[str]) -> TokenizedSplit:
    index: dict[str, int] = {}
    ids: list[int] = []
    offsets = [0]
    for name in names:
        ids.extend(index.setdefault(token, len(index)) for token in tokenize(read_text(root, split, name)))
        offsets.append(len(ids))
    return TokenizedSplit(
        words=np.array(list(index), dtype=str),
        ids=np.array(ids, dtype=np.int32),
        offsets=np.array(offsets, dtype=np.int64),
        names=np.array(names, dtype=str),
    )


def cache_path(dataset: DataFile, split: str) -> Path:
    """Where the tokens of ``split`` (\"train\", \"test\" or \"unsup\") are cached."""
    return cache_dir() / "tokens" / f"{dataset.name}-{split}-v{CACHE_VERSION}.npz"


def select_reviews(tokens: TokenizedSplit, rows: list[int]) -> TokenizedSplit:
    """The reviews ``rows`` of ``tokens`` (in that order), sharing its word list."""
    starts, ends = tokens.offsets[rows], tokens.offsets[np.array(rows, dtype=np.int64) + 1]
    lengths = ends - starts
    pieces = [tokens.ids[s:e] for s, e in zip(starts, ends, strict=True)]
    return TokenizedSplit(
        words=tokens.words,
        ids=np.concatenate(pieces) if pieces else tokens.ids[:0],
        offsets=np.concatenate([[0], np.cumsum(lengths)]),
        names=tokens.names[rows],
    )


def cached_tokens(path: Path, make: Callable[[], TokenizedSplit]) -> TokenizedSplit:
    """The tokens cached at ``path``, or ``make()`` them and cache them there atomically."""
    if path.is_file():
        with np.load(path) as f:
            return TokenizedSplit(words=f["words"], ids=f["ids"], offsets=f["offsets"], names=f["names"])
    tokens = make()
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


def load_full_split(root: Path, dataset: DataFile, split: str) -> TokenizedSplit:
    """All reviews of ``split``: from the token cache, or read, tokenised and cached atomically."""
    return cached_tokens(
        cache_path(dataset, split), lambda: tokenize_files(root, split, list_split(root, split))
    )


__all__ = [
    "CACHE_VERSION",
    "TokenizedSplit",
    "cache_path",
    "cached_tokens",
    "list_split",
    "load_full_split",
    "read_text",
    "select_reviews",
    "tokenize_files",
]
