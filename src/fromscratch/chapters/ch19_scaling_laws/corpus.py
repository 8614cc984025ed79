"""The bytes chapter 19 trains on: IMDb's 50,000 unlabelled reviews (``aclImdb/train/unsup``), which chapter
10 pretrained BERT on, read here as raw bytes (UTF-8, a vocabulary of 256) and joined into one stream.

Scaling laws are measured on data seen once: a run that repeats its data learns less from each pass, and the
laws of Kaplan et al. and Hoffmann et al. describe single-epoch training. enwik8's prefix (1M bytes) would
be repeated many times by the larger budgets; the reviews hold about 65M bytes. A seeded permutation of the
reviews gives the training stream (the first ``reviews``) and the held-out stream (the next ``held_out``),
so no held-out review is ever trained on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch

from fromscratch.data.registry import ACL_IMDB, extract

SEPARATOR = b"\n\n"  # between two reviews in a stream
REVIEWS = 50_000  # unlabelled reviews in aclImdb v1


@dataclass(frozen=True, repr=False)
class Corpus:
    """Two byte streams, uint8 ``(n,)``: ``train`` and ``held_out``, from disjoint sets of reviews."""

    train: torch.Tensor
    held_out: torch.Tensor
    reviews: int  # reviews in train
    held_out_reviews: int

    def __repr__(self) -> str:
        return (
            f"Corpus(train: {self.reviews:,} reviews, {len(self.train):,} bytes; "
            f"held out: {self.held_out_reviews:,} reviews, {len(self.held_out):,} bytes)"
        )


def _stream(folder: str, names: list[str]) -> torch.Tensor:
    parts = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            parts.append(f.read())
    return torch.frombuffer(bytearray(SEPARATOR.join(parts)), dtype=torch.uint8)  # (n,)


def load(reviews: int, held_out: int, *, seed: int = 0) -> Corpus:
    """``reviews`` unlabelled reviews as the training stream and ``held_out`` others as the held-out one,
    drawn by a permutation seeded with ``seed`` (the archive is extracted once, into the data cache)."""
    if reviews < 1 or held_out < 1 or reviews + held_out > REVIEWS:
        raise ValueError(
            f"reviews={reviews:,} and held_out={held_out:,} must be positive and together at most the "
            f"{REVIEWS:,} unlabelled reviews."
        )
    folder = os.path.join(extract(ACL_IMDB, progressbar=False), "aclImdb", "train", "unsup")
    names = sorted(os.listdir(folder))
    order = np.random.default_rng(seed).permutation(len(names))
    train = [names[i] for i in order[:reviews]]
    kept = [names[i] for i in order[reviews : reviews + held_out]]
    return Corpus(_stream(folder, train), _stream(folder, kept), reviews, held_out)


__all__ = ["Corpus", "SEPARATOR", "load"]
