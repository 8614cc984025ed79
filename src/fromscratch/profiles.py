"""Run profiles: one notebook, three sizes (used by every chapter).

A chapter reads everything size-related (data subset, model size, steps, batch) from the profile,
so the same notebook is a seconds-long CI run (``smoke``), a minutes-long laptop run with real
results (``cpu``), or the full reproduction on a CUDA GPU (``gpu``).

``profile()`` picks ``gpu`` when CUDA is available and ``cpu`` otherwise; the environment variable
``FROMSCRATCH_PROFILE`` overrides it. ``setup()`` is the first call of every chapter.

Each chapter owns one small dataclass below (its sizes) and one entry per profile.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

PROFILE_NAMES = ("smoke", "cpu", "gpu")
ENV_VAR = "FROMSCRATCH_PROFILE"


# --- chapter 01: matrix factorisation on MovieLens 100K -------------------------------------------
@dataclass(frozen=True)
class MovieLensSize:
    factors: int  # length of each user and movie vector
    epochs: int  # passes over the training ratings
    batch_size: int
    lr: float  # Adam learning rate
    weight_decay: float  # L2 penalty on embeddings (keeps unseen directions small)
    max_ratings: int | None  # use only this many ratings (None: all 100,000)


MOVIELENS = {
    "smoke": MovieLensSize(factors=8, epochs=2, batch_size=1024, lr=1e-2, weight_decay=1e-4, max_ratings=20_000),
    "cpu": MovieLensSize(factors=32, epochs=25, batch_size=1024, lr=5e-3, weight_decay=1e-4, max_ratings=None),
    "gpu": MovieLensSize(factors=64, epochs=40, batch_size=1024, lr=5e-3, weight_decay=1e-4, max_ratings=None),
}


# --- chapters 02-04: attention ---------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionSize:
    timing_lengths: tuple[int, ...]  # sequence lengths for the teaching-vs-fast timing table
    timing_repeats: int  # timed runs per length (after one warm-up run)


ATTENTION = {
    "smoke": AttentionSize(timing_lengths=(16, 64), timing_repeats=2),
    "cpu": AttentionSize(timing_lengths=(64, 256, 1024), timing_repeats=10),
    "gpu": AttentionSize(timing_lengths=(256, 1024, 4096), timing_repeats=20),
}


# --- chapters 05-06: the transformer block and the IMDb classifier ---------------------------------
@dataclass(frozen=True)
class ImdbSize:
    vocab_size: int  # most frequent training-split words kept (plus special tokens)
    max_len: int  # reviews are truncated to this many tokens
    emb: int  # embedding width e (blog: 128)
    heads: int  # attention heads h (blog: 8)
    depth: int  # transformer blocks (blog: 6)
    batch_size: int
    epochs: int
    lr: float  # peak learning rate after warm-up
    warmup_steps: int
    dropout: float
    train_reviews: int | None  # use only this many training reviews (None: all 25,000)
    test_reviews: int | None  # evaluate on this many test reviews (None: all 25,000)


IMDB = {
    "smoke": ImdbSize(vocab_size=2_000, max_len=64, emb=32, heads=2, depth=1, batch_size=32, epochs=1,
                      lr=1e-3, warmup_steps=5, dropout=0.0, train_reviews=512, test_reviews=256),
    "cpu": ImdbSize(vocab_size=20_000, max_len=256, emb=64, heads=4, depth=2, batch_size=64, epochs=3,
                    lr=1e-3, warmup_steps=100, dropout=0.1, train_reviews=None, test_reviews=None),
    "gpu": ImdbSize(vocab_size=50_000, max_len=512, emb=128, heads=8, depth=6, batch_size=32, epochs=10,
                    lr=1e-4, warmup_steps=1_000, dropout=0.1, train_reviews=None, test_reviews=None),
}


# --- chapter 07: masking and the enwik8 generator --------------------------------------------------
@dataclass(frozen=True)
class Enwik8Size:
    data_bytes: int | None  # read only the first bytes of enwik8 (None: all 100M, standard split)
    emb: int  # blog: 256
    heads: int  # blog: 8
    depth: int  # blog: 12
    context: int  # blog: 256
    batch_size: int  # blog: 32
    steps: int  # optimiser steps (blog: ~170K over ~24 h)
    lr: float
    warmup_steps: int
    eval_bytes: int  # held-out bytes scored for bits per byte


ENWIK8 = {
    "smoke": Enwik8Size(data_bytes=1_000_000, emb=32, heads=2, depth=1, context=32, batch_size=16,
                        steps=30, lr=1e-3, warmup_steps=5, eval_bytes=2_000),
    "cpu": Enwik8Size(data_bytes=None, emb=128, heads=4, depth=3, context=128, batch_size=32,
                      steps=3_000, lr=1e-3, warmup_steps=100, eval_bytes=100_000),
    "gpu": Enwik8Size(data_bytes=None, emb=256, heads=8, depth=12, context=256, batch_size=32,
                      steps=50_000, lr=3e-4, warmup_steps=1_000, eval_bytes=1_000_000),
}


# --- the profile itself ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Profile:
    """All sizes of one run profile; ``profile().imdb.depth`` and so on."""

    name: str  # "smoke", "cpu" or "gpu"
    movielens: MovieLensSize
    attention: AttentionSize
    imdb: ImdbSize
    enwik8: Enwik8Size


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (one of ``smoke``, ``cpu``, ``gpu``)."""
    if name not in PROFILE_NAMES:
        raise ValueError(
            f"Unknown run profile {name!r}. Choose one of {', '.join(PROFILE_NAMES)} "
            f"(set {ENV_VAR}, or unset it to pick automatically)."
        )
    return Profile(name=name, movielens=MOVIELENS[name], attention=ATTENTION[name], imdb=IMDB[name],
                   enwik8=ENWIK8[name])


def profile() -> Profile:
    """The active profile: ``$FROMSCRATCH_PROFILE`` if set, else ``gpu`` with CUDA, else ``cpu``."""
    name = os.environ.get(ENV_VAR, "").strip().lower()
    if not name:
        name = "gpu" if torch.cuda.is_available() else "cpu"
    return get_profile(name)


def pick_device() -> torch.device:
    """The best device here: CUDA, then Apple's MPS, then the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and PyTorch's random number generators (all devices)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Setup(NamedTuple):
    device: torch.device
    profile: Profile


def setup(seed: int = 0) -> Setup:
    """Pick the device and profile, seed everything, and print one line saying so.

    The first call in every chapter: ``device, prof = fromscratch.setup(seed=0)``.
    """
    from fromscratch.viz import use_style

    device = pick_device()
    prof = profile()
    seed_everything(seed)
    use_style()
    print(f"fromscratch: device={device.type}, profile={prof.name}, seed={seed}, torch={torch.__version__}")
    return Setup(device, prof)
