"""Datasets of the course: a checked download registry and one loader module per dataset.

``registry`` (where each file comes from), ``movielens`` (chapter 01), ``text`` (words to ids) and
``batching`` (padded, length-bucketed batches) used by ``imdb`` (chapter 06), and ``enwik8`` (chapter 07).
"""

from fromscratch.data.mnist import FILES as MNIST_FILES  # chapter 13: registers MNIST, Fashion-MNIST
from fromscratch.data.multi30k import MULTI30K  # chapter 09: registers the Multi30k archive
from fromscratch.data.pretrained import PRETRAINED  # chapter 10: registers GPT-2's BPE, MiniLM, GPT-2 124M
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
