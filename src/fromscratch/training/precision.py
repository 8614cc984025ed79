"""Mixed precision: the 16-bit type a device really runs fast, and how to train in it (chapter 12).

Autocast (``torch.autocast``) runs the matrix products of the forward pass in a 16-bit type and
leaves the weights, the optimiser and the gradients in fp32. Two 16-bit types exist:

- **bf16** keeps fp32's 8 exponent bits (the same range, up to ~3.4e38) and only 8 bits of
  precision (about 2-3 decimal digits). Gradients cannot underflow more than in fp32, so no scaler
  is needed. Fast only where the hardware has bf16 units: NVIDIA GPUs from compute capability 8.0
  (A100, L4, H100, RTX 30xx and later) and CPUs with ``avx512_bf16`` or AMX. Elsewhere it is
  *emulated*: a T4 or V100 (7.x) stores bf16 tensors and ``torch.cuda.is_bf16_supported()`` says
  True (its default ``including_emulation=True`` only tries to create a bf16 tensor), but it has no
  bf16 tensor cores; a CPU without bf16 units runs PyTorch's reference kernels, hundreds of times
  slower than fp32 (chapter 12 measures it). So the choice here reads the compute capability
  (``torch.cuda.get_device_capability``), never a check that emulation passes.
- **fp16** keeps 11 bits of precision but only 5 exponent bits (largest 65,504, smallest normal
  6.1e-5): small gradients underflow to zero, so the loss is multiplied by a large factor before the
  backward pass and the gradients divided by it before the step (``torch.amp.GradScaler``). Fast on
  the tensor cores of compute capability 7.0 and later (a T4: ~65 TFLOP/s in fp16, ~8 in fp32).

``TrainConfig.precision`` (:mod:`fromscratch.training`) is the one switch; it takes one of
:data:`PRECISIONS`, and :func:`choose_precision` turns it into a :class:`Precision` for a device:

=========  ==============================================================================
"auto"     the fast precision that keeps the accuracy (the default): CUDA >= 8.0 -> bf16;
           CUDA 7.x (T4, V100, RTX 20xx) -> fp16 + gradient scaler; older CUDA, MPS, CPU -> fp32
"best"     bf16 wherever there are bf16 units (CUDA >= 8.0, a bf16 CPU); else fp16 + scaler on
           CUDA 7.x; else fp32
"bf16"     bf16 autocast; where it is emulated (CUDA < 8.0, a CPU without bf16 units, MPS): one
           warning saying so, and still bf16
"fp16"     fp16 autocast + gradient scaler; without fp16 tensor cores (CUDA < 7.0, CPU, MPS):
           one warning saying so, and still fp16
"fp32"     no autocast
=========  ==============================================================================

The loop, chapter 12 and the benchmarks all ask :func:`choose_precision`; none calls
``torch.autocast`` itself: ``with chosen.autocast(device): loss = ...`` and
``scaler = chosen.grad_scaler(device)``. What a name means once chosen is written once, here:
:data:`DTYPES` maps "fp32", "bf16" and "fp16" to their autocast dtype, and ``Precision.named(name)``
adds the loss scaler exactly for fp16; the memory estimates (:mod:`~fromscratch.training.memory`,
:mod:`~fromscratch.training.fits`) and the benchmarks read a name through it.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from pathlib import Path
from typing import NamedTuple

import torch

DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}  # the one table: name -> autocast
PRECISIONS = ("auto", "best", *sorted(DTYPES))  # what TrainConfig.precision takes: a choice, or a name
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of CPUs with bf16 matrix instructions
BF16_CAPABILITY = (8, 0)  # Ampere: the first NVIDIA GPUs with bf16 tensor cores
FP16_CAPABILITY = (7, 0)  # Volta: the first with fp16 tensor cores


class PrecisionWarning(UserWarning):
    """The precision asked for is emulated on this device (slow); training goes on in it anyway."""


class Precision(NamedTuple):
    """How to train on one device: the autocast dtype (None: plain fp32) and whether to scale the loss."""

    dtype: torch.dtype | None  # torch.bfloat16, torch.float16, or None (no autocast, fp32)
    scaler: bool  # a GradScaler is on: exactly when dtype is fp16

    @classmethod
    def named(cls, name: str) -> Precision:
        """The precision ``name`` ("bf16", "fp16" or "fp32") stands for, on any device: its autocast dtype
        from :data:`DTYPES`, and a loss scaler exactly for fp16 (the one place that rule is written)."""
        if name not in DTYPES:
            raise ValueError(f"precision must be one of {', '.join(map(repr, DTYPES))}; got {name!r}.")
        return cls(DTYPES[name], name == "fp16")

    @property
    def name(self) -> str:
        """``"bf16"``, ``"fp16"`` or ``"fp32"``."""
        return next(name for name, dtype in DTYPES.items() if dtype == self.dtype)

    @property
    def compute_dtype(self) -> torch.dtype:
        """The dtype the matrix products run in: the autocast dtype, or ``torch.float32``."""
        return self.dtype or torch.float32

    def autocast(self, device: torch.device | str) -> contextlib.AbstractContextManager:
        """The context to run the forward pass (and the loss) in: autocast to ``dtype``, or nothing."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(torch.device(device).type, dtype=self.dtype)

    def grad_scaler(self, device: torch.device | str) -> torch.amp.GradScaler:
        """A ``torch.amp.GradScaler`` for ``device``, enabled exactly for fp16 (else it passes through)."""
        return torch.amp.GradScaler(torch.device(device).type, enabled=self.scaler)

    def __str__(self) -> str:
        return {"bf16": "bf16 autocast", "fp16": "fp16 autocast + gradient scaler", "fp32": "fp32"}[self.name]


@functools.cache
def cpu_has_bf16() -> bool:
    """True when this CPU has bf16 matrix instructions (``avx512_bf16`` or AMX), so bf16 autocast is fast.

    Read from ``/proc/cpuinfo`` on Linux; elsewhere oneDNN's own check decides.
    """
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        flags = set()
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
        return any(flag in flags for flag in CPU_BF16_FLAGS)
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def cuda_capability(device: torch.device | str) -> tuple[int, int] | None:
    """The compute capability ``(major, minor)`` of a CUDA ``device`` (e.g. (7, 5) for a T4); None otherwise.

    ROCm builds report their GPUs as ``cuda``; they all have bf16 units and count as (8, 0) here.
    """
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    if torch.version.hip:
        return BF16_CAPABILITY
    return tuple(torch.cuda.get_device_capability(device))


def bf16_supported(device: torch.device | str) -> bool:
    """True when ``device`` has bf16 units (CUDA >= 8.0, or a bf16 CPU): bf16 runs at full speed there.

    Unlike ``torch.cuda.is_bf16_supported()``, False on a T4 or V100, where bf16 is only emulated.
    """
    device = torch.device(device)
    if device.type == "cuda":
        capability = cuda_capability(device)
        return capability is not None and capability >= BF16_CAPABILITY
    return device.type == "cpu" and cpu_has_bf16()


def fp16_fast(device: torch.device | str) -> bool:
    """True when ``device`` has fp16 tensor cores (CUDA >= 7.0)."""
    capability = cuda_capability(device)
    return capability is not None and capability >= FP16_CAPABILITY


def _emulated(device: torch.device, what: str) -> None:
    """Warn once that ``what`` ("bf16" or "fp16") has no units of its own on ``device``."""
    if device.type == "cuda":
        major, minor = cuda_capability(device) or (0, 0)
        units = "bf16 tensor cores (compute capability 8.0)" if what == "bf16" else "fp16 tensor cores (7.0)"
        where = f"this GPU (compute capability {major}.{minor}) has no {units}"
    elif device.type == "cpu":
        units = (
            "bf16 matrix units (avx512_bf16 or AMX)" if what == "bf16" else "fp16 matrix units PyTorch uses"
        )
        where = f"this CPU has no {units}"
    else:
        where = f"{device.type} has no {what} units this code can rely on"
    warnings.warn(
        f"{what} asked for on {device.type}, but {where}: it is emulated and may be much slower than fp32. "
        f"Training in {what} as asked (precision='auto' picks the fast precision here).",
        PrecisionWarning,
        stacklevel=3,
    )


def _decide(precision: str, *, cuda: bool, bf16_units: bool, fp16_units: bool) -> Precision:
    """What ``precision`` means on a device with (or without) bf16 and fp16 units."""
    if precision == "auto":
        precision = "bf16" if cuda and bf16_units else "fp16" if fp16_units else "fp32"
    elif precision == "best":
        precision = "bf16" if bf16_units else "fp16" if fp16_units else "fp32"
    return Precision.named(precision)


def choose_precision(device: torch.device | str, precision: str = "auto") -> Precision:
    """What ``precision`` (one of :data:`PRECISIONS`) means on ``device``: a :class:`Precision`.

    Decided from the device's real capability (see the module's table). An explicit "bf16" or
    "fp16" where that type is emulated warns once (a :class:`PrecisionWarning`) and is kept.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}; got {precision!r}.")
    device = torch.device(device)
    units = {"bf16": bf16_supported(device), "fp16": fp16_fast(device)}
    if precision in units and not units[precision]:
        _emulated(device, precision)
    return _decide(precision, cuda=device.type == "cuda", bf16_units=units["bf16"], fp16_units=units["fp16"])


def choose_for_gpu(capability: tuple[int, int], precision: str = "auto") -> Precision:
    """What :func:`choose_precision` picks on a CUDA GPU of compute ``capability``, e.g. (7, 5) for a T4.

    Needs no GPU and never warns: for plans made elsewhere (``benchmarks/gpu/report.py``).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}; got {precision!r}.")
    bf16, fp16 = tuple(capability) >= BF16_CAPABILITY, tuple(capability) >= FP16_CAPABILITY
    return _decide(precision, cuda=True, bf16_units=bf16, fp16_units=fp16)


def autocast_dtype(device: torch.device | str, precision: str = "auto") -> torch.dtype | None:
    """The dtype to autocast to on ``device`` for ``precision`` (None: fp32); see :func:`choose_precision`."""
    return choose_precision(device, precision).dtype


def device_name(device: torch.device | str) -> str:
    """The device in a few words: ``"cuda (Tesla T4, compute capability 7.5, 15.8 GB)"``, ``"cpu"``."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(device)
        major, minor = cuda_capability(device) or (props.major, props.minor)
        return f"cuda ({props.name}, compute capability {major}.{minor}, {props.total_memory / 1e9:.1f} GB)"
    if device.type == "cpu":
        return f"cpu ({'bf16 units' if cpu_has_bf16() else 'no bf16 units'})"
    return device.type


def describe(device: torch.device | str, precision: str = "auto") -> str:
    """What ``precision`` means on ``device``, e.g. ``"cpu (no bf16 units), precision='auto': fp32"``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        chosen = choose_precision(device, precision)
    return f"{device_name(device)}, precision={precision!r}: {chosen}"


__all__ = [
    "BF16_CAPABILITY",
    "CPU_BF16_FLAGS",
    "DTYPES",
    "FP16_CAPABILITY",
    "PRECISIONS",
    "Precision",
    "PrecisionWarning",
    "autocast_dtype",
    "bf16_supported",
    "choose_for_gpu",
    "choose_precision",
    "cpu_has_bf16",
    "cuda_capability",
    "describe",
    "device_name",
    "fp16_fast",
]
