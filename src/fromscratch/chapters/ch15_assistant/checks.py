"""Checkers for chapter 15's exercises (a Q4_1 block, the assistant-only labels, LoRA's merge).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers.

>>> def my_merge(weight, A, B, alpha, rank):
...     return weight + alpha / rank * B @ A
>>> check_lora_merge(my_merge)
✓ my_merge matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.interop.quant import quantize_q4_1
from fromscratch.tokenizers.special import IGNORE

__all__ = ["check_assistant_labels", "check_lora_merge", "check_quantize_q4_1"]


def check_quantize_q4_1(candidate: Callable[[Tensor], Tensor]) -> bool | None:
    """Exercise 15.1. Expects a function ``x (32,) float32 -> (20,) uint8``: one Q4_1 block, byte for byte
    as llama.cpp writes it (``d = (max - min) / 15`` and ``m = min`` as little-endian float16, then
    ``q = round((x - m) / d)`` with the float32 ``d``, numbers ``j`` and ``j + 16`` in the low and high
    nibble of byte ``j``)."""
    generator = torch.Generator().manual_seed(151)
    inputs = [
        (torch.randn(32, generator=generator),),
        (torch.rand(32, generator=generator) * 5 + 2,),
        (torch.randn(32, generator=generator) * 0.02,),  # a weight-sized block
    ]
    return checking.check_function(candidate, quantize_q4_1, inputs=inputs, atol=0, rtol=0)


def _assistant_labels(ids: Sequence[int], mask: Sequence[bool]) -> list[int]:
    return [ids[i + 1] if i + 1 < len(ids) and mask[i + 1] else IGNORE for i in range(len(ids))]


def check_assistant_labels(
    candidate: Callable[[Sequence[int], Sequence[bool]], Sequence[int]],
) -> bool | None:
    """Exercise 15.2. Expects a function ``(ids (t,), mask (t,)) -> labels (t,)`` (lists of ints and bools):
    ``labels[i] = ids[i + 1]`` where token ``i + 1`` is the assistant's (``mask[i + 1]``), else ``IGNORE``
    (-100), and ``IGNORE`` at the last position (nothing follows it)."""
    cases = [
        ([1, 5, 6, 2, 1, 7, 8, 9, 2], [False, False, False, False, False, False, True, True, True]),
        (
            [1, 4, 2, 1, 3, 2, 1, 9, 9, 2, 1, 3, 3, 2],
            [False] * 4 + [True, True] + [False] * 4 + [True] * 3 + [False],
        ),
        ([5, 6], [True, True]),
    ]

    def run(ids, mask):
        got = candidate(list(ids), list(mask))
        return None if got is None or got is Ellipsis else [int(i) for i in got]

    return checking.check_function(
        run, _assistant_labels, inputs=cases, name=getattr(candidate, "__name__", None)
    )


def _merge(weight: Tensor, A: Tensor, B: Tensor, alpha: float, rank: int) -> Tensor:
    return weight + (alpha / rank) * (B @ A)  # (out, in)


def check_lora_merge(candidate: Callable[[Tensor, Tensor, Tensor, float, int], Tensor]) -> bool | None:
    """Exercise 15.3. Expects a function ``(weight (out, in), A (r, in), B (out, r), alpha, rank) ->
    (out, in)``: the weight of the merged layer, ``W + (α/r) · B A``."""
    generator = torch.Generator().manual_seed(153)

    def case(out: int, inner: int, rank: int, alpha: float) -> tuple:
        return (
            torch.randn(out, inner, generator=generator),
            torch.randn(rank, inner, generator=generator),
            torch.randn(out, rank, generator=generator),
            alpha,
            rank,
        )

    inputs = [case(6, 4, 2, 4.0), case(8, 16, 4, 8.0), case(5, 7, 1, 1.0)]
    return checking.check_function(candidate, _merge, inputs=inputs, atol=1e-6)
