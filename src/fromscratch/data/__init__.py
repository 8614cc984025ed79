"""Datasets of the course: a checked download registry and one loader module per dataset.

``registry`` (where each file comes from), ``movielens`` (chapter 01), ``text`` (words to ids) and
``batching`` (padded, length-bucketed batches) used by ``imdb`` (chapter 06), ``enwik8`` (chapter 07), and
``verifiable`` and ``verifiers`` (chapter 17: problems a program can check, and their rewards).

Only the registry is imported with the package; each loader (and the libraries it needs) when it is
first used: ``fromscratch.data.mnist``, or a name below such as ``fromscratch.data.MULTI30K``.
"""

import importlib

from fromscratch.data.registry import (
    ACL_IMDB,
    ENWIK8,
    ENWIK8_PREFIX,
    MOVIELENS_100K,
    REGISTRY,
    DataError,
    DataFile,
    cache_dir,
    extract,
    fetch,
    lookup,
    register,
)

_LATER = {  # name -> (module, its name there): imported on first use
    "MNIST_FILES": ("fromscratch.data.mnist", "FILES"),  # chapter 13: MNIST, Fashion-MNIST
    "MULTI30K": ("fromscratch.data.multi30k", "MULTI30K"),  # chapter 09: the Multi30k archive
    "PRETRAINED": ("fromscratch.data.pretrained", "PRETRAINED"),  # chapter 10: GPT-2's BPE, MiniLM, GPT-2
}


def __getattr__(name: str):
    """A loader's registered files, or a loader module, imported when first asked for."""
    if name in _LATER:
        module, attribute = _LATER[name]
        return getattr(importlib.import_module(module), attribute)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


__all__ = [
    "ACL_IMDB",
    "ENWIK8",
    "ENWIK8_PREFIX",
    "MOVIELENS_100K",
    "MNIST_FILES",
    "MULTI30K",
    "PRETRAINED",
    "REGISTRY",
    "DataError",
    "DataFile",
    "cache_dir",
    "extract",
    "fetch",
    "lookup",
    "register",
]
