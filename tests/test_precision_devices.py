"""The precision chosen on devices this machine does not have: GPUs faked by their real properties.

``torch.cuda`` is monkeypatched to answer as each card does: its compute capability and properties,
and ``is_bf16_supported()`` true by emulation on 7.x and 6.x (it only tries to create a bf16
tensor, torch 2.13's ``torch/cuda/__init__.py``), so a choice that trusted it would pick bf16 on a T4.
"""

from __future__ import annotations

import types
import warnings

import pytest
import torch

from fromscratch import chapters as profiles
from fromscratch.training import precision
from fromscratch.training.precision import PrecisionWarning, choose_precision, describe

# name, compute capability, memory (bytes), "auto" = "best" on it
GPUS = {
    "T4": ("Tesla T4", (7, 5), 15_828_320_256, "fp16"),
    "V100": ("Tesla V100-SXM2-16GB", (7, 0), 16_935_682_048, "fp16"),
    "P100": ("Tesla P100-PCIE-16GB", (6, 0), 17_071_734_784, "fp32"),
    "A100": ("NVIDIA A100-SXM4-40GB", (8, 0), 42_505_273_344, "bf16"),
    "L4": ("NVIDIA L4", (8, 9), 23_661_969_408, "bf16"),
    "H100": ("NVIDIA H100 80GB HBM3", (9, 0), 85_045_231_616, "bf16"),
}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": None}


def fake_gpu(monkeypatch, card: str) -> None:
    """Make ``torch.cuda`` answer as the GPU ``card`` (a key of GPUS) would, without touching a driver."""
    name, (major, minor), memory, _ = GPUS[card]
    props = types.SimpleNamespace(name=name, major=major, minor=minor, total_memory=memory)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (major, minor))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
    # as torch 2.13: native from 8.0; below it, True by emulation (a bf16 tensor can be created)
    monkeypatch.setattr(
        torch.cuda, "is_bf16_supported", lambda including_emulation=True: major >= 8 or including_emulation
    )
    monkeypatch.setattr(torch.version, "hip", None)


def quietly(device, wanted):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        return choose_precision(device, wanted)


@pytest.mark.parametrize("card", GPUS)
def test_auto_and_best_follow_the_compute_capability(monkeypatch, card):
    fake_gpu(monkeypatch, card)
    assert torch.cuda.is_bf16_supported()  # the emulation check passes on every one of them
    expected = GPUS[card][3]
    for wanted in ("auto", "best"):
        chosen = quietly("cuda", wanted)
        assert chosen.name == expected and chosen.dtype == DTYPES[expected], (card, wanted)
        assert chosen.scaler == (expected == "fp16")  # a gradient scaler exactly for fp16
    assert quietly("cuda", "fp32") == (None, False)


@pytest.mark.parametrize("card", GPUS)
def test_explicit_bf16_is_kept_and_emulation_is_said_once(monkeypatch, card):
    fake_gpu(monkeypatch, card)
    native = GPUS[card][1] >= (8, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = choose_precision("cuda", "bf16")
    assert chosen == (torch.bfloat16, False)
    said = [w for w in caught if issubclass(w.category, PrecisionWarning)]
    assert len(said) == (0 if native else 1)
    if not native:
        assert "emulated" in str(said[0].message) and f"{GPUS[card][1][0]}.{GPUS[card][1][1]}" in str(
            said[0].message
        )


@pytest.mark.parametrize("card", GPUS)
def test_explicit_fp16_has_its_scaler(monkeypatch, card):
    fake_gpu(monkeypatch, card)
    tensor_cores = GPUS[card][1] >= (7, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = choose_precision("cuda:0", "fp16")
    assert chosen == (torch.float16, True)
    assert len([w for w in caught if issubclass(w.category, PrecisionWarning)]) == (0 if tensor_cores else 1)


def test_the_t4_trains_in_fp16_with_a_scaler_under_auto(monkeypatch):
    fake_gpu(monkeypatch, "T4")
    chosen = choose_precision("cuda", "auto")
    scaler = chosen.grad_scaler("cpu")  # a real GradScaler, built as the loop builds it (device aside)
    assert scaler.is_enabled() and str(chosen) == "fp16 autocast + gradient scaler"
    assert "Tesla T4, compute capability 7.5, 15.8 GB" in describe("cuda", "auto")


def test_mps_is_fp32_unless_asked(monkeypatch):
    assert quietly("mps", "auto") == (None, False) and quietly("mps", "best") == (None, False)
    with pytest.warns(PrecisionWarning, match="emulated"):
        assert choose_precision("mps", "bf16") == (torch.bfloat16, False)


@pytest.mark.parametrize("units", [True, False], ids=["bf16 units", "no bf16 units"])
def test_cpu_with_and_without_bf16_units(monkeypatch, units):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: units)
    assert quietly("cpu", "auto") == (None, False)  # auto keeps fp32 on a CPU
    assert quietly("cpu", "best") == ((torch.bfloat16, False) if units else (None, False))
    if units:
        assert quietly("cpu", "bf16") == (torch.bfloat16, False)
    else:
        with pytest.warns(PrecisionWarning, match="no bf16 matrix units"):
            assert choose_precision("cpu", "bf16") == (torch.bfloat16, False)
    with pytest.warns(PrecisionWarning, match="fp16"):
        assert choose_precision("cpu", "fp16") == (torch.float16, True)


def test_a_bad_precision_lists_the_choices():
    with pytest.raises(ValueError, match=r"'auto', 'best', 'bf16', 'fp16', 'fp32'; got 'fp17'"):
        choose_precision("cpu", "fp17")


@pytest.mark.parametrize("card", ["T4", "A100"])
def test_setup_prints_one_line_with_the_gpu_and_the_precision(monkeypatch, capsys, card):
    fake_gpu(monkeypatch, card)
    monkeypatch.delenv("FROMSCRATCH_PROFILE", raising=False)
    monkeypatch.setattr(torch, "manual_seed", lambda seed: None)  # would seed the (absent) CUDA RNG too
    threads = torch.get_num_threads()
    try:
        device, prof = profiles.setup(seed=0)
    finally:
        torch.set_num_threads(threads)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and device.type == "cuda" and prof.name == "gpu"
    assert GPUS[card][0] in lines[0] and "profile=gpu" in lines[0]
    assert f"precision auto={choose_precision('cuda', 'auto')}" in lines[0]


@pytest.mark.parametrize("card", GPUS)
def test_the_plan_without_a_gpu_chooses_as_the_gpu_would(monkeypatch, card):
    wanted = ("auto", "best", "fp32", "bf16", "fp16")
    plan = [precision.choose_for_gpu(GPUS[card][1], p) for p in wanted]
    fake_gpu(monkeypatch, card)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        assert plan == [choose_precision("cuda", p) for p in wanted]
