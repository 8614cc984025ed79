"""Mixed precision: which half-precision type a device can train in (chapter 12).

Autocast (``torch.autocast``) runs the matrix products of the forward pass in a 16-bit type and
leaves the weights, the optimiser and the gradients in fp32. Two 16-bit types exist:

- **bf16** keeps fp32's 8 exponent bits (the same range, up to ~3.4e38) and only 8 bits of
  precision (about 2-3 decimal digits). Gradients cannot underflow more than in fp32, so no scaler
  is needed. Fast on recent GPUs and on CPUs with bf16 units (``avx512_bf16``, ``amx_bf16``); on a
  CPU without them PyTorch falls back to a reference kernel that can be hundreds of times slower
  than fp32 (chapter 12 measures it), so bf16 on such a CPU is **refused** with one warning.
- **fp16** keeps 11 bits of precision but only 5 exponent bits (largest 65,504, smallest normal
  6.1e-5): small gradients underflow to zero, so the loss is multiplied by a large factor before the
  backward pass and the gradients divided by it before the step (``torch.amp.GradScaler``). CUDA only.

``TrainConfig.precision`` (:mod:`fromscratch.training`) takes one of :data:`PRECISIONS`:

=========  ==============================================================================
"auto"     the course's default: on CUDA bf16 (fp16 + scaler on GPUs without bf16); fp32 elsewhere
"best"     bf16 wherever the hardware has bf16 units (CUDA or CPU), else fp16 on CUDA, else fp32
"bf16"     bf16 autocast; on a device without bf16 support: fp32 and one warning
"fp16"     fp16 autocast with a gradient scaler (CUDA); elsewhere: fp32 and one warning
"fp32"     no autocast
=========  ==============================================================================
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import torch

PRECISIONS = ("auto", "best", "bf16", "fp16", "fp32")
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of CPUs with bf16 matrix instructions


class PrecisionWarning(UserWarning):
    """The precision asked for is not supported here; training goes on in fp32."""


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


def bf16_supported(device: torch.device | str) -> bool:
    """True when ``device`` runs bf16 matrix products at full speed (CUDA with bf16, or a bf16 CPU)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return cpu_has_bf16()
    return False


def autocast_dtype(device: torch.device | str, precision: str = "auto") -> torch.dtype | None:
    """The dtype to autocast to on ``device`` for ``precision`` (one of :data:`PRECISIONS`); None = fp32.

    Asking for "bf16" or "fp16" where it is not supported warns once (a :class:`PrecisionWarning`)
    and returns None: the run goes on in fp32.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}; got {precision!r}.")
    device = torch.device(device)
    cuda = device.type == "cuda"
    if precision == "fp32":
        return None
    if precision == "auto":
        return (torch.bfloat16 if bf16_supported(device) else torch.float16) if cuda else None
    if precision == "best":
        if bf16_supported(device):
            return torch.bfloat16
        return torch.float16 if cuda else None
    if precision == "bf16":
        if bf16_supported(device):
            return torch.bfloat16
        what = (
            "this CPU has no bf16 matrix units (avx512_bf16 or AMX)"
            if device.type == "cpu"
            else "it is unsupported"
        )
        warnings.warn(
            f"bf16 autocast asked for on {device.type}, but {what}: training in fp32 instead "
            f"(precision='fp32' says so explicitly; precision='best' picks what is fast here).",
            PrecisionWarning,
            stacklevel=3,
        )
        return None
    if cuda:  # "fp16"
        return torch.float16
    warnings.warn(
        f"fp16 autocast with a gradient scaler is for CUDA GPUs; on {device.type} training goes on in fp32 "
        f"(precision='best' picks bf16 where the hardware has it).",
        PrecisionWarning,
        stacklevel=3,
    )
    return None


def describe(device: torch.device | str, precision: str = "auto") -> str:
    """One line saying what ``precision`` means on ``device``, e.g. ``"cpu: fp32 (no bf16 units)"``."""
    device = torch.device(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        dtype = autocast_dtype(device, precision)
    name = {None: "fp32", torch.bfloat16: "bf16 autocast", torch.float16: "fp16 autocast + gradient scaler"}[
        dtype
    ]
    units = "bf16 units" if bf16_supported(device) else "no bf16 units"
    return f"{device.type} ({units}), precision={precision!r}: {name}"


__all__ = [
    "CPU_BF16_FLAGS",
    "PRECISIONS",
    "PrecisionWarning",
    "autocast_dtype",
    "bf16_supported",
    "cpu_has_bf16",
    "describe",
]
