"""Checkers for chapter 05's exercises (the transformer block and positions).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The test inputs and the test block are drawn from fixed seeds without touching the global random
state, so checking an answer never changes the notebook's random numbers.

>>> import torch.nn.functional as F
>>> def my_layer_norm(x, weight, bias):
...     return F.layer_norm(x, x.shape[-1:], weight, bias, eps=1e-5)
>>> check_layer_norm(my_layer_norm)
✓ my_layer_norm matches the reference on 2 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from fromscratch.attention import sinusoidal_encoding
from fromscratch.blocks import TransformerBlock
from fromscratch.chapters import checking

__all__ = ["check_layer_norm", "check_pre_norm", "check_sinusoids"]

EPS = 1e-5  # nn.LayerNorm's default epsilon, as in the chapter


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _layer_norm(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The reference: ``F.layer_norm`` over the last dimension, eps 1e-5. x ``(b, t, e)`` -> ``(b, t, e)``."""
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps=EPS)


def check_layer_norm(candidate: Callable[[Tensor, Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 5.1. Expects a function ``(x (b, t, e), weight (e,), bias (e,)) -> (b, t, e)``: layer
    normalisation over the last dimension with the biased variance and eps = 1e-5, as ``nn.LayerNorm``."""
    gen = _generator(5)
    inputs = [
        (
            3 * torch.randn(2, 5, 8, generator=gen) + 1,
            torch.randn(8, generator=gen),
            torch.randn(8, generator=gen),
        ),
        (torch.randn(1, 3, 4, generator=gen), torch.ones(4), torch.zeros(4)),
    ]
    return checking.check_function(candidate, _layer_norm, inputs=inputs)


def check_sinusoids(candidate: Callable[[int, int], Tensor]) -> bool | None:
    """Exercise 5.2. Expects a function ``(context, emb) -> (context, emb)`` giving the sinusoidal
    position encodings of section 5.8 for an even ``emb``, as ``blocks.sinusoidal_encoding``."""
    return checking.check_function(candidate, sinusoidal_encoding, inputs=[(10, 8), (50, 16)], atol=1e-4)


def _test_block(emb: int, heads: int, seed: int) -> TransformerBlock:
    """A pre-norm block with random weights everywhere (its two LayerNorms differ), in eval mode."""
    with torch.random.fork_rng(devices=[]):  # module initialisation draws from the global generator
        torch.manual_seed(seed)
        block = TransformerBlock(emb, heads, norm="pre")
        with torch.no_grad():
            for norm in (block.norm1, block.norm2):
                norm.weight.normal_(1.0, 0.3)
                norm.bias.normal_(0.0, 0.3)
    return block.eval()


def check_pre_norm(candidate: Callable[[TransformerBlock, Tensor], Tensor]) -> bool | None:
    """Exercise 5.3. Expects a function ``(block, x (b, t, e)) -> (b, t, e)``: the forward pass of a
    pre-norm block from its parts ``block.attention``, ``block.norm1``, ``block.norm2`` and ``block.ff``,
    compared with ``TransformerBlock(..., norm="pre")`` itself (whose two LayerNorms differ here)."""
    gen = _generator(6)
    inputs = [
        (_test_block(8, 2, seed=1), torch.randn(2, 6, 8, generator=gen)),
        (_test_block(12, 3, seed=2), torch.randn(1, 4, 12, generator=gen)),
    ]
    with torch.no_grad():
        return checking.check_function(candidate, lambda block, x: block(x), inputs=inputs)
