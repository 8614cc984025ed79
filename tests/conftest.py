"""Shared test set-up: a headless plotting backend, the offline data mirror and a hermetic data cache."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")  # draw into memory: no window, no display needed (before any test imports pyplot)
torch.set_num_threads(1)  # the tests' tensors are tiny: one thread is as fast, and steady on a busy machine


def pytest_collection_modifyitems(items):
    """The slow tests first (every chapter from the wheel takes minutes): ``make test`` runs the tests on two
    workers that steal each other's queued work (``-n 2 --dist worksteal``), so the longest starts at once
    and the rest shares the other core, instead of one long test finishing alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise in file order


@pytest.fixture
def mirror() -> Path:
    """The offline mirror of the real datasets ($FROMSCRATCH_MIRROR); skip when it is not set."""
    path = os.environ.get("FROMSCRATCH_MIRROR")
    if not path or not (Path(path) / "SHA256SUMS").is_file():
        pytest.skip("set FROMSCRATCH_MIRROR to a directory with the course datasets (CI: ../shared/data)")
    return Path(path)


@pytest.fixture
def hf_minilm(mirror):
    """Hugging Face's ``BertModel`` with all-MiniLM-L6-v2's weights from the mirror: the twin our
    ``load_bert`` is checked against (the same function builds it in chapter 10)."""
    pytest.importorskip("transformers")
    from fromscratch.interop.minilm import hf_minilm

    return hf_minilm()


@pytest.fixture
def empty_data_env(tmp_path, monkeypatch) -> Path:
    """A fresh, empty cache and no mirror: what a new machine without the datasets has."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("FROMSCRATCH_DATA", str(cache))
    monkeypatch.delenv("FROMSCRATCH_MIRROR", raising=False)
    return cache


@pytest.fixture
def global_rng_untouched():
    """Fail the test if it draws from PyTorch's global random generator (checkers use their own)."""
    state = torch.random.get_rng_state()
    yield
    assert torch.equal(torch.random.get_rng_state(), state), "the global random generator was used"
