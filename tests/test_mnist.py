"""MNIST and Fashion-MNIST (chapter 13): IDX files read by hand, registered, found in the mirror."""

from __future__ import annotations

import gzip
import struct
from dataclasses import replace

import numpy as np
import pytest
import torch

from fromscratch.data import mnist, registry
from fromscratch.data.registry import DataError

UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: refused at once, nothing leaves the machine


def write_idx(path, array: np.ndarray) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}i", *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_read_idx_reads_images_and_labels(tmp_path):
    images = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    write_idx(tmp_path / "images.gz", images)
    write_idx(tmp_path / "labels.gz", np.array([7, 1, 0]))
    assert (tmp_path / "images.gz").stat().st_size > 0
    np.testing.assert_array_equal(mnist.read_idx(tmp_path / "images.gz"), images)
    np.testing.assert_array_equal(mnist.read_idx(tmp_path / "labels.gz"), [7, 1, 0])


def test_read_idx_refuses_other_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"PK\x03\x04 not an idx file")
    with pytest.raises(DataError, match="not an IDX file"):
        mnist.read_idx(tmp_path / "bad")
    with gzip.open(tmp_path / "short.gz", "wb") as f:
        f.write(bytes([0, 0, 8, 1]) + struct.pack(">i", 10) + bytes(3))  # says 10 labels, holds 3
    with pytest.raises(DataError, match="truncated"):
        mnist.read_idx(tmp_path / "short.gz")


def test_every_file_is_registered_with_its_canonical_url_and_official_hash():
    for name in mnist.DATASETS:
        for part, data_file in mnist.FILES[name].items():
            assert registry.lookup(data_file.name) is data_file
            assert data_file.url.endswith(f"/{part}.gz") and len(data_file.sha256) == 64
    assert mnist.FILES["mnist"]["train-images-idx3-ubyte"].url.startswith("https://ossci-datasets.s3")
    names = [f.fname for files in mnist.FILES.values() for f in files.values()]
    assert len(set(names)) == 8, "MNIST's and Fashion-MNIST's files must not share a name in the cache"


def test_missing_file_offline_is_the_registrys_clear_error(empty_data_env):
    data_file = replace(mnist.FILES["mnist"]["t10k-labels-idx1-ubyte"], url=UNREACHABLE + "t10k.gz")
    with pytest.raises(DataError) as error:
        mnist.fetch_part(data_file, progressbar=False)
    for needed in ("mnist-t10k-labels-idx1-ubyte.gz", str(empty_data_env), "FROMSCRATCH_MIRROR"):
        assert needed in str(error.value)


def test_the_mirror_is_searched_by_folder_so_the_two_datasets_stay_apart(mirror, monkeypatch, empty_data_env):
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(mirror))
    digit = mnist.fetch_part(mnist.FILES["mnist"]["t10k-labels-idx1-ubyte"], progressbar=False)
    fashion = mnist.fetch_part(mnist.FILES["fashion-mnist"]["t10k-labels-idx1-ubyte"], progressbar=False)
    assert digit == mirror / "mnist" / "t10k-labels-idx1-ubyte.gz"
    assert fashion == mirror / "fashion-mnist" / "t10k-labels-idx1-ubyte.gz"
    assert registry.sha256sum(digit) == mnist.FILES["mnist"]["t10k-labels-idx1-ubyte"].sha256  # official


def test_a_corrupt_mirror_copy_is_refused(tmp_path, monkeypatch, empty_data_env):
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").write_bytes(b"tampered")
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  mnist/t10k-labels-idx1-ubyte.gz\n")
    monkeypatch.setenv("FROMSCRATCH_MIRROR", str(tmp_path))
    with pytest.raises(DataError, match="corrupt"):
        mnist.fetch_part("mnist-t10k-labels-idx1-ubyte", progressbar=False)


@pytest.fixture(scope="module")
def digits():
    import os

    if not os.environ.get("FROMSCRATCH_MIRROR"):
        pytest.skip("set FROMSCRATCH_MIRROR to a directory with the course datasets (CI: ../shared/data)")
    return mnist.load("mnist", progressbar=False)


def test_load_gives_the_published_split(digits):
    assert digits.train_images.shape == (60_000, 28, 28) and digits.train_images.dtype == torch.uint8
    assert digits.test_images.shape == (10_000, 28, 28)
    assert digits.train_labels.dtype == torch.int64 and digits.test_labels.shape == (10_000,)
    assert digits.train_labels[:8].tolist() == [5, 0, 4, 1, 9, 2, 1, 3]  # the first training digits
    assert torch.bincount(digits.test_labels).tolist()[:3] == [980, 1135, 1032]
    with pytest.raises(ValueError, match="fashion-mnist"):
        mnist.load("kmnist")


def test_fashion_mnist_has_its_own_files(mirror):
    fashion = mnist.load("fashion-mnist", progressbar=False)
    assert fashion.train_labels[:4].tolist() == [9, 0, 0, 3] and fashion.classes[9] == "boot"
    assert torch.bincount(fashion.test_labels).tolist() == [1000] * 10


def test_image_batches_cover_the_data_once_per_pass():
    images = torch.arange(10, dtype=torch.uint8)[:, None, None].expand(10, 4, 4)
    labels = torch.arange(10)
    batches = list(mnist.ImageBatches(images, labels, batch_size=3))
    assert len(batches) == 3  # the last incomplete batch is dropped
    x, y = batches[0]
    assert x.shape == (3, 1, 4, 4) and x.dtype == torch.float32
    torch.testing.assert_close(x[:, 0, 0, 0] * 255, y.float())  # labels stay with their images
    assert len(torch.cat([y for _, y in batches]).unique()) == 9


def test_shifted_images_move_without_changing_content():
    images = torch.zeros(50, 8, 8, dtype=torch.uint8)
    images[:, 3:5, 3:5] = 255
    x, _ = next(iter(mnist.ImageBatches(images, torch.zeros(50, dtype=torch.long), 50, shift=2)))
    assert torch.all(x.sum(dim=(1, 2, 3)) == 4)  # the square is moved, never cut (it stays inside)
    assert len({tuple(torch.nonzero(img[0])[0].tolist()) for img in x}) > 1


def test_odd_one_out_sets_have_one_digit_of_another_class(digits):
    generator = torch.Generator().manual_seed(0)
    images, labels = digits.test_images, digits.test_labels
    sets, odd, place = mnist.odd_one_out(images, labels, 50, set_size=10, generator=generator)
    assert sets.shape == (50, 10, 28, 28) and odd.shape == (50,)
    lookup = {img.numpy().tobytes(): int(lab) for img, lab in zip(images[:10_000], labels, strict=True)}
    for one_set, answer, where in zip(sets, odd, place, strict=True):
        classes = torch.tensor([lookup[img.numpy().tobytes()] for img in one_set])
        assert (classes == answer).sum() == 1 and len(classes.unique()) == 2 and classes[where] == answer
    x, y = next(iter(mnist.OddOneOutBatches(images, labels, 4, set_size=5)))
    assert x.shape == (4, 5, 784) and y.shape == (4,) and 0 <= float(x.min()) <= float(x.max()) <= 1
