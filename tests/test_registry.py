"""The dataset registry on small archives made here in the canonical layouts (no network)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from fromscratch.data import registry
from fromscratch.data.registry import (
    ACL_IMDB,
    ENWIK8,
    ENWIK8_PREFIX,
    MOVIELENS_100K,
    DataError,
    DataFile,
    extract,
    fetch,
    lookup,
)

UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: refused at once, nothing leaves the machine


def make_zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_tar(path: Path, members: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def tiny(tmp_path, empty_data_env, monkeypatch):
    """A mirror holding a tiny ml-100k-shaped zip, and a DataFile whose URL cannot be reached."""
    mirror = tmp_path / "mirror"
    (mirror / "tiny").mkdir(parents=True)
    digest = make_zip(mirror / "tiny" / "tiny.zip", {"tiny/u.data": b"1\t1\t5\t881250949\n"})
    (mirror / "SHA256SUMS").write_text(f"{digest}  tiny/tiny.zip\n")
    dataset = DataFile("tiny", UNREACHABLE + "tiny.zip", "0" * 64, "tiny.zip")
    return dataset, mirror, digest


def test_mirror_hit_is_used_without_network(tiny, monkeypatch):
    dataset, mirror, _ = tiny
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    assert fetch(dataset, progressbar=False) == mirror / "tiny" / "tiny.zip"
    root = extract(dataset, progressbar=False)
    assert (root / "tiny" / "u.data").read_bytes().startswith(b"1\t1\t5")
    assert root.parent.parent == registry.cache_dir()


def test_extract_happens_once(tiny, monkeypatch):
    dataset, mirror, _ = tiny
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    root = extract(dataset, progressbar=False)
    marker = root / "tiny" / "u.data"
    marker.write_bytes(b"changed")
    assert extract(dataset, progressbar=False) == root
    assert marker.read_bytes() == b"changed", "a second call must reuse the extracted copy"
    assert not [p for p in root.parent.iterdir() if p.name.startswith(".")], "no temporary directory left"


def test_tar_archives_are_extracted_too(tmp_path, empty_data_env, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    digest = make_tar(mirror / "reviews.tar.gz", {"aclImdb/train/pos/0_9.txt": b"great"})
    (mirror / "SHA256SUMS").write_text(f"{digest}  reviews.tar.gz\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    root = extract(DataFile("reviews", None, None, "reviews.tar.gz"), progressbar=False)
    assert (root / "aclImdb" / "train" / "pos" / "0_9.txt").read_text() == "great"


def test_corrupt_mirror_copy_is_refused(tiny, monkeypatch):
    dataset, mirror, _ = tiny
    (mirror / "tiny" / "tiny.zip").write_bytes(b"not the archive the sums describe")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    with pytest.raises(DataError, match="corrupt"):
        fetch(dataset, progressbar=False)


def test_corrupt_cached_download_is_never_used(tiny, empty_data_env):
    dataset, _, _ = tiny
    empty_data_env.mkdir(parents=True)
    (empty_data_env / "tiny.zip").write_bytes(b"half a download")  # hash differs from the official one
    with pytest.raises(DataError) as error:
        fetch(dataset, progressbar=False)  # pooch tries to fetch it again, and the network is not there
    assert "tiny.zip" in str(error.value) and UNREACHABLE in str(error.value)


def test_good_cached_download_is_used_offline(tmp_path, empty_data_env):
    empty_data_env.mkdir(parents=True)
    digest = make_zip(empty_data_env / "cached.zip", {"a.txt": b"x"})
    assert (
        fetch(DataFile("cached", UNREACHABLE + "cached.zip", digest, "cached.zip"), progressbar=False)
        == empty_data_env / "cached.zip"
    )


def test_no_network_and_no_copy_says_what_to_do(tiny, empty_data_env):
    dataset, _, _ = tiny
    with pytest.raises(DataError) as error:
        fetch(dataset, progressbar=False)
    message = str(error.value)
    for needed in (
        "tiny.zip",
        UNREACHABLE + "tiny.zip",
        str(empty_data_env),
        "FROMSCRATCH_MIRROR",
        "FROMSCRATCH_DATA",
    ):
        assert needed in message


def test_mirror_without_the_file_falls_back_to_the_cache(tiny, monkeypatch, empty_data_env):
    _, mirror, _ = tiny
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    empty_data_env.mkdir(parents=True)
    digest = make_zip(empty_data_env / "other.zip", {"a.txt": b"x"})
    assert (
        fetch(DataFile("other", UNREACHABLE, digest, "other.zip"), progressbar=False).parent == empty_data_env
    )


def test_mirror_without_sums_file_is_a_clear_error(tmp_path, monkeypatch, empty_data_env):
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(tmp_path))
    with pytest.raises(DataError, match="SHA256SUMS"):
        fetch("ml-100k", progressbar=False)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(DataError, match="ml-100k"):
        fetch("ml-1m")
    with pytest.raises(DataError, match="aclImdb"):
        lookup("imdb")


def test_lookup_finds_each_registered_file_by_name():
    for data_file in (MOVIELENS_100K, ACL_IMDB, ENWIK8, ENWIK8_PREFIX):
        assert lookup(data_file.name) is data_file and lookup(data_file) is data_file
    assert [f.name for f in (MOVIELENS_100K, ACL_IMDB, ENWIK8)] == ["ml-100k", "aclImdb", "enwik8"]


def test_mirror_only_dataset_without_mirror_says_so(empty_data_env):
    with pytest.raises(DataError, match="only from a mirror"):
        fetch("enwik8-prefix-1000000", progressbar=False)


def test_real_mirror_matches_its_sums(mirror, monkeypatch, empty_data_env):
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    assert fetch("ml-100k", progressbar=False).stat().st_size == 4_923_727


@pytest.fixture
def local_server(tmp_path):
    """A throwaway HTTP server on the loopback interface serving ``tmp_path / "served"``."""
    import functools
    import http.server
    import threading

    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_corrupt_cached_file_is_fetched_again_cleanly(local_server, empty_data_env):
    served, url = local_server
    digest = make_zip(served / "data.zip", {"a.txt": b"the real thing"})
    empty_data_env.mkdir(parents=True)
    (empty_data_env / "data.zip").write_bytes(b"half a download")
    path = fetch(DataFile("data", url + "data.zip", digest, "data.zip"), progressbar=False)
    assert registry.sha256sum(path) == digest


def test_corrupt_download_is_refused_and_not_kept(local_server, empty_data_env):
    served, url = local_server
    make_zip(served / "data.zip", {"a.txt": b"tampered"})
    with pytest.raises(DataError, match="corrupt"):
        fetch(DataFile("data", url + "data.zip", "1" * 64, "data.zip"), progressbar=False)
    assert not (empty_data_env / "data.zip").exists()
