"""Byte-level BPE: training, round trips on any Unicode, and GPT-2's real tokeniser against tiktoken."""

from __future__ import annotations

import pytest

from fromscratch.data import DataError, fetch
from fromscratch.data.pretrained import GPT2_124M, GPT2_ENCODER, fetch_online, gpt2_tokenizer, tiktoken_gpt2
from fromscratch.tokenizers import BytePairEncoding, merge, pair_counts, train_bpe

HARD = [
    "Hello world",
    "",
    " ",
    "   leading and trailing spaces   ",
    "tabs\tand\nnewlines\n\n\n  \t \n",
    "whitespace runs:      x       y",
    "digits 1234567890 3.14159 1,000,000 2024-01-01",
    "contractions: I'm, you're, we've, they'll, she'd, it's, don't, CAN'T, 'quoted'",
    "emoji 😀👍🏽👨‍👩‍👧‍👦 🇫🇷 and ❤️",
    "combining marks: e\u0301 n\u0303 a\u0308\u0304 Z\u0351\u0352\u0353",
    "NUL \x00 and control \x01\x1f\x7f bytes",
    "scripts: 日本語のテキスト, русский текст, العربية, हिन्दी, ελληνικά",
    "code: def f(x):\n    return x**2  # comment\n",
    "punctuation!!! ??? ... --- ((()))",
    "<|endoftext|> is ordinary text here",
    "a" * 300,
]


def test_merge_and_pair_counts():
    assert merge([1, 2, 3, 1, 2, 2], (1, 2), 9) == [9, 3, 9, 2]
    assert merge([5, 5, 5], (5, 5), 7) == [7, 5]  # left to right, no overlaps
    assert merge([], (1, 2), 3) == []
    assert pair_counts([1, 2, 1, 2]) == {(1, 2): 2, (2, 1): 1}


def test_training_learns_the_most_frequent_pairs_first():
    bpe = train_bpe(["aaab aaab aaab xy"], 259, progress=False)
    assert bpe.vocab[256] == b"aa"  # "aa" is the most frequent pair
    assert len(bpe) == 259 and len(bpe.merges) == 3
    assert bpe.encode(" aaab") == bpe.encode(" aaab")
    assert len(bpe.encode("aaab")) < 4


def test_training_is_deterministic_and_stops_when_nothing_repeats():
    texts = ["the cat sat on the mat", "the dog sat on the log"]
    a, b = train_bpe(texts, 300, progress=False), train_bpe(texts, 300, progress=False)
    assert a.merges == b.merges
    assert len(a) < 300  # ran out of pairs occurring twice


@pytest.fixture(scope="module")
def trained() -> BytePairEncoding:
    return train_bpe(HARD, 400, progress=False)


@pytest.mark.parametrize("text", HARD + ["lone surrogates \ud800 and \udfff in a Python string"])
def test_trained_bpe_round_trips_any_text(trained, text):
    assert trained.decode(trained.encode(text)) == text


def test_clear_cache_forgets_encoded_chunks_but_not_the_ids(trained):
    ids = trained.encode("the cat sat on the mat")
    assert trained._cache  # encoding filled it
    trained.clear_cache()
    assert not trained._cache and trained.encode("the cat sat on the mat") == ids


def test_bad_vocab_size_and_unknown_ids():
    with pytest.raises(ValueError, match="at least 256"):
        train_bpe(["x"], 100)
    bpe = BytePairEncoding({}, {i: bytes([i]) for i in range(256)})
    with pytest.raises(ValueError, match="not in this vocabulary"):
        bpe.decode([999])
    assert bpe.decode([0xE6]) == "\ufffd"  # half a character decodes to U+FFFD


@pytest.fixture
def gpt2(mirror):
    return gpt2_tokenizer(), tiktoken_gpt2()  # both built once per process


def test_gpt2_ids_equal_tiktoken(gpt2):
    ours, theirs = gpt2
    for text in HARD:
        assert ours.encode(text) == theirs.encode_ordinary(text), text
        assert ours.decode(ours.encode(text)) == text
    assert ours.encode("Hello world") == [15496, 995]
    assert ours.decode([50256]) == "<|endoftext|>"
    assert len(ours) == theirs.n_vocab == 50_257


def test_gpt2_on_real_reviews_equals_tiktoken(gpt2, mirror):
    from fromscratch.data.imdb import load_imdb

    ours, theirs = gpt2
    reviews = load_imdb(100, 8, train_reviews=40, test_reviews=2).train
    for i in range(len(reviews)):
        text = reviews.text(i)
        assert ours.encode(text) == theirs.encode_ordinary(text)


def test_gpt2_keeps_lone_surrogates_where_tiktoken_replaces_them(gpt2):
    ours, theirs = gpt2
    text = "a\ud83dz"
    assert ours.decode(ours.encode(text)) == text
    assert theirs.decode(theirs.encode_ordinary(text)) == "a\ufffdz"


def test_corrupt_pretrained_file_raises_a_hash_error(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "gpt2-bpe").mkdir(parents=True)
    (mirror / "gpt2-bpe" / "gpt2-encoder.json").write_text("{}")
    (mirror / "SHA256SUMS").write_text(f"{GPT2_ENCODER.sha256}  gpt2-bpe/gpt2-encoder.json\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    with pytest.raises(DataError, match="corrupt"):
        fetch(GPT2_ENCODER)


def test_unmirrored_weights_fail_fast_offline(empty_data_env, monkeypatch):
    monkeypatch.setattr("fromscratch.data.pretrained.online", lambda url, timeout=3.0: False)
    with pytest.raises(DataError, match="cannot be reached"):
        fetch_online(GPT2_124M)
