"""The chapters' own code, one folder each (``ch07_masking_generation/``: its profile, checks, figures,
pipeline), and what every chapter calls first: ``setup()``.

A chapter reads everything size-related (data, model, steps, batch) from the profile, so the same
notebook is a seconds-long CI run (``smoke``), a minutes-long laptop run with real results (``cpu``),
or the full reproduction on a CUDA GPU (``gpu``). ``profile()`` picks ``gpu`` with CUDA and ``cpu``
otherwise; ``FROMSCRATCH_PROFILE`` overrides it. Each chapter folder's ``profile.py`` holds its run (a
frozen dataclass holding the model's config and a :class:`~fromscratch.training.TrainConfig`) in three
sizes; :class:`Profile` assembles them: ``Classifier(prof.imdb.model)``, ``train(..., prof.imdb.train)``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fromscratch.chapters.ch01_dot_products.profile import MOVIELENS_RUNS, MovieLensRun
from fromscratch.chapters.ch02_basic_self_attention.profile import ATTENTION_RUNS, AttentionRun
from fromscratch.chapters.ch06_imdb_classifier.profile import IMDB_RUNS, ImdbRun
from fromscratch.chapters.ch07_masking_generation.profile import ENWIK8_RUNS, Enwik8Run
from fromscratch.chapters.ch08_design_considerations.profile import SEQUENCE_RUNS, SequenceRun
from fromscratch.chapters.ch09_encoder_decoder.profile import TRANSLATION_RUNS, TranslationRun
from fromscratch.chapters.ch10_modern_transformers.profile import MODERN_RUNS, ModernRun
from fromscratch.chapters.ch11_longer_contexts.profile import LONG_CONTEXT_RUNS, LongContextRun
from fromscratch.chapters.ch12_going_big.profile import GOING_BIG_RUNS, GoingBigRun
from fromscratch.chapters.ch13_beyond_text.profile import BEYOND_RUNS, BeyondRun
from fromscratch.chapters.ch14_modern_decoders.profile import DECODERS_RUNS, DecodersRun
from fromscratch.chapters.ch15_assistant.profile import CHAT_RUNS, ChatRun
from fromscratch.chapters.ch16_flash_attention.profile import FLASH_RUNS, FlashRun

PROFILE_NAMES = ("smoke", "cpu", "gpu")
ENV_VAR = "FROMSCRATCH_PROFILE"


# --- the profile itself ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Profile:
    """All runs of one profile; ``profile().imdb.model.depth``, ``profile().imdb.train`` and so on."""

    name: str  # "smoke", "cpu" or "gpu"
    cpu_threads: int | None  # torch's CPU threads (None: torch's default, one per core)
    movielens: MovieLensRun
    attention: AttentionRun
    imdb: ImdbRun
    enwik8: Enwik8Run
    sequence: SequenceRun  # chapter 08
    translation: TranslationRun  # chapter 09
    modern: ModernRun  # chapter 10
    long_context: LongContextRun  # chapter 11
    going_big: GoingBigRun  # chapter 12
    beyond: BeyondRun  # chapter 13
    decoders: DecodersRun  # chapter 14
    chat: ChatRun  # chapter 15
    flash: FlashRun  # chapter 16


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (one of ``smoke``, ``cpu``, ``gpu``)."""
    if name not in PROFILE_NAMES:
        raise ValueError(
            f"Unknown run profile {name!r}. Choose one of {', '.join(PROFILE_NAMES)} "
            f"(set {ENV_VAR}, or unset it to pick automatically)."
        )
    # smoke's tensors are tiny: a second thread only adds synchronisation, and on a shared or busy
    # machine it can slow every step many times over.
    return Profile(
        name=name,
        cpu_threads=1 if name == "smoke" else None,
        movielens=MOVIELENS_RUNS[name],
        attention=ATTENTION_RUNS[name],
        imdb=IMDB_RUNS[name],
        enwik8=ENWIK8_RUNS[name],
        sequence=SEQUENCE_RUNS[name],
        translation=TRANSLATION_RUNS[name],
        modern=MODERN_RUNS[name],
        long_context=LONG_CONTEXT_RUNS[name],
        going_big=GOING_BIG_RUNS[name],
        beyond=BEYOND_RUNS[name],
        decoders=DECODERS_RUNS[name],
        chat=CHAT_RUNS[name],
        flash=FLASH_RUNS[name],
    )


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
    if prof.cpu_threads is not None:
        torch.set_num_threads(prof.cpu_threads)
    use_style()
    from fromscratch.training.precision import choose_precision, device_name

    print(
        f"fromscratch: device={device_name(device)}, profile={prof.name}, "
        f"precision auto={choose_precision(device, 'auto')}, seed={seed}, torch={torch.__version__}, "
        f"cpu threads={torch.get_num_threads()}"
    )
    return Setup(device, prof)
