"""The enwik8 loader (chapter 07): the mirror's prefix, a small archive in the canonical layout,
the prefix warning, split offsets, and random subsequence batches. Offline: nothing is downloaded."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
import torch

from fromscratch.chapters import get_profile
from fromscratch.data import DataError, DataFile, enwik8
from fromscratch.data.registry import REGISTRY


def make_archive(folder: Path, fname: str, content: bytes) -> Path:
    """A zip with the one member ``enwik8``, as enwik8.zip is laid out; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / fname
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("enwik8", content)
    return path


@pytest.fixture
def small_mirror(tmp_path, monkeypatch):
    """A temporary mirror serving a 2,000-byte "full" file and a 1,000-byte prefix of it, both registered."""
    content = bytes(torch.randint(0, 256, (2000,), generator=torch.Generator().manual_seed(0)).tolist())
    mirror = tmp_path / "mirror"
    full = make_archive(mirror / "enwik8", "tiny-enwik8.zip", content)
    prefix = make_archive(mirror / "enwik8", "tiny-enwik8-prefix.zip", content[:1000])
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  enwik8/{p.name}" for p in (full, prefix)]
    (mirror / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path / "cache"))
    for name, fname in [
        ("tiny-enwik8", full.name),
        ("tiny-enwik8-prefix", prefix.name),
        ("tiny-missing", "not-in-the-mirror.zip"),
    ]:
        monkeypatch.setitem(REGISTRY, name, DataFile(name=name, url=None, sha256=None, fname=fname))
    return content


def test_mirror_prefix_is_used_for_the_smoke_profile_and_says_so(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path / "cache"))  # unpack into a fresh cache
    data_bytes = get_profile("smoke").ch07.data_bytes
    assert data_bytes <= enwik8.PREFIX_BYTES
    with pytest.warns(enwik8.PrefixWarning, match="NOT the standard split"):
        data = enwik8.load(data_bytes, progressbar=False)
    assert data.source == "enwik8-prefix-1000000" and not data.standard_split
    assert "NOT the standard split" in repr(data) and "NOT the standard split" in data.note
    assert data.offsets == {"train": (0, 900_000), "val": (900_000, 950_000), "test": (950_000, 1_000_000)}
    assert data.train.dtype == torch.uint8 and data.train.shape == (900_000,)
    assert data.val.shape == (50_000,) and data.test.shape == (50_000,)
    assert bytes(data.train[:10].tolist()) == b"<mediawiki"


def test_standard_split_cuts_the_full_file_at_fixed_offsets(small_mirror):
    data = enwik8.load(None, dataset="tiny-enwik8", prefix=None, split=(1800, 100, 100), progressbar=False)
    assert data.standard_split and data.source == "tiny-enwik8"
    assert data.offsets == {"train": (0, 1800), "val": (1800, 1900), "test": (1900, 2000)}
    assert bytes(data.train.tolist()) == small_mirror[:1800]
    assert bytes(data.val.tolist()) == small_mirror[1800:1900]
    assert bytes(data.test.tolist()) == small_mirror[1900:]
    assert "standard split" in repr(data) and "NOT" not in repr(data)
    assert enwik8.standard_offsets() == {
        "train": (0, 90_000_000),
        "val": (90_000_000, 95_000_000),
        "test": (95_000_000, 100_000_000),
    }


def test_a_file_of_the_wrong_length_is_not_taken_for_the_full_enwik8(small_mirror):
    with pytest.raises(DataError, match="not the full file"):
        enwik8.load(None, dataset="tiny-enwik8", prefix=None, progressbar=False)  # 2,000 bytes, not 100M


def load_with_tiny_prefix(data_bytes: int | None, dataset: str, **options) -> enwik8.Enwik8:
    """``data_bytes`` of the tiny mirror's "full" file ``dataset`` (2,000 bytes) or of its 1,000-byte
    prefix.
    """
    return enwik8.load(
        data_bytes,
        dataset=dataset,
        prefix="tiny-enwik8-prefix",
        prefix_bytes=1000,
        split=(1800, 100, 100),
        progressbar=False,
        **options,
    )


def test_prefix_preferred_when_it_holds_enough_and_split_in_proportion(small_mirror):
    with pytest.warns(enwik8.PrefixWarning):
        data = load_with_tiny_prefix(800, dataset="tiny-missing")
    assert data.source == "tiny-enwik8-prefix" and not data.standard_split
    assert data.offsets == {"train": (0, 720), "val": (720, 760), "test": (760, 800)}
    assert bytes(torch.cat([data.train, data.val, data.test]).tolist()) == small_mirror[:800]
    assert enwik8.proportional_offsets(1_000_000)["val"] == (900_000, 950_000)


def test_more_than_the_prefix_needs_the_full_file(small_mirror):
    with pytest.warns(enwik8.PrefixWarning):  # the full file serves a longer prefix, still not standard
        data = load_with_tiny_prefix(1500, dataset="tiny-enwik8")
    assert data.source == "tiny-enwik8" and data.offsets["test"] == (1425, 1500)
    with pytest.raises(DataError, match="FROMSCRATCH_MIRROR") as error:
        enwik8.load(
            1500, dataset="tiny-missing", prefix="tiny-enwik8-prefix", prefix_bytes=1000, progressbar=False
        )
    assert "data_bytes <= 1,000" in str(error.value)  # says a short run could use the prefix
    with pytest.raises(ValueError, match="positive"):
        enwik8.load(0, dataset="tiny-enwik8")


def test_random_subsequences_are_next_byte_pairs_and_seeded():
    data = torch.arange(200, dtype=torch.uint8)
    batches = enwik8.RandomSubsequences(data, context=16, batch_size=4, seed=3, num_batches=5)
    first = list(batches)
    assert len(first) == len(batches) == 5
    for x, y in first:
        assert x.shape == y.shape == (4, 16) and x.dtype == torch.long
        torch.testing.assert_close(y[:, :-1], x[:, 1:])
        torch.testing.assert_close(x[:, 1:] - x[:, :-1], torch.ones(4, 15, dtype=torch.long))  # contiguous
        assert int(y.max()) <= 199
    again = list(batches)
    assert all(
        torch.equal(a[0], b[0]) for a, b in zip(first, again, strict=True)
    )  # a fresh, identical stream
    other = next(iter(enwik8.RandomSubsequences(data, context=16, batch_size=4, seed=4)))
    assert not torch.equal(other[0], first[0][0])
    with pytest.raises(ValueError, match="too few"):
        enwik8.RandomSubsequences(data[:10], context=16, batch_size=4)


def test_fallback_to_the_prefix_only_when_asked_and_loudly(small_mirror):
    with pytest.raises(DataError):
        load_with_tiny_prefix(None, dataset="tiny-missing")
    with pytest.warns(enwik8.PrefixWarning, match="full file could not be had"):
        data = load_with_tiny_prefix(None, dataset="tiny-missing", fallback_to_prefix=True)
    assert data.source == "tiny-enwik8-prefix" and not data.standard_split
    assert bytes(data.train.tolist()) == small_mirror[:900]
