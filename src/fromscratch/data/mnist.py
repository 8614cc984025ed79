"""MNIST and Fashion-MNIST: 70,000 small grey images each, read from the original IDX files (chapter 13).

Both come as four gzipped IDX files (LeCun et al. 1998; Xiao, Rasul & Vollgraf 2017): training and
test images, training and test labels. An IDX file is a header, then raw numbers: two zero bytes,
a type code (``0x08``: unsigned bytes), the number of dimensions, each dimension as a big-endian
int32, then the values, row by row. So an images file has a 16-byte header (magic, count, rows,
columns) and a labels file an 8-byte one (magic, count). :func:`read_idx` reads any of them.

Each file is registered like every dataset (:mod:`fromscratch.data.registry`): its canonical URL and
official sha256, found in the mirror, the cache, or downloaded. The two datasets' files have the
*same names* in different folders (``mnist/train-images-idx3-ubyte.gz`` and
``fashion-mnist/train-images-idx3-ubyte.gz``), so each is registered under a name that says which
(``mnist-train-images-idx3-ubyte.gz``) and the mirror is searched by its folder and file name.

Section 13.1 builds sets of digits from them: :func:`odd_one_out` (all of one class but one) and
:class:`OddOneOutBatches` (fresh sets for every training step).

Shapes: ``n`` images of ``28 x 28`` pixels; ``b`` batch, ``c`` channels (1), ``k`` digits per set.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from fromscratch.data.registry import (
    SUMS_FILE,
    DataError,
    DataFile,
    fetch,
    lookup,
    mirror_dir,
    register,
    sha256sum,
)

__all__ = [
    "DATASETS",
    "FASHION_CLASSES",
    "FILES",
    "ImageBatches",
    "Images",
    "OddOneOutBatches",
    "fetch_part",
    "load",
    "odd_one_out",
    "read_idx",
    "to_float",
]

PARTS = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
URLS = {
    "mnist": "https://ossci-datasets.s3.amazonaws.com/mnist",  # torchvision's mirror of yann.lecun.com
    "fashion-mnist": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com",
}
SHA256 = {  # the official files' (their md5s equal the ones torchvision pins)
    "mnist": (
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
    "fashion-mnist": (
        "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
    ),
}
DESCRIPTIONS = {
    "mnist": "MNIST handwritten digits (LeCun, Cortes & Burges; CC BY-SA 3.0)",
    "fashion-mnist": "Fashion-MNIST clothing images (Xiao, Rasul & Vollgraf 2017; Zalando SE, MIT)",
}
DATASETS = tuple(URLS)
FASHION_CLASSES = (
    "T-shirt",
    "trouser",
    "pullover",
    "dress",
    "coat",
    "sandal",
    "shirt",
    "sneaker",
    "bag",
    "boot",
)

# FILES["mnist"]["train-images-idx3-ubyte"] is the DataFile of that part
FILES: dict[str, dict[str, DataFile]] = {name: {} for name in DATASETS}
MIRROR_PATHS: dict[str, str] = {}  # registry name -> where the mirror keeps the file: <dataset>/<part>.gz
for _name in DATASETS:
    for _part, _digest in zip(PARTS, SHA256[_name], strict=True):
        FILES[_name][_part] = register(
            DataFile(
                name=f"{_name}-{_part}",
                url=f"{URLS[_name]}/{_part}.gz",
                sha256=_digest,
                fname=f"{_name}-{_part}.gz",  # unique in the cache, where both datasets' files lie
                description=f"{DESCRIPTIONS[_name]}: {_part}.gz",
            )
        )
        MIRROR_PATHS[f"{_name}-{_part}"] = f"{_name}/{_part}.gz"


def fetch_part(dataset: DataFile | str, *, progressbar: bool = True) -> Path:
    """A verified local copy of one IDX file (a :class:`DataFile` of :data:`FILES`, or its name).

    The mirror (``$FROMSCRATCH_MIRROR``) is searched for ``<dataset>/<file>`` as its ``SHA256SUMS``
    lists it; otherwise :func:`~fromscratch.data.registry.fetch` looks in the cache or downloads,
    and says what to do when neither works (:class:`DataError`).
    """
    dataset = lookup(dataset)
    mirror = mirror_dir()
    sums = None if mirror is None else mirror / SUMS_FILE
    if sums is not None and sums.is_file():
        wanted = MIRROR_PATHS.get(dataset.name, dataset.fname)
        for line in sums.read_text().splitlines():
            if line.strip() and line.split(maxsplit=1)[1].lstrip("*") == wanted:
                path, digest = mirror / wanted, line.split()[0].lower()
                if not path.is_file():
                    raise DataError(f"{sums} lists {wanted}, but {path} does not exist.")
                if sha256sum(path) != digest:
                    raise DataError(
                        f"The mirror copy {path} is corrupt: its sha256 differs from {sums}. Copy the "
                        f"file again (or delete it to download {dataset.url} instead)."
                    )
                return path
    return fetch(dataset, progressbar=progressbar)


def read_idx(path: str | Path) -> np.ndarray:
    """The array stored in a (gzipped) IDX file: uint8 ``(n, rows, cols)`` images or ``(n,)`` labels."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] != 0x08:
        raise DataError(f"{path} is not an IDX file of unsigned bytes (its first bytes are {data[:4]!r}).")
    ndim = data[3]
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">i4", count=ndim, offset=4))  # big-endian int32
    values = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if values.size != int(np.prod(shape)):
        raise DataError(f"{path} is truncated: its header says {shape}, it holds {values.size:,} values.")
    return values.reshape(shape)


@dataclass(frozen=True)
class Images:
    """One image dataset, split as published: uint8 pixels and int64 labels."""

    name: str  # "mnist" or "fashion-mnist"
    train_images: torch.Tensor  # uint8 (60_000, 28, 28), 0 = background
    train_labels: torch.Tensor  # int64 (60_000,), classes 0-9
    test_images: torch.Tensor  # uint8 (10_000, 28, 28)
    test_labels: torch.Tensor  # int64 (10_000,)
    classes: tuple[str, ...]  # the name of each class


def load(name: str = "mnist", *, progressbar: bool = True) -> Images:
    """MNIST (``"mnist"``) or Fashion-MNIST (``"fashion-mnist"``), all 60,000 + 10,000 images."""
    if name not in FILES:
        raise ValueError(f"name must be one of {', '.join(DATASETS)}; got {name!r}.")
    arrays = [read_idx(fetch_part(FILES[name][part], progressbar=progressbar)) for part in PARTS]
    train_x, train_y, test_x, test_y = (torch.from_numpy(a.copy()) for a in arrays)
    classes = FASHION_CLASSES if name == "fashion-mnist" else tuple(str(d) for d in range(10))
    return Images(name, train_x, train_y.long(), test_x, test_y.long(), classes)


def to_float(images: torch.Tensor) -> torch.Tensor:
    """uint8 pixels ``(b, h, w)`` or ``(b, c, h, w)`` -> what models read: float ``(b, c, h, w)``, 0-1."""
    x = images.float() / 255
    return x[:, None] if x.dim() == 3 else x  # (b, c, h, w)


class ImageBatches:
    """Shuffled mini-batches ``(images (b, 1, h, w) float in [0, 1], labels (b,))`` of an image set.

    Every iteration is one pass in a fresh random order, drawn from PyTorch's global generator when
    the iteration starts (as a ``DataLoader`` does, so ``train(..., resume=True)`` replays it exactly).
    ``shift > 0`` moves each image by up to ``shift`` pixels in each direction (zeros come in at
    the edge): a little augmentation. The last incomplete batch is dropped.
    """

    def __init__(
        self, images: torch.Tensor, labels: torch.Tensor, batch_size: int, *, shift: int = 0
    ) -> None:
        if len(images) != len(labels) or len(images) < batch_size:
            raise ValueError(
                f"need as many labels as images and at least batch_size={batch_size} of them; got "
                f"{len(images)} images and {len(labels)} labels."
            )
        self.images, self.labels, self.batch_size, self.shift = images, labels, batch_size, shift

    def __len__(self) -> int:
        return len(self.images) // self.batch_size

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = torch.randperm(len(self.images))  # (n,)
        for chunk in order[: len(self) * self.batch_size].split(self.batch_size):
            x = to_float(self.images[chunk])  # (b, 1, h, w)
            if self.shift:
                x = _shifted(x, self.shift)
            yield x, self.labels[chunk]


def _shifted(x: torch.Tensor, shift: int) -> torch.Tensor:
    """Each image of ``x (b, c, h, w)`` moved by its own random offset in ``-shift..shift`` per axis."""
    b, _, h, w = x.shape
    padded = torch.nn.functional.pad(x, (shift, shift, shift, shift))  # (b, c, h + 2s, w + 2s)
    dy, dx = torch.randint(0, 2 * shift + 1, (2, b))  # (b,) each: where each crop starts
    rows = (dy[:, None] + torch.arange(h))[:, None, :, None]  # (b, 1, h, 1)
    cols = (dx[:, None] + torch.arange(w))[:, None, None, :]  # (b, 1, 1, w)
    batch = torch.arange(b)[:, None, None, None]  # (b, 1, 1, 1)
    channel = torch.arange(x.size(1))[None, :, None, None]  # (1, c, 1, 1)
    return padded[batch, channel, rows, cols]  # (b, c, h, w)


# --- 13.1: sets of digits, one of them the odd one out ---------------------------------------------
def odd_one_out(
    images: torch.Tensor, labels: torch.Tensor, count: int, *, set_size: int = 10, generator=None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` sets of ``set_size`` digits: all of one class but one, the odd one, at a random place.

    images uint8 ``(n, h, w)``, labels ``(n,)``. Returns uint8 sets ``(count, set_size, h, w)``, the
    class of each set's odd digit ``(count,)`` (the answer a model must give; any order of a set has
    the same answer) and where the odd digit sits ``(count,)`` (for pictures). Digits are drawn with
    ``generator`` (default: PyTorch's global one).
    """
    order = labels.argsort()  # indices of class 0, then class 1, ...
    sizes = torch.bincount(labels, minlength=10)  # (10,)
    starts = sizes.cumsum(0) - sizes  # (10,): where each class begins in `order`
    common = torch.randint(0, 10, (count,), generator=generator)  # (count,): the majority class
    odd = (common + torch.randint(1, 10, (count,), generator=generator)) % 10  # (count,): another class
    classes = common[:, None].repeat(1, set_size)  # (count, k)
    place = torch.randint(0, set_size, (count,), generator=generator)  # (count,): where the odd one sits
    classes[torch.arange(count), place] = odd
    pick = (torch.rand(count, set_size, generator=generator) * sizes[classes]).long()  # (count, k)
    return images[order[starts[classes] + pick]], odd, place  # (count, k, h, w), (count,), (count,)


class OddOneOutBatches:
    """Endless batches ``(sets (b, k, h·w) float in [0, 1], odd (b,))`` of fresh :func:`odd_one_out` sets.

    Each element of a set is a flattened digit; the sets are drawn anew for every batch from PyTorch's
    global generator, so no set is seen twice (there are far more sets than training steps).
    """

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, batch_size: int, *, set_size: int = 10):
        self.images, self.labels, self.batch_size, self.set_size = images, labels, batch_size, set_size

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        while True:
            sets, odd, _ = odd_one_out(self.images, self.labels, self.batch_size, set_size=self.set_size)
            yield sets.flatten(2).float() / 255, odd  # (b, k, h·w), (b,)
