"""Run profiles: one notebook, three sizes (used by every chapter).

A chapter reads everything size-related (data subset, model size, steps, batch) from the profile,
so the same notebook is a seconds-long CI run (``smoke``), a minutes-long laptop run with real
results (``cpu``), or the full reproduction on a CUDA GPU (``gpu``).

``profile()`` picks ``gpu`` when CUDA is available and ``cpu`` otherwise; the environment variable
``FROMSCRATCH_PROFILE`` overrides it. ``setup()`` is the first call of every chapter.

Each chapter owns one small frozen dataclass, a *run*, in a module of this package (chapters 01-07
in ``early``, then ``sequence``, ``translation``, ``modern`` with ``label_efficiency``, ``long_context``,
``going_big``, ``beyond``, ``decoders`` and ``chat``): the sizes of its data, its model and its training
(learning rate, epochs, steps), one entry per profile. Profiles are data: they import the configs they
hold (``models``, ``data``, ``training``) and nothing from ``recipes``, which take these runs.
A run that trains a model holds that model's config and a :class:`~fromscratch.training.TrainConfig`
(``prof.imdb.model`` is a :class:`~fromscratch.models.ClassifierConfig`, ``prof.imdb.train`` its
training), so a chapter writes ``Classifier(prof.imdb.model)`` and
``train(model, batches, loss, prof.imdb.train)``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fromscratch.profiles.beyond import BEYOND_RUNS, BeyondRun
from fromscratch.profiles.chat import CHAT_RUNS, ChatRun
from fromscratch.profiles.decoders import DECODERS_RUNS, DecodersRun
from fromscratch.profiles.early import (
    ATTENTION_RUNS,
    ENWIK8_RUNS,
    IMDB_RUNS,
    MOVIELENS_RUNS,
    AttentionRun,
    Enwik8Run,
    ImdbRun,
    MovieLensRun,
)
from fromscratch.profiles.going_big import GOING_BIG_RUNS, GoingBigRun
from fromscratch.profiles.long_context import LONG_CONTEXT_RUNS, LongContextRun
from fromscratch.profiles.modern import MODERN_RUNS, ModernRun
from fromscratch.profiles.sequence import SEQUENCE_RUNS, SequenceRun
from fromscratch.profiles.translation import TRANSLATION_RUNS, TranslationRun

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
