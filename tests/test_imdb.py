"""The IMDb loader (chapter 06) and its parts: tokeniser, vocabulary, encoding, caching and batches.

A tiny archive in the canonical ``aclImdb/`` layout, served through a temporary mirror, checks the
exact behaviour; the real archive (the ``mirror`` fixture) checks that it reads the real thing.
"""

from __future__ import annotations

import hashlib
import tarfile
from collections import Counter
from pathlib import Path

import pytest
import torch

from fromscratch.data.batching import bucketed_batches, pad_batch
from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.imdb_tokens import CACHE_VERSION
from fromscratch.data.registry import DataError, DataFile
from fromscratch.tokenizers.special import CLS, PAD, UNK
from fromscratch.tokenizers.words import build_vocab, tokenize

TINY = DataFile(
    name="aclImdb-tiny",
    url=None,
    sha256=None,
    fname="aclImdb-tiny.tar.gz",
    description="a made-up archive in the aclImdb layout, for tests",
)

REVIEWS = {  # (split, label): texts; the file of text i is <i>_<rating>.txt
    ("train", "pos"): [
        "A great film!<br /><br />Great acting.",
        "Great fun, great cast.",
        "I loved it. Loved it!",
        "Fun and great: see it.",
    ],
    ("train", "neg"): [
        "A dull film. Dull, dull, dull.",
        "Awful acting; I hated it.",
        "Boring... so boring!",
        "It wasn't fun at all.",
    ],
    ("test", "pos"): ["A wonderful, great film.", "Great!"],
    ("test", "neg"): ["Dull and awful.", "Wonderful? No: boring."],
}
RATING = {"pos": 9, "neg": 2}


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> DataFile:
    """The tiny archive in a fresh mirror (with its SHA256SUMS) and an empty cache."""
    source = tmp_path / "source"
    for (split, label), texts in REVIEWS.items():
        folder = source / "aclImdb" / split / label
        folder.mkdir(parents=True)
        for i, text in enumerate(texts):
            (folder / f"{i}_{RATING[label]}.txt").write_text(text, encoding="utf-8")
    mirror = tmp_path / "mirror"
    (mirror / "imdb").mkdir(parents=True)
    archive = mirror / "imdb" / TINY.fname
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source / "aclImdb", arcname="aclImdb")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (mirror / "SHA256SUMS").write_text(f"{digest}  imdb/{TINY.fname}\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path / "cache"))
    return TINY


# --- tokeniser and vocabulary ----------------------------------------------------------------------
def test_tokenize():
    assert tokenize("A <br />great film. Don't miss it!") == [
        "a",
        "great",
        "film",
        ".",
        "don't",
        "miss",
        "it",
        "!",
    ]
    assert tokenize("WOW!!<br/>10/10") == ["wow", "!", "!", "10", "/", "10"]
    assert tokenize("Café  crème -- 'quoted'") == ["café", "crème", "-", "-", "'", "quoted", "'"]
    assert tokenize("") == []


def test_vocab_orders_by_frequency_then_alphabet():
    vocab = build_vocab(Counter({"film": 5, "bad": 2, "good": 2, "rare": 1}), size=3)
    assert vocab.itos == ["<pad>", "<unk>", "<cls>", "film", "bad", "good"]
    assert (vocab.pad, vocab.unk, vocab.cls) == (PAD, UNK, CLS) == (0, 1, 2)
    assert len(vocab) == 6
    assert vocab.encode(["good", "rare", "film"]) == [5, UNK, 3]
    assert vocab.decode(torch.tensor([3, 1])) == ["film", "<unk>"]
    with pytest.raises(ValueError, match="vocab_size"):
        build_vocab(Counter(), 0)


def test_pad_batch():
    tokens, padding_mask = pad_batch([torch.tensor([5, 6, 7]), torch.tensor([8])])
    assert tokens.tolist() == [[5, 6, 7], [8, PAD, PAD]]
    assert padding_mask.dtype == torch.bool
    assert padding_mask.tolist() == [[True, True, True], [True, False, False]]
    tokens, padding_mask = pad_batch([torch.tensor([4]), torch.tensor([], dtype=torch.long)], pad_id=9)
    assert tokens.tolist() == [[4], [9]] and padding_mask.tolist() == [[True], [False]]
    with pytest.raises(ValueError, match="at least one sequence"):
        pad_batch([])


def test_bucketed_batches_without_shuffle_are_sorted_by_length():
    lengths = torch.tensor([5, 2, 9, 2, 7])
    batches = bucketed_batches(lengths, 2, shuffle=False)
    assert [b.tolist() for b in batches] == [[1, 3], [0, 4], [2]]  # stable: ties keep their order
    shuffled = bucketed_batches(lengths, 2, bucket=1, generator=torch.Generator().manual_seed(0))
    assert sorted(torch.cat(shuffled).tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="positive"):
        bucketed_batches(lengths, 0)


# --- loading the tiny archive ----------------------------------------------------------------------
def test_loads_the_archive_with_a_training_only_vocabulary(tiny):
    train, test, vocab = load_imdb(vocab_size=100, context=5, dataset=tiny)
    assert len(train) == 8 and len(test) == 4
    assert "wonderful" not in vocab.stoi  # a word seen only in the test split
    assert vocab.itos[3:6] == [".", "great", "it"]  # most frequent first; "great" and "it" tie (5 each)
    # files are read in sorted order, negative reviews first
    assert train.names[:2] == ["neg/0_2.txt", "neg/1_2.txt"] and train.labels.tolist() == [0] * 4 + [1] * 4
    assert train.ratings.tolist() == [2] * 4 + [9] * 4
    assert test.text(2) == REVIEWS["test", "pos"][0]
    first_pos = tokenize(REVIEWS["train", "pos"][0])  # a great film ! great acting .
    assert vocab.decode(train.ids[4]) == first_pos[:5]  # truncated to context
    assert train.lengths[4] == len(first_pos)
    assert vocab.decode(test.ids[2]) == ["a", "<unk>", ",", "great", "film"]


def test_small_vocabulary_maps_the_rest_to_unk(tiny):
    train, _, vocab = load_imdb(vocab_size=2, context=50, dataset=tiny)
    assert vocab.itos == ["<pad>", "<unk>", "<cls>", ".", "great"]
    assert set(torch.cat(train.ids).tolist()) <= {UNK, 3, 4}


def test_the_full_split_is_cached_atomically_and_subsets_agree(tiny, tmp_path):
    with_cache_missing = load_imdb(
        vocab_size=50, context=8, train_reviews=4, test_reviews=2, seed=3, dataset=tiny
    )
    cache = tmp_path / "cache" / "tokens"
    assert not cache.exists()  # a subset reads only its own files
    load_imdb(vocab_size=50, context=8, dataset=tiny)
    assert sorted(p.name for p in cache.iterdir()) == [
        f"aclImdb-tiny-test-v{CACHE_VERSION}.npz",
        f"aclImdb-tiny-train-v{CACHE_VERSION}.npz",
    ]
    from_cache = load_imdb(vocab_size=50, context=8, train_reviews=4, test_reviews=2, seed=3, dataset=tiny)
    for a, b in zip(with_cache_missing[:2], from_cache[:2], strict=True):
        assert a.names == b.names and all(torch.equal(x, y) for x, y in zip(a.ids, b.ids, strict=True))
    assert with_cache_missing.vocab.itos == from_cache.vocab.itos
    train = from_cache.train
    assert train.labels.sum() == 2 and len(train) == 4  # balanced
    other = load_imdb(vocab_size=50, context=8, train_reviews=4, test_reviews=2, seed=4, dataset=tiny).train
    assert other.names != train.names  # the seed picks the subset
    with pytest.raises(ValueError, match="choose 1..8"):
        load_imdb(vocab_size=50, context=8, train_reviews=9, dataset=tiny)


def test_missing_archive_says_how_to_get_it(empty_data_env):
    with pytest.raises(DataError, match="FROMSCRATCH_MIRROR"):
        load_imdb(vocab_size=10, context=5, dataset=TINY)


# --- batches ---------------------------------------------------------------------------------------
def fake_reviews(lengths, context=40):
    ids = [torch.arange(3, 3 + n) for n in lengths]
    n = len(lengths)
    return Reviews(
        split="train",
        ids=ids,
        labels=torch.arange(n) % 2,
        ratings=torch.ones(n, dtype=torch.long),
        lengths=torch.tensor(lengths),
        names=[f"pos/{i}_1.txt" for i in range(n)],
        context=context,
        root=Path("."),
    )


def test_batches_cover_every_review_once_and_bucket_by_length():
    lengths = torch.randint(1, 40, (1000,), generator=torch.Generator().manual_seed(0)).tolist()
    reviews = fake_reviews(lengths)
    torch.manual_seed(0)
    batches = list(ReviewBatches(reviews, 20, bucket=10))
    assert len(batches) == 50 == len(ReviewBatches(reviews, 20))
    assert set(batches[0]) == {"tokens", "padding_mask", "labels", "index"}
    seen = torch.cat([b["index"] for b in batches])
    assert sorted(seen.tolist()) == list(range(1000))
    for b in batches:
        assert torch.equal(b["padding_mask"].sum(1), torch.tensor([lengths[i] for i in b["index"]]))
        assert torch.equal(b["labels"], reviews.labels[b["index"]])
    padding = sum((~b["padding_mask"]).sum().item() for b in batches)
    unbucketed = sum((~b["padding_mask"]).sum().item() for b in ReviewBatches(reviews, 20, bucket=1))
    assert padding < 0.2 * unbucketed  # similar lengths share a batch


def test_batch_order_is_random_but_seeded():
    reviews = fake_reviews(list(range(1, 41)))

    def order():
        return torch.cat([b["index"] for b in ReviewBatches(reviews, 4, bucket=2)]).tolist()

    torch.manual_seed(1)
    first, second = order(), order()
    torch.manual_seed(1)
    assert order() == first and first != second  # a new order every epoch, repeatable from the seed


def test_evaluation_batches_are_sorted_and_cls_is_prepended():
    reviews = fake_reviews([5, 2, 40, 3], context=40)
    batches = list(ReviewBatches(reviews, 2, shuffle=False, cls=True))
    assert [b["index"].tolist() for b in batches] == [[1, 3], [0, 2]]
    tokens = batches[1]["tokens"]
    assert tokens.shape == (2, 40) and (tokens[:, 0] == CLS).all()  # 40 tokens + <cls> cut to 40
    assert tokens[0, 1:6].tolist() == reviews.ids[0].tolist()


# --- the real archive ------------------------------------------------------------------------------
def test_real_imdb_subset(mirror):
    train, test, vocab = load_imdb(vocab_size=1000, context=64, train_reviews=200, test_reviews=100)
    assert len(train) == 200 and len(test) == 100 and len(vocab) == 1003
    assert train.labels.sum() == 100 and test.labels.sum() == 50
    assert (train.ratings[train.labels == 1] >= 7).all() and (train.ratings[train.labels == 0] <= 4).all()
    assert max(len(ids) for ids in train.ids) == 64
    assert set(vocab.itos[3:6]) == {"the", ".", ","}  # English reviews: the usual suspects first
    assert "<br" not in " ".join(vocab.itos)
    words = tokenize(train.text(0))
    assert vocab.decode(train.ids[0]) == [w if w in vocab.stoi else "<unk>" for w in words][:64]


def test_hold_out_splits_off_a_balanced_validation_set():
    reviews = fake_reviews(list(range(1, 21)))
    reviews.names = [
        f"{'pos' if label else 'neg'}/{i}_1.txt" for i, label in enumerate(reviews.labels.tolist())
    ]
    rest, held = reviews.hold_out(6, seed=1)
    assert len(rest) == 14 and len(held) == 6 and held.labels.sum() == 3
    assert sorted(rest.names + held.names) == sorted(reviews.names)
    for part in (rest, held):  # every review keeps its own tokens, label and length
        for name, ids, label, length in zip(part.names, part.ids, part.labels, part.lengths, strict=True):
            j = reviews.names.index(name)
            assert (
                torch.equal(ids, reviews.ids[j])
                and label == reviews.labels[j]
                and length == reviews.lengths[j]
            )
