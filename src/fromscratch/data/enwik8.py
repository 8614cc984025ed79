"""enwik8: the first 100,000,000 bytes of an English Wikipedia dump, as bytes (chapter 07).

The data set of the blog's character generator (Hutter Prize). It comes through the registry
(:mod:`fromscratch.data.registry`): ``enwik8.zip`` with its official sha256, holding one member
``enwik8``. The **standard split** cuts the 100M bytes by offset:

==========  ==========================  ==========
split       byte offsets                bytes
==========  ==========================  ==========
train       ``[0, 90_000_000)``         90M
validation  ``[90_000_000, 95_000_000)``  5M
test        ``[95_000_000, 100_000_000)`` 5M
==========  ==========================  ==========

A run profile may ask for only the first ``data_bytes`` bytes (``prof.ch07.data_bytes``). When
that is no more than a registered **prefix** holds (``enwik8-prefix-1000000``: the first 1,000,000
bytes, provided only by a mirror such as CI's), the prefix is read instead of the 36 MB archive.
Either way only a prefix is in use, and the standard split is **not** available: the prefix is cut
90 / 5 / 5 in proportion (``proportional_offsets``), a warning says so, and the returned
:class:`Enwik8` shows it in ``standard_split`` and its ``repr``. Numbers measured on such a split
are not comparable with published enwik8 results.

Batches for a language model are random fixed-length subsequences (:class:`RandomSubsequences`):
inputs ``x`` (b, t) and next-byte targets ``y`` (b, t), ``y[:, i] = x[:, i + 1]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from fromscratch.data.registry import ENWIK8, ENWIK8_PREFIX, DataError, DataFile, extract, lookup

MEMBER = "enwik8"  # the one file inside enwik8.zip (and inside the prefix archive)
STANDARD_SPLIT = (90_000_000, 5_000_000, 5_000_000)  # train, validation, test bytes
PREFIX_BYTES = 1_000_000  # bytes held by the registered prefix ``enwik8-prefix-1000000``
SPLITS = ("train", "val", "test")


class PrefixWarning(UserWarning):
    """Only a prefix of enwik8 is in use: the standard 90M/5M/5M split is not available."""


def standard_offsets(split: tuple[int, int, int] = STANDARD_SPLIT) -> dict[str, tuple[int, int]]:
    """``{"train": (0, 90M), "val": (90M, 95M), "test": (95M, 100M)}``: byte ranges ``[start, end)``."""
    ends = torch.tensor(split).cumsum(0).tolist()
    starts = [0] + ends[:-1]
    return {name: (start, end) for name, start, end in zip(SPLITS, starts, ends, strict=True)}


def proportional_offsets(n: int, split: tuple[int, int, int] = STANDARD_SPLIT) -> dict[str, tuple[int, int]]:
    """Cut ``n`` bytes in the proportions of ``split`` (90 / 5 / 5): the split used for a prefix.

    train is the first ``n * 90 // 100`` bytes, validation the next ``n * 5 // 100``, test the rest;
    ``n = 1,000,000`` gives ``[0, 900,000)``, ``[900,000, 950,000)``, ``[950,000, 1,000,000)``.
    """
    total = sum(split)
    n_train = n * split[0] // total
    n_val = n * split[1] // total
    return {"train": (0, n_train), "val": (n_train, n_train + n_val), "test": (n_train + n_val, n)}


@dataclass(frozen=True, repr=False)
class Enwik8:
    """enwik8 as three uint8 tensors of bytes, and where they came from."""

    train: torch.Tensor  # (n_train,) uint8
    val: torch.Tensor  # (n_val,) uint8
    test: torch.Tensor  # (n_test,) uint8
    source: str  # registry name of the archive read ("enwik8" or "enwik8-prefix-1000000")
    standard_split: bool  # True only for the full file cut at the standard offsets
    offsets: dict[str, tuple[int, int]]  # byte range [start, end) of each split in the file

    @property
    def note(self) -> str:
        """One line saying which split this is; quote it next to any number measured on it."""
        n = self.offsets["test"][1]
        if self.standard_split:
            return f"enwik8, standard split ({n:,} bytes: 90M train / 5M validation / 5M test)"
        return (
            f"only the first {n:,} bytes of enwik8 (from {self.source}), cut 90/5/5 in proportion: "
            f"NOT the standard split, so bits per byte here are not comparable with published results"
        )

    def __repr__(self) -> str:
        ranges = ", ".join(f"{name}=[{a:,}, {b:,})" for name, (a, b) in self.offsets.items())
        return f"Enwik8({ranges}; {self.note})"


def _read(dataset: DataFile, n: int | None, progressbar: bool, hint: str = "") -> bytes:
    """The first ``n`` bytes (all when None) of the member ``enwik8`` of ``dataset``'s archive."""
    try:
        path: Path = extract(dataset, progressbar=progressbar) / MEMBER
    except DataError as error:
        raise DataError(f"{error}{hint}") from error
    if not path.is_file():
        raise DataError(
            f"{dataset.fname} has no member {MEMBER!r} (looked for {path}). The archive must hold "
            f"one file called {MEMBER!r}; delete {path.parent} and fetch it again."
        )
    with open(path, "rb") as f:
        return f.read() if n is None else f.read(n)


def load(
    data_bytes: int | None = None,
    *,
    dataset: DataFile | str = ENWIK8,
    prefix: DataFile | str | None = ENWIK8_PREFIX,
    prefix_bytes: int = PREFIX_BYTES,
    split: tuple[int, int, int] = STANDARD_SPLIT,
    progressbar: bool = True,
    fallback_to_prefix: bool = False,
) -> Enwik8:
    """Load enwik8 as bytes, split into train / validation / test (chapter 07).

    ``data_bytes=None`` (or at least ``sum(split)``): the full file, cut at the standard offsets;
    without a copy and without network this raises the registry's :class:`DataError`, which says
    how to get ``enwik8.zip``. ``data_bytes=n``: only the first ``n`` bytes, read from ``prefix``
    when it holds that many (``n <= prefix_bytes``) and is available, else from the full archive;
    cut 90 / 5 / 5 in proportion, with a :class:`PrefixWarning`.

    ``dataset``, ``prefix``, ``prefix_bytes`` and ``split`` default to the real enwik8; tests pass a
    small archive in the same layout. Returns an :class:`Enwik8` whose tensors are uint8 (n,).

    ``fallback_to_prefix=True`` (chapter 07 uses it, so the chapter still runs in a classroom whose
    mirror holds only the prefix): when the full file is asked for but cannot be had, load the whole
    prefix instead, with the :class:`PrefixWarning` and a note that say so. Benchmarks never fall back.
    """
    total = sum(split)
    hint = ""
    if prefix is not None:
        hint = (
            f"\n(Only the first {prefix_bytes:,} bytes are registered separately, as {lookup(prefix).name}: "
            f"a run with data_bytes <= {prefix_bytes:,}, such as the smoke profile, needs only that one.)"
        )
    if data_bytes is not None and data_bytes <= 0:
        raise ValueError(
            f"data_bytes={data_bytes}: ask for a positive number of bytes, or None for all of enwik8."
        )
    if data_bytes is None or data_bytes >= total:
        try:
            data = _read(lookup(dataset), None, progressbar, hint)
        except DataError as error:
            if not (fallback_to_prefix and prefix is not None):
                raise
            warnings.warn(
                f"enwik8: the full file could not be had, so only its first {prefix_bytes:,} bytes are "
                f"used. {str(error).splitlines()[0]}",
                PrefixWarning,
                stacklevel=2,
            )
            return load(
                prefix_bytes,
                dataset=dataset,
                prefix=prefix,
                prefix_bytes=prefix_bytes,
                split=split,
                progressbar=progressbar,
            )
        if len(data) != total:
            raise DataError(
                f"{lookup(dataset).fname} holds {len(data):,} bytes, not the {total:,} of enwik8; "
                f"it is not the full file. Delete it from the cache and fetch it again."
            )
        offsets, standard, source = standard_offsets(split), True, lookup(dataset).name
    else:
        data, source = None, None
        if prefix is not None and data_bytes <= prefix_bytes:
            try:
                data, source = _read(lookup(prefix), data_bytes, progressbar), lookup(prefix).name
            except DataError:  # no mirror holds the prefix: read the first bytes of the full file instead
                data = None
        if data is None:
            data, source = _read(lookup(dataset), data_bytes, progressbar, hint), lookup(dataset).name
        if len(data) < data_bytes:
            raise DataError(
                f"{source} holds only {len(data):,} bytes, fewer than the {data_bytes:,} asked for. "
                f"Ask for fewer (data_bytes) or use the full enwik8 (data_bytes=None)."
            )
        offsets, standard = proportional_offsets(data_bytes, split), False
    everything = torch.frombuffer(bytearray(data), dtype=torch.uint8)  # (n,) one byte per element
    parts = {name: everything[a:b] for name, (a, b) in offsets.items()}
    result = Enwik8(
        parts["train"], parts["val"], parts["test"], source=source, standard_split=standard, offsets=offsets
    )
    if not standard:
        warnings.warn(f"enwik8: {result.note}.", PrefixWarning, stacklevel=2)
    return result


class RandomSubsequences:
    """Batches of random fixed-length subsequences of a byte stream, for next-byte prediction.

    Each batch is ``(x, y)``, both (b, t) int64 with ``t = context``: ``x`` is ``data[s : s + t]``
    and ``y`` is ``data[s + 1 : s + t + 1]`` (the next byte at every position), for ``b`` start
    offsets ``s`` drawn uniformly. Iterating starts a fresh stream seeded with ``seed``, so two
    iterations give the same batches; ``num_batches=None`` never ends (use ``steps`` to stop).
    """

    def __init__(
        self,
        data: torch.Tensor,
        *,
        context: int,
        batch_size: int,
        seed: int = 0,
        num_batches: int | None = None,
    ) -> None:
        if data.dim() != 1:
            raise ValueError(f"data must be a 1-d tensor of bytes, got shape {tuple(data.shape)}.")
        if len(data) < context + 2:
            raise ValueError(
                f"The stream has {len(data):,} bytes, too few for subsequences of context={context} "
                f"(needs at least context + 2). Use a shorter context or more data."
            )
        self.data, self.context, self.batch_size = data, context, batch_size
        self.seed, self.num_batches = seed, num_batches

    def __len__(self) -> int:
        if self.num_batches is None:
            raise TypeError("RandomSubsequences(num_batches=None) is endless and has no length.")
        return self.num_batches

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        rng = torch.Generator().manual_seed(self.seed)
        offsets = torch.arange(self.context + 1)  # (t + 1,)
        n = 0
        while self.num_batches is None or n < self.num_batches:
            starts = torch.randint(len(self.data) - self.context, (self.batch_size,), generator=rng)  # (b,)
            chunk = self.data[starts[:, None] + offsets].long()  # (b, t + 1)
            yield chunk[:, :-1], chunk[:, 1:]  # x (b, t), y (b, t)
            n += 1
