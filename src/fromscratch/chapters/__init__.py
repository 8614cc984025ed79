"""The chapters' own code, one folder each (``ch07_masking_generation/``: its profile, checks, figures,
pipeline), and what every chapter calls first: ``setup()``.

A chapter reads everything size-related (data, model, steps, batch) from the profile, so the same
notebook is a seconds-long CI run (``smoke``), a minutes-long laptop run with real results (``cpu``),
or the full reproduction on a CUDA GPU (``gpu``). ``profile()`` picks ``gpu`` with CUDA and ``cpu``
otherwise; ``FROMSCRATCH_PROFILE`` overrides it. Each chapter folder's ``profile.py`` holds its run (a
frozen dataclass holding the model's config and a :class:`~fromscratch.training.TrainConfig`) in three
sizes; :class:`Profile` assembles them by chapter: ``Classifier(prof.ch06.model)``,
``train(..., prof.ch06.train)``.
"""

from __future__ import annotations

import importlib
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

PROFILE_NAMES = ("smoke", "cpu", "gpu")
ENV_VAR = "FROMSCRATCH_PROFILE"


def chapter_runs() -> dict[str, dict[str, object]]:
    """``{"ch06": {"smoke": ..., "cpu": ..., "gpu": ...}, ...}``: the ``RUNS`` of every chapter folder
    that has a ``profile.py``, keyed by its chapter (``ch06_imdb_classifier`` -> ``"ch06"``)."""
    runs = {}
    for path in sorted(Path(__file__).parent.glob("ch[0-9][0-9]_*/profile.py")):
        module = importlib.import_module(f"fromscratch.chapters.{path.parent.name}.profile")
        runs[path.parent.name[:4]] = module.RUNS
    return runs


# --- the profile itself ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Profile:
    """All runs of one profile, by chapter: ``profile().ch06.model.depth``, ``profile().ch06.train``."""

    name: str  # "smoke", "cpu" or "gpu"
    cpu_threads: int | None  # torch's CPU threads (None: torch's default, one per core)
    runs: dict[str, object]  # {"ch06": chapter 06's run in this profile, ...}

    def __getattr__(self, chapter: str) -> object:
        if chapter.startswith("__") or chapter == "runs":  # copying and pickling look these up
            raise AttributeError(chapter)
        try:
            return self.runs[chapter]
        except KeyError:
            raise AttributeError(
                f"the profile has no run {chapter!r}; chapters with runs: {', '.join(self.runs)}"
            ) from None


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (one of ``smoke``, ``cpu``, ``gpu``)."""
    if name not in PROFILE_NAMES:
        raise ValueError(
            f"Unknown run profile {name!r}. Choose one of {', '.join(PROFILE_NAMES)} "
            f"(set {ENV_VAR}, or unset it to pick automatically)."
        )
    # smoke's tensors are tiny: a second thread only adds synchronisation, and on a shared or busy
    # machine it can slow every step many times over.
    threads = 1 if name == "smoke" else None
    return Profile(name, threads, {chapter: runs[name] for chapter, runs in chapter_runs().items()})


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
