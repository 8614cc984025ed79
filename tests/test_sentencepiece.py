"""Our sentencepiece-style BPE (chapter 14) equals the ``sentencepiece`` package with tok512.model, and
special tokens in our GPT-2 BPE are kept whole when allowed, as ``tiktoken`` does."""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest

from fromscratch.interop.llama2c import STORIES260K_GREEDY_200
from fromscratch.tokenizers.sentencepiece import SP_BOS, SP_EOS, SentencePieceBPE, read_llama2c_tokenizer

# the chapter's texts, then the hard cases: whitespace runs, digits, characters outside the vocabulary
CHAPTER_TEXTS = [
    "Once upon a time, there was a little girl named Lily.",
    "The cat sat on the mat.",
    "Tom and his dog went to the park to play.",
    STORIES260K_GREEDY_200,
]
HARD_CASES = [
    "",
    " ",
    "   ",
    "  two  spaces  ",
    "a\tb\t\tc",
    "line one\n\nline two\n",
    " \n leading newline",
    "I have 3 cats and 12,345 fish; 2024-01-31.",
    "0123456789",
    "café, naïve, Ærø",
    "☃ snow, 日本語, 😀 emoji, e\u0301 (a combining accent)",
    "\x00\x01 control bytes",
    "<s> and </s> and <unk> typed as text",
    "\u2581 a typed space mark \u2581\u2581",
    "\u00a0non-breaking\u3000ideographic space",
    "x" * 300,
]


@pytest.fixture(scope="module")
def shared() -> Path:
    path = os.environ.get("FROMSCRATCH_MIRROR")
    if not path or not (Path(path) / "tinyllamas" / "tok512.bin").is_file():
        pytest.skip("set FROMSCRATCH_MIRROR to the course's data mirror (CI: ../shared/data)")
    return Path(path) / "tinyllamas"


@pytest.fixture(scope="module")
def ours(shared) -> SentencePieceBPE:
    return read_llama2c_tokenizer(shared / "tok512.bin")


@pytest.fixture(scope="module")
def theirs(shared):
    spm = pytest.importorskip("sentencepiece")
    return spm.SentencePieceProcessor(model_file=str(shared / "tok512.model"))


def test_the_vocabulary_is_theirs(ours, theirs):
    assert len(ours) == theirs.vocab_size() == 512
    assert ours.pieces == [theirs.id_to_piece(i) for i in range(512)]
    assert ours.scores == pytest.approx([theirs.get_score(i) for i in range(512)])
    assert (SP_BOS, SP_EOS) == (theirs.bos_id(), theirs.eos_id()) == (1, 2)


@pytest.mark.parametrize("text", CHAPTER_TEXTS + HARD_CASES)
def test_encoding_and_decoding_equal_sentencepiece(ours, theirs, text):
    expected = theirs.encode(text)
    assert ours.encode(text, bos=False) == expected
    assert ours.encode(text) == [SP_BOS, *expected]
    assert ours.encode(text, bos=True, eos=True) == [SP_BOS, *expected, SP_EOS]
    assert ours.decode(ours.encode(text)) == theirs.decode(expected)


def test_random_strings_equal_sentencepiece(ours, theirs):
    rng = random.Random(0)
    alphabet = " \t\n abcdefghijklmnopqrstuvwxyzLT0123456789.,!?'\"-éü☃日😀\u2581\u00a0\u200a"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert ours.encode(text, bos=False) == theirs.encode(text), repr(text)
    for _ in range(500):  # any ids, byte tokens cut mid-character included (one U+FFFD per bad byte)
        ids = [rng.randrange(1, 512) for _ in range(rng.randint(0, 12))]
        assert ours.decode(ids) == theirs.decode(ids), ids


def test_text_outside_the_vocabulary_falls_back_to_bytes(ours):
    ids = ours.encode("☃", bos=False)
    assert ours.token_strings(ids) == ["▁", "<0xE2>", "<0x98>", "<0x83>"]
    assert ours.decode(ids) == "☃"
    assert ours.merge_steps("the")[0] == ["▁", "t", "h", "e"] and ours.merge_steps("the")[-1] == ["▁the"]


def test_bad_ids_and_bad_files_are_clear_errors(ours, tmp_path):
    with pytest.raises(ValueError, match="512"):
        ours.decode([512])
    cut = tmp_path / "cut.bin"
    cut.write_bytes(struct.pack("<ifi", 7, 0.0, 30) + b"abc")
    with pytest.raises(ValueError, match="claims 30 bytes"):
        read_llama2c_tokenizer(cut)


# --- GPT-2's BPE: special tokens -------------------------------------------------------------------
@pytest.fixture(scope="module")
def gpt2(shared):
    from fromscratch.data.pretrained import gpt2_tokenizer, tiktoken_gpt2

    return gpt2_tokenizer(), tiktoken_gpt2()


@pytest.mark.parametrize(
    "text", ["Hello<|endoftext|>world", "<|endoftext|><|endoftext|>", "a <|endoftext|> b <|endoftext", ""]
)
def test_gpt2_special_tokens_are_kept_whole_only_when_allowed(gpt2, text):
    ours, tiktoken = gpt2
    assert ours.encode(text, allowed_special="all") == tiktoken.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special={"<|endoftext|>"}) == tiktoken.encode(
        text, allowed_special="all"
    )
    assert ours.encode(text) == tiktoken.encode_ordinary(text)


def test_the_longest_special_token_wins():
    from fromscratch.tokenizers import BytePairEncoding

    vocab = {i: bytes([i]) for i in range(256)}
    bpe = BytePairEncoding({}, vocab, special={"<|a|>": 256, "<|a|><|b|>": 257})
    assert bpe.encode("x<|a|><|b|>y", allowed_special="all") == [ord("x"), 257, ord("y")]
    assert bpe.encode("x<|a|><|b|>", allowed_special={"<|a|>"})[:2] == [ord("x"), 256]
    with pytest.raises(ValueError, match="not special tokens"):
        bpe.encode("x", allowed_special={"<|c|>"})
