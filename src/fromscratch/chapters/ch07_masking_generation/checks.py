"""Checkers for chapter 07's exercises (masking and text generation).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The test inputs (and the small model the bits-per-byte checker scores) come from private
generators with fixed seeds, so checking an answer never changes the notebook's random numbers.

>>> import torch
>>> def my_causal_mask(t):
...     return torch.ones(t, t, dtype=torch.bool).tril()
>>> check_causal_mask(my_causal_mask)
✓ my_causal_mask matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.attention.masks import causal_mask
from fromscratch.chapters import checking
from fromscratch.generate import probabilities
from fromscratch.metrics import bits_per_byte
from fromscratch.models import Generator

__all__ = ["check_bits_per_byte", "check_causal_mask", "check_probabilities"]


def check_causal_mask(candidate: Callable[[int], Tensor]) -> bool | None:
    """Exercise 7.1. Expects a function ``t -> mask``, a boolean ``(t, t)`` tensor that is True where
    query ``i`` may attend to key ``j`` (``j <= i``), as ``masks.causal_mask``; checked for t = 1, 4, 9."""
    name = getattr(candidate, "__name__", "your function")
    try:
        got = candidate(4)
    except Exception:  # a stub or a failing answer: check_function below says which, kindly
        got = None
    if isinstance(got, Tensor) and got.dtype != torch.bool:
        print(f"✗ {name} must return a boolean mask (True = may attend), got dtype {got.dtype}.")
        return False
    return checking.check_function(candidate, causal_mask, inputs=[(1,), (4,), (9,)])


def _small_generator() -> Generator:
    """A small untrained causal generator (context 8), the same at every call."""
    with torch.random.fork_rng(devices=[]):  # the notebook's global random state is left alone
        torch.manual_seed(7)
        return Generator(emb=16, heads=2, depth=1, context=8).eval()


def _disjoint_windows_bpb(model: Generator, stream: Tensor, context: int) -> float:
    """The package's bits per byte with windows that do not overlap (``stride = context``)."""
    return bits_per_byte(model, stream, context=context, stride=context)


def check_bits_per_byte(candidate: Callable[[Generator, Tensor, int], float]) -> bool | None:
    """Exercise 7.2. Expects a function ``(model, stream, context) -> bits per byte``, for a 1-d byte
    ``stream`` of ``k * context + 1`` bytes cut into ``k`` windows of ``context`` inputs, each with
    its next-byte targets: the mean cross-entropy in bits, equal to
    ``bits_per_byte(model, stream, context=context, stride=context)``. Checked on a small untrained
    generator with ``(context, k)`` = (8, 4), (8, 1) and (4, 3)."""
    model = _small_generator()
    generator = torch.Generator().manual_seed(7)
    inputs = [
        (model, torch.randint(0, 256, (k * context + 1,), generator=generator, dtype=torch.uint8), context)
        for context, k in [(8, 4), (8, 1), (4, 3)]
    ]
    return checking.check_function(candidate, _disjoint_windows_bpb, inputs=inputs)


def _reference_probabilities(logits: Tensor, temperature: float, top_k: int | None) -> Tensor:
    """The package's sampling distribution, with the arguments passed by position."""
    return probabilities(logits, temperature=temperature, top_k=top_k)


def check_probabilities(candidate: Callable[[Tensor, float, int | None], Tensor]) -> bool | None:
    """Exercise 7.3. Expects a function ``(logits (b, V), temperature > 0, top_k) -> (b, V)``: keep the
    ``top_k`` largest logits of each row (all when ``top_k`` is None), divide by the temperature and
    apply the softmax, as ``generate.probabilities``; checked with several temperatures and ``top_k``."""
    generator = torch.Generator().manual_seed(7)
    inputs = [
        (torch.randn(3, 256, generator=generator), 0.5, 5),
        (torch.randn(2, 10, generator=generator), 1.0, None),
        (torch.randn(4, 7, generator=generator), 2.0, 1),
        (torch.tensor([[2.0, 1.0, 0.0, -1.0]]), 0.1, 2),
    ]
    return checking.check_function(candidate, _reference_probabilities, inputs=inputs)
