"""The MovieLens 100K loader on the real (mirrored) archive: counts, titles, genres, the split."""

from __future__ import annotations

import functools

import pytest
import torch
from torch.utils.data import DataLoader

from fromscratch.data.movielens import GENRES, N_ITEMS, N_RATINGS, N_USERS, load_movielens, short_title


@functools.cache
def _load(**kwargs):
    return load_movielens(**kwargs)


@pytest.fixture
def ml(mirror):
    return _load()


def _pairs(ratings) -> set[int]:
    return set((ratings.user * N_ITEMS + ratings.item).tolist())


def test_counts(ml):
    assert len(ml.ratings) == N_RATINGS == 100_000
    assert (ml.n_users, ml.n_items) == (943, 1_682)
    assert ml.ratings.user.unique().numel() == 943 and int(ml.ratings.user.min()) == 0
    assert ml.ratings.item.unique().numel() == 1_682 and int(ml.ratings.item.max()) == 1_681
    assert set(ml.ratings.rating.unique().tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert ml.ratings.user.dtype == torch.int64 and ml.ratings.rating.dtype == torch.float32
    # the first line of u.data is "196 242 3 881250949"
    assert (int(ml.ratings.user[0]), int(ml.ratings.item[0]), float(ml.ratings.rating[0])) == (195, 241, 3.0)
    assert int(ml.ratings.timestamp[0]) == 881250949
    assert ml.most_rated(1) == [ml.find("Star Wars (1977)")]  # 583 ratings, the most of any movie
    assert int(ml.counts.sum()) == N_RATINGS


def test_titles_and_genres(ml):
    assert len(ml.titles) == N_ITEMS and ml.titles[0] == "Toy Story (1995)"
    assert ml.genres.shape == (N_ITEMS, len(GENRES)) and ml.genres.dtype == torch.bool
    assert ml.genres_of(0) == ["Animation", "Children's", "Comedy"]
    assert ml.titles[542] == "Misérables, Les (1995)"  # latin-1 in the file
    assert short_title(ml.titles[542]) == "Les Misérables"
    assert short_title("English Patient, The (1996)") == "The English Patient"
    assert short_title("Star Wars (1977)") == "Star Wars"
    with pytest.raises(ValueError, match="matches"):
        ml.find("Star Trek")  # many


def test_split_disjoint_complete_and_covered(ml):
    train, test = ml.train, ml.test
    assert len(train) + len(test) == N_RATINGS
    assert 0.09 * N_RATINGS < len(test) <= 0.1 * N_RATINGS
    assert _pairs(train).isdisjoint(_pairs(test))
    assert _pairs(train) | _pairs(test) == _pairs(ml.ratings)
    # every test user and movie also has training ratings
    assert set(test.user.tolist()) <= set(train.user.tolist())
    assert set(test.item.tolist()) <= set(train.item.tolist())


def test_split_reproducible(ml):
    again = load_movielens(seed=0)
    torch.testing.assert_close(again.test.user, ml.test.user)
    torch.testing.assert_close(again.test.item, ml.test.item)
    torch.testing.assert_close(again.test.rating, ml.test.rating)
    other = _load(seed=1)
    assert _pairs(other.test) != _pairs(ml.test)


def test_subset(mirror, ml):
    small = _load(max_ratings=5_000)
    assert len(small.ratings) == 5_000 and len(small.train) + len(small.test) == 5_000
    assert (small.n_users, small.n_items) == (N_USERS, N_ITEMS)  # tables keep their size
    assert _pairs(small.ratings) <= _pairs(ml.ratings)
    assert _pairs(load_movielens(max_ratings=5_000).test) == _pairs(small.test)


def test_batches_and_dataloader(ml):
    user, item, rating = next(iter(DataLoader(ml.train, batch_size=4)))
    assert user.shape == item.shape == rating.shape == (4,)
    torch.testing.assert_close(user, ml.train.user[:4])
    batches = ml.test.batches(1_000)
    epochs = [list(batches()) for _ in range(2)]
    assert [len(b[0]) for b in epochs[0][:-1]] == [1_000] * (len(epochs[0]) - 1)
    keys = [torch.cat([b[0] * N_ITEMS + b[1] for b in epoch]) for epoch in epochs]
    assert keys[0].numel() == len(ml.test) and set(keys[0].tolist()) == _pairs(ml.test)  # each rating once
    assert not torch.equal(keys[0], keys[1])  # a fresh order every epoch


def test_bad_arguments(mirror):
    with pytest.raises(ValueError, match="test_fraction"):
        load_movielens(test_fraction=1.5)
    with pytest.raises(ValueError, match="max_ratings"):
        load_movielens(max_ratings=0)
