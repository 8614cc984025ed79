"""MovieLens 100K: who rated which movie how many stars (chapter 01).

100,000 ratings (1-5 stars) of 1,682 movies by 943 users, collected by GroupLens in 1997-98
(Harper & Konstan 2015). ``load_movielens()`` reads the archive from the data registry
(``MOVIELENS_100K``, named ``ml-100k``) and returns a :class:`MovieLens` with

- every rating as a :class:`Ratings` dataset of three aligned tensors ``user``, ``item``, ``rating``
  (plus ``timestamp``), with 0-based indices: user id ``u`` of the files is index ``u - 1``;
- movie titles and the 19 genre flags from ``u.item`` (latin-1 text);
- a reproducible **random split by rating**: a seeded permutation sends ``test_fraction`` of the
  ratings to ``test``. A test rating whose user or movie has no other rating in ``train`` is moved
  back to ``train``, so every test prediction is about a user and a movie the model has seen.

``Ratings`` works with a ``DataLoader`` (each item is a ``(user, item, rating)`` tuple) and also
has a faster ``batches(...)``, a zero-argument callable that yields one shuffled epoch per call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

from fromscratch.data.registry import MOVIELENS_100K, DataError, extract

N_USERS, N_ITEMS, N_RATINGS = 943, 1_682, 100_000
GENRES = (
    "unknown",
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
)

Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # user (b,), item (b,) int64; rating (b,) float32


class Ratings(Dataset):
    """Aligned rating tensors of length n: ``user``, ``item`` (int64, 0-based), ``rating`` (float32).

    ``ratings[i]`` is the tuple ``(user, item, rating)`` of rating i, so a ``DataLoader`` batches it
    into ``(user (b,), item (b,), rating (b,))``.
    """

    def __init__(
        self,
        user: torch.Tensor,
        item: torch.Tensor,
        rating: torch.Tensor,
        timestamp: torch.Tensor | None = None,
    ):
        if not (user.shape == item.shape == rating.shape) or user.dim() != 1:
            raise ValueError(
                f"user, item and rating must be 1-d tensors of one length; got shapes "
                f"{tuple(user.shape)}, {tuple(item.shape)}, {tuple(rating.shape)}."
            )
        self.user = user.long()
        self.item = item.long()
        self.rating = rating.float()
        self.timestamp = timestamp

    def __len__(self) -> int:
        return self.user.numel()

    def __getitem__(self, i) -> Batch:
        return self.user[i], self.item[i], self.rating[i]

    def subset(self, index: torch.Tensor) -> Ratings:
        """The ratings at positions ``index`` (an int64 tensor), in that order."""
        ts = None if self.timestamp is None else self.timestamp[index]
        return Ratings(self.user[index], self.item[index], self.rating[index], ts)

    def batches(self, batch_size: int, *, shuffle: bool = True) -> Callable[[], Iterator[Batch]]:
        """A zero-argument callable; each call yields one epoch of ``(user, item, rating)`` batches.

        Slicing whole tensors is much faster than a ``DataLoader`` collating scalars one by one.
        With ``shuffle`` each epoch's order is a fresh permutation drawn from PyTorch's global random
        generator when the epoch starts: ``fromscratch.setup(seed=...)`` makes a run reproducible,
        and ``fromscratch.training`` can resume it exactly.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")

        def epoch() -> Iterator[Batch]:
            order = torch.randperm(len(self)) if shuffle else torch.arange(len(self))
            for start in range(0, len(self), batch_size):
                yield self[order[start : start + batch_size]]

        return epoch


@dataclass(frozen=True)
class MovieLens:
    """MovieLens 100K, read and split; see the module docstring."""

    ratings: Ratings  # all ratings kept (all 100,000 unless ``max_ratings``), in file order
    train: Ratings
    test: Ratings
    titles: list[str]  # titles[i]: title of movie index i (movie id i + 1), e.g. "Toy Story (1995)"
    genres: torch.Tensor  # (n_items, 19) bool: genres[i, g] is True when movie i has genre GENRES[g]
    n_users: int  # 943: the size of the user table (indices 0..942), whatever subset was kept
    n_items: int  # 1,682

    @property
    def counts(self) -> torch.Tensor:
        """``(n_items,)`` int64: how many of the kept ratings each movie has."""
        return torch.bincount(self.ratings.item, minlength=self.n_items)

    def most_rated(self, k: int) -> list[int]:
        """Indices of the ``k`` movies with the most ratings, most rated first (ties: lower index)."""
        counts = self.counts.tolist()
        return sorted(range(self.n_items), key=lambda i: (-counts[i], i))[:k]

    def find(self, title: str) -> int:
        """Index of the one movie whose title contains ``title`` (case-insensitive)."""
        hits = [i for i, t in enumerate(self.titles) if title.lower() in t.lower()]
        if len(hits) != 1:
            shown = ", ".join(repr(self.titles[i]) for i in hits[:5]) or "none"
            raise ValueError(
                f"{title!r} matches {len(hits)} titles ({shown}); give a longer part of the title."
            )
        return hits[0]

    def genres_of(self, item: int) -> list[str]:
        """Genre names of movie index ``item``."""
        return [GENRES[g] for g in torch.nonzero(self.genres[item]).flatten().tolist()]


def short_title(title: str) -> str:
    """``"English Patient, The (1996)"`` -> ``"The English Patient"``: no year, article in front."""
    name = re.sub(r"\s*\(\d{4}\)\s*$", "", title).strip()
    match = re.fullmatch(r"(.*), (The|A|An|Das|El|Il|La|Le|Les)", name)
    return f"{match[2]} {match[1]}" if match else name


def _files(root: Path) -> Path:
    folder = root / "ml-100k"
    for name in ("u.data", "u.item"):
        if not (folder / name).is_file():
            raise DataError(
                f"{folder / name} is missing: the extracted MovieLens copy under {root} is incomplete. "
                f"Delete {root} and run again to unpack the archive afresh."
            )
    return folder


def read_ratings(folder: Path) -> Ratings:
    """All ratings of ``u.data`` (tab-separated ``user item rating timestamp``, ids from 1)."""
    numbers = np.array((folder / "u.data").read_text().split(), dtype=np.int64)  # (4n,)
    if numbers.size != 4 * N_RATINGS:
        raise DataError(
            f"{folder / 'u.data'} holds {numbers.size} numbers, expected 4 for each of {N_RATINGS} "
            f"ratings; delete {folder.parent} and run again to unpack the archive afresh."
        )
    table = torch.from_numpy(numbers).view(N_RATINGS, 4)  # (n, 4): user, item, rating, timestamp
    return Ratings(table[:, 0] - 1, table[:, 1] - 1, table[:, 2].float(), table[:, 3])


def read_items(folder: Path) -> tuple[list[str], torch.Tensor]:
    """Titles and genre flags ``(n_items, 19)`` from ``u.item`` (``|``-separated, latin-1)."""
    titles, genres = [], []
    for line in (folder / "u.item").read_text(encoding="latin-1").splitlines():
        if not line.strip():
            continue
        fields = line.split("|")  # id | title | release date | video date | IMDb URL | 19 genre flags
        if int(fields[0]) != len(titles) + 1:
            raise DataError(f"{folder / 'u.item'}: movie ids are not 1, 2, 3, ... (found {fields[0]}).")
        titles.append(fields[1])
        genres.append([flag == "1" for flag in fields[5:]])
    return titles, torch.tensor(genres, dtype=torch.bool)


def split(
    ratings: Ratings, *, test_fraction: float, seed: int, n_users: int, n_items: int
) -> tuple[Ratings, Ratings]:
    """Random split by rating; test ratings of users or movies absent from train go back to train."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1 (e.g. 0.1), got {test_fraction}.")
    order = torch.randperm(len(ratings), generator=torch.Generator().manual_seed(seed))
    n_test = round(test_fraction * len(ratings))
    is_test = torch.zeros(len(ratings), dtype=torch.bool)
    is_test[order[:n_test]] = True
    train_idx = ~is_test
    seen_users = torch.bincount(ratings.user[train_idx], minlength=n_users) > 0
    seen_items = torch.bincount(ratings.item[train_idx], minlength=n_items) > 0
    is_test &= seen_users[ratings.user] & seen_items[ratings.item]  # unseen -> back to train
    return ratings.subset(torch.nonzero(~is_test).flatten()), ratings.subset(torch.nonzero(is_test).flatten())


def load_movielens(*, test_fraction: float = 0.1, seed: int = 0, max_ratings: int | None = None) -> MovieLens:
    """Read MovieLens 100K (through the data registry) and split it reproducibly.

    ``max_ratings`` keeps only a seeded random sample of that many ratings (the ``smoke`` profile);
    the user and movie tables keep their full sizes, so indices and titles never change.
    The same ``seed`` gives the same sample and the same split every time.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1 (e.g. 0.1), got {test_fraction}.")
    if max_ratings is not None and not 0 < max_ratings <= N_RATINGS:
        raise ValueError(
            f"max_ratings must be between 1 and {N_RATINGS} (or None for all), got {max_ratings}."
        )
    folder = _files(extract(MOVIELENS_100K))
    ratings = read_ratings(folder)
    titles, genres = read_items(folder)
    if len(titles) != N_ITEMS or int(ratings.user.max()) + 1 != N_USERS:
        raise DataError(
            f"{folder} does not look like MovieLens 100K ({len(titles)} movies, expected {N_ITEMS})."
        )
    if max_ratings is not None:
        keep = torch.randperm(len(ratings), generator=torch.Generator().manual_seed(seed + 1))[:max_ratings]
        ratings = ratings.subset(keep.sort().values)
    train, test = split(ratings, test_fraction=test_fraction, seed=seed, n_users=N_USERS, n_items=N_ITEMS)
    return MovieLens(ratings, train, test, titles, genres, N_USERS, N_ITEMS)
