"""Multi30k (chapter 09): the mirror's archive, a small archive in the same layout, the official .gz
files, missing data offline, the BPE tokenizer, batches for teacher forcing, the translation loss."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile

import pytest
import torch

from fromscratch.data import multi30k as m30k
from fromscratch.data.multi30k import (
    TokenBatches,
    collate,
    encode_pairs,
    load_multi30k,
)
from fromscratch.data.multi30k_tokenizer import TOKENIZER_VERSION, multi30k_tokenizer
from fromscratch.data.registry import DataError
from fromscratch.models import EncoderDecoder
from fromscratch.tokenizers.special import BOS, EOS, PAD, SPECIAL_TOKENS
from fromscratch.training.losses import translation_loss

TINY = {
    "train": (
        ["A cat danced.", "Two dogs run.", "A man sings."],
        ["Eine Katze tanzte.", "Zwei Hunde rennen.", "Ein Mann singt."],
    ),
    "val": (["A dog."], ["Ein Hund."]),
    "test_2016_flickr": (["The cat danced."], ["Die Katze tanzte."]),
}


def tiny_files() -> dict[str, bytes]:
    files = {}
    for stem, (en, de) in TINY.items():
        files[f"{stem}.en"] = ("\n".join(en) + "\n").encode()
        files[f"{stem}.de"] = ("\n".join(de) + "\n").encode()
    return files


@pytest.fixture
def tiny_mirror(tmp_path, monkeypatch):
    """A mirror holding a small ``multi30k-task1-raw.tar.gz`` with six flat members, like the real one."""
    mirror = tmp_path / "mirror"
    (mirror / "multi30k").mkdir(parents=True)
    archive = mirror / "multi30k" / "multi30k-task1-raw.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, data in tiny_files().items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (mirror / "SHA256SUMS").write_text(f"{digest}  multi30k/multi30k-task1-raw.tar.gz\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path / "cache"))
    return archive


def test_the_mirror_archive_has_the_official_splits(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path / "cache"))
    data = load_multi30k()
    assert (len(data.train), len(data.val), len(data.test)) == (29_000, 1_014, 1_000)
    assert data.test[0] == (
        "A man in an orange hat starring at something.",
        "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
    )
    assert "29,000" in repr(data)


def test_a_small_archive_in_the_same_layout_loads(tiny_mirror):
    data = load_multi30k()
    assert data.train == list(zip(*TINY["train"], strict=True))
    assert data.test == [("The cat danced.", "Die Katze tanzte.")]


def test_a_corrupt_mirror_copy_is_refused(tiny_mirror):
    tiny_mirror.write_bytes(tiny_mirror.read_bytes()[:-10])
    with pytest.raises(DataError, match="corrupt"):
        load_multi30k()


def test_the_six_official_gz_files_in_the_cache_are_used_when_md5s_match(empty_data_env, monkeypatch):
    folder = empty_data_env / "multi30k-official"
    folder.mkdir(parents=True)
    md5s = {}
    for name, data in tiny_files().items():
        packed = gzip.compress(data)
        (folder / f"{name}.gz").write_bytes(packed)
        md5s[f"{name}.gz"] = hashlib.md5(packed).hexdigest()
    monkeypatch.setattr(m30k, "OFFICIAL_MD5", md5s)
    assert load_multi30k().val == [("A dog.", "Ein Hund.")]


def test_missing_data_offline_raises_the_registry_error(empty_data_env, monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    import pooch  # the loader imports it where it downloads

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(DataError, match="FROMSCRATCH_MIRROR"):
        load_multi30k()


# --- the tokenizer -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_tokenizer(tmp_path_factory):
    """A 1,000-token BPE trained on the real training split (skipped without the mirror)."""
    import os

    if not os.environ.get("FROMSCRATCH_MIRROR"):
        pytest.skip("set FROMSCRATCH_MIRROR to the course datasets")
    patch = pytest.MonkeyPatch()
    patch.setenv("FROMSCRATCH_DATA", str(tmp_path_factory.mktemp("cache")))
    data = load_multi30k()
    tokenizer = multi30k_tokenizer(1000, data)
    yield tokenizer, data
    patch.undo()


def test_tokenizer_round_trips_the_test_set_and_has_the_special_tokens(real_tokenizer):
    tokenizer, data = real_tokenizer
    assert [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == list(range(len(SPECIAL_TOKENS)))
    assert (PAD, BOS, EOS) == (0, 3, 4)
    assert tokenizer.get_vocab_size() == 1000
    for en, de in data.test:
        assert tokenizer.decode(tokenizer.encode(en).ids) == en
        assert tokenizer.decode(tokenizer.encode(de).ids) == de
    strange = "naïve 🐱 → Straße ✓"
    assert tokenizer.decode(tokenizer.encode(strange).ids) == strange  # bytes: no character is unknown


def test_tokenizer_is_cached_and_reloaded(tmp_path, monkeypatch, tiny_mirror):
    first = multi30k_tokenizer(300)
    files = list((tmp_path / "cache" / "tokenizers").iterdir())
    assert [f.name for f in files] == [f"multi30k-bpe300-v{TOKENIZER_VERSION}.json"]
    second = multi30k_tokenizer(300)
    assert first.get_vocab() == second.get_vocab()
    with pytest.raises(ValueError, match="at least 300"):
        multi30k_tokenizer(100)


# --- batches and the loss ------------------------------------------------------------------------------
def test_batches_cover_every_pair_once_within_the_token_budget(tiny_mirror):
    data = load_multi30k()
    tokenizer = multi30k_tokenizer(300)
    pairs = encode_pairs(data.train * 20, tokenizer)
    assert pairs.tgt[0][0] == BOS and pairs.tgt[0][-1] == EOS
    batches = TokenBatches(pairs, max_tokens=60, seed=0)
    seen = torch.cat(batches.batches()).sort().values
    assert torch.equal(seen, torch.arange(len(pairs)))
    assert len(batches) == len(batches.batches())
    for batch in batches:
        b, ts = batch["src"].shape
        assert b * (ts + batch["tgt_in"].size(1) + 1) <= 60 or b == 1
        assert torch.equal(
            batch["tgt_in"][:, 1:],
            batch["tgt_out"][:, :-1].masked_fill(~batch["tgt_padding_mask"][:, 1:], PAD),
        )


def two_pairs() -> dict[str, torch.Tensor]:
    """Two sentence pairs collated: sources of 3 and 1 tokens, targets ``<s> 11 12 </s>``, ``<s> 13 </s>``."""
    targets = [torch.tensor([BOS, 11, 12, EOS]), torch.tensor([BOS, 13, EOS])]
    return collate([torch.tensor([7, 8, 9]), torch.tensor([5])], targets)


def test_collate_shifts_targets_for_teacher_forcing():
    batch = two_pairs()
    assert batch["src"].tolist() == [[7, 8, 9], [5, 0, 0]]
    assert batch["src_padding_mask"].tolist() == [[True] * 3, [True, False, False]]
    # the second row reads </s> at its last position, where tgt_out is padding: that prediction is not scored
    assert batch["tgt_in"].tolist() == [[BOS, 11, 12], [BOS, 13, EOS]]
    assert batch["tgt_out"].tolist() == [[11, 12, EOS], [13, EOS, PAD]]
    assert batch["tgt_padding_mask"].tolist() == [[True] * 3, [True, True, False]]


def test_translation_loss_ignores_padding_and_smooths_labels():
    torch.manual_seed(0)
    sizes = dict(emb=8, heads=2, encoder_depth=1, decoder_depth=1, dropout=0.0, context=10)
    model = EncoderDecoder(src_vocab_size=20, tgt_vocab_size=20, **sizes)
    batch = two_pairs()
    plain = translation_loss(model, batch, label_smoothing=0.0)
    logits = model(batch["src"], batch["tgt_in"], batch["src_padding_mask"])
    real = batch["tgt_padding_mask"]
    expected = torch.nn.functional.cross_entropy(logits[real], batch["tgt_out"][real])
    torch.testing.assert_close(plain, expected)
    # smoothing 0.1: the target is 90% the right token and 10% spread evenly over all V tokens
    spread = -torch.log_softmax(logits[real], dim=-1).mean(-1).mean()  # cross-entropy against uniform
    torch.testing.assert_close(translation_loss(model, batch), 0.9 * plain + 0.1 * spread)
