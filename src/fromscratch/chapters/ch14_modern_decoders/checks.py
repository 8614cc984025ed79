"""Checkers for chapter 14's exercises (modern decoders: RMSNorm, SwiGLU, grouped-query heads, llama2.c's
file layout, Hugging Face's RoPE order).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers.

>>> import torch
>>> def my_rms_norm(x, weight, eps=1e-5):
...     return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
>>> check_rms_norm(my_rms_norm)
✓ my_rms_norm matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from fromscratch.attention.grouped import expand_kv_heads
from fromscratch.chapters import checking
from fromscratch.interop.hf_llama import pairs_from_halves
from fromscratch.interop.llama2c import HEADER, llama2c_config, llama2c_layout

__all__ = [
    "check_expand_kv_heads",
    "check_llama2c_layout",
    "check_pairs_from_halves",
    "check_rms_norm",
    "check_swiglu",
]


def _rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-5) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight  # (..., e), as F.rms_norm


def check_rms_norm(candidate: Callable[..., Tensor]) -> bool | None:
    """Exercise 14.1. Expects a function ``(x (..., e), weight (e,), eps) -> (..., e)`` returning
    ``x / sqrt(mean(x²) + eps) · weight``, the mean over the last dimension (``F.rms_norm``, PyTorch 2.4+)."""
    generator = torch.Generator().manual_seed(14)
    inputs = [
        (torch.randn(4, 8, generator=generator), torch.ones(8), 1e-5),
        (3 + 2 * torch.randn(2, 5, 16, generator=generator), torch.randn(16, generator=generator), 1e-5),
        (torch.randn(3, 6, generator=generator) * 1e-3, torch.randn(6, generator=generator), 1e-2),
    ]
    return checking.check_function(candidate, _rms_norm, inputs=inputs, atol=1e-5)


def _swiglu(x: Tensor, w_gate: Tensor, w_up: Tensor, w_down: Tensor) -> Tensor:
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)  # (..., e)


def check_swiglu(candidate: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 14.2. Expects a function ``(x (..., e), w_gate (hidden, e), w_up (hidden, e), w_down
    (e, hidden)) -> (..., e)`` returning ``(silu(x w_gateᵀ) ⊙ x w_upᵀ) w_downᵀ`` (weights stored as
    ``nn.Linear.weight``, no biases)."""
    generator = torch.Generator().manual_seed(15)

    def case(*x_shape: int, hidden: int) -> tuple[Tensor, ...]:
        e = x_shape[-1]
        return (
            torch.randn(*x_shape, generator=generator),
            torch.randn(hidden, e, generator=generator) / e**0.5,
            torch.randn(hidden, e, generator=generator) / e**0.5,
            torch.randn(e, hidden, generator=generator) / hidden**0.5,
        )

    inputs = [case(3, 4, hidden=6), case(2, 5, 12, hidden=32), case(7, 8, hidden=21)]
    return checking.check_function(candidate, _swiglu, inputs=inputs, atol=1e-5)


def check_expand_kv_heads(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 14.3. Expects a function ``(k (b, hk, t, d), groups) -> (b, hk·groups, t, d)`` that repeats
    each key/value head ``groups`` times *next to itself*, so query head ``j`` finds head ``j // groups``
    (as ``attention.grouped.expand_kv_heads``; ``k.repeat(1, groups, 1, 1)`` would tile them instead)."""
    generator = torch.Generator().manual_seed(16)
    inputs = [
        (torch.randn(1, 2, 3, 4, generator=generator), 2),
        (torch.randn(2, 4, 5, 8, generator=generator), 2),
        (torch.randn(2, 1, 3, 4, generator=generator), 8),
        (torch.randn(1, 3, 2, 2, generator=generator), 1),
    ]
    return checking.check_function(candidate, expand_kv_heads, inputs=inputs)


# headers (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len): stories260K's, a tied
# multi-head model, and an untied one (negative vocab_size)
LAYOUT_HEADERS = ((64, 172, 5, 8, 4, 512, 512), (32, 96, 2, 4, 4, 100, 64), (48, 128, 3, 6, 2, -200, 128))


def _shapes(layout) -> list[tuple[str, tuple[int, ...]]]:
    return [(str(name), tuple(int(n) for n in shape)) for name, shape in layout]


def check_llama2c_layout(
    candidate: Callable[[tuple[int, ...]], list], file_bytes: int | None = None
) -> bool | None:
    """Exercise 14.4. Expects a function ``(header) -> [(name, shape), ...]``: the tensors of a llama2.c
    version-0 file in the order ``run.c`` reads them, from its seven header numbers, as
    ``interop.llama2c.llama2c_layout``. ``file_bytes``: the size of stories260K's file, if at hand; the
    layout of its header must then account for every byte (28 of header, 4 per float32)."""
    name = getattr(candidate, "__name__", "your function")
    for header in LAYOUT_HEADERS:
        try:
            got = candidate(header)
        except NotImplementedError:
            return checking.not_attempted(name)
        except Exception as error:  # the learner's code may fail in any way; say how, kindly
            print(f"✗ {name} raised {error.__class__.__name__}: {error} (on the header {header}).")
            return False
        if checking.is_stub(got):
            return checking.not_attempted(name)
        expected = _shapes(llama2c_layout(llama2c_config(header)))
        try:
            got = _shapes(got)
        except (TypeError, ValueError):
            print(f"✗ {name} must return a list of (name, shape) pairs, got {type(got).__name__}.")
            return False
        if [g for g, _ in got] != [e for e, _ in expected]:
            print(
                f"✗ {name}: for the header {header} the tensors are, in order, "
                f"{[e for e, _ in expected]}; got {[g for g, _ in got]}."
            )
            return False
        for (tensor, shape), (_, right) in zip(got, expected, strict=True):
            if shape != right:
                print(f"✗ {name}: for the header {header}, {tensor} has the shape {right}, not {shape}.")
                return False
    if file_bytes is not None:
        header = LAYOUT_HEADERS[0]
        size = HEADER.size + 4 * sum(torch.Size(shape).numel() for _, shape in _shapes(candidate(header)))
        if size != file_bytes:
            print(f"✗ {name}: stories260K's layout ends at byte {size:,}, but the file has {file_bytes:,}.")
            return False
        print(f"✓ {name} gives the layout of {len(LAYOUT_HEADERS)} headers; stories260K's fills its file.")
        return True
    print(f"✓ {name} gives the layout of {len(LAYOUT_HEADERS)} headers (tied and untied, grouped and not).")
    return True


def check_pairs_from_halves(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 14.5. Expects a function ``(x (heads·s, ...), heads) -> same shape`` moving each head's rows
    from Hugging Face's RoPE order (halves: row ``m`` pairs with ``m + s/2``) to interleaved pairs (rows
    ``2m``, ``2m + 1``), as ``interop.hf_llama.pairs_from_halves``; for weights ``(heads·s, e)`` and
    biases ``(heads·s,)``."""
    generator = torch.Generator().manual_seed(17)
    inputs = [
        (torch.arange(8.0), 1),  # one head of 8 rows: the order is visible at a glance
        (torch.arange(16.0).view(8, 2), 2),
        (torch.randn(4 * 6, 5, generator=generator), 4),
        (torch.randn(2 * 16, generator=generator), 2),
    ]
    return checking.check_function(candidate, pairs_from_halves, inputs=inputs, atol=0.0, rtol=0.0)
