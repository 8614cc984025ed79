"""Checkers for chapter 08's exercises (recurrence, convolution and self-attention compared).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Answers about depth are also *measured*: the checker builds the convolution stack the learner
named and reports how far its last output actually sees (the gradient-reachability test of 8.2).
The random inputs come from private generators, so checking never changes the notebook's random numbers.

>>> import torch
>>> def my_soft_lookup(query, keys, values):
...     return torch.softmax(keys @ query, dim=0) @ values
>>> check_soft_lookup(my_soft_lookup)
✓ my_soft_lookup matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from fromscratch.blocks import TransformerStack
from fromscratch.chapters import checking
from fromscratch.metrics.nonlinear import count_nonlinearities
from fromscratch.metrics.paths import conv_layers_needed, farthest_reachable
from fromscratch.models.encoders import ConvEncoder

__all__ = ["check_cnn_depth", "check_nonlinearity_count", "check_soft_lookup"]

DISTANCE, KERNEL = 100, 3  # exercise 8.1: connect positions 100 apart with kernel-3 convolutions


def _measured_reach(depth: int, *, dilated: bool) -> int:
    """How far back the last output of a ``depth``-block kernel-3 CNN sees, measured by gradients."""
    if depth == 0:
        return 0
    with torch.random.fork_rng(devices=[]):  # the notebook's global random state is left alone
        torch.manual_seed(8)
        encoder = ConvEncoder(
            vocab_size=4, emb=8, context=4 * DISTANCE, depth=depth, kernel=KERNEL, dilated=dilated
        )
    encoder.double()  # through 100 blocks the gradient shrinks below what float32 can hold
    t = DISTANCE + 1 + 2 ** min(depth, 8)  # long enough that a larger reach shows as one
    return farthest_reachable(encoder, t, position=-1)


def check_cnn_depth(plain: Any, dilated: Any) -> bool | None:
    """Exercise 8.1. Expects two whole numbers: the fewest kernel-3 convolution blocks whose *last*
    output sees the input 100 positions back, without dilation (``plain``) and with dilations
    1, 2, 4, ... (``dilated``); checked against :func:`~fromscratch.metrics.paths.conv_layers_needed` and
    measured with :func:`~fromscratch.metrics.paths.farthest_reachable` on real :class:`ConvEncoder` s."""
    if checking.is_stub(plain) or checking.is_stub(dilated):
        return checking.not_attempted("my_plain_depth, my_dilated_depth")
    right = True
    for name, answer, is_dilated in (("plain", plain, False), ("dilated", dilated, True)):
        expected = conv_layers_needed(DISTANCE, KERNEL, dilated=is_dilated)
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer <= 200:
            print(f"✗ the {name} depth must be a whole number of blocks from 0 to 200, got {answer!r}.")
            right = False
            continue
        reach = _measured_reach(answer, dilated=is_dilated)
        if answer == expected:
            below = _measured_reach(answer - 1, dilated=is_dilated)
            print(
                f"✓ {name}: {answer} blocks see {reach} positions back (measured); "
                f"{answer - 1} see only {below}."
            )
        else:
            verdict = "too few" if reach < DISTANCE else "more than needed"
            print(f"✗ {name}: {answer} blocks see {reach} positions back (measured): {verdict}.")
            right = False
    return right


def _soft_lookup(query: Tensor, keys: Tensor, values: Tensor) -> Tensor:
    return torch.softmax(keys @ query, dim=0) @ values  # (n,) weights -> (v,)


def check_soft_lookup(candidate: Callable[[Tensor, Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 8.2. Expects a function ``(query (e,), keys (n, e), values (n, v)) -> (v,)``: the
    softmax of the dot products of the query with every key, used as weights on the values."""
    generator = torch.Generator().manual_seed(8)

    def draw(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator)

    inputs = [
        (draw(4), draw(6, 4), draw(6, 3)),
        (draw(2), draw(1, 2), draw(1, 5)),
        (10 * torch.eye(3)[1], torch.eye(3), torch.tensor([[1.0], [2.0], [3.0]])),  # nearly the hard lookup
    ]
    return checking.check_function(candidate, _soft_lookup, inputs=inputs)


def blog_counts() -> tuple[int, int, int]:
    """(softmax, relu, layer norm) calls in one forward pass of the blog's six-block post-norm stack."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(8)
        stack = TransformerStack(vocab_size=16, emb=16, heads=2, depth=6, context=8)
    counts = count_nonlinearities(stack, torch.ones(1, 8, dtype=torch.long))
    return counts["softmax"], counts["relu"], counts["layer norm"]


def check_nonlinearity_count(answer: Any) -> bool | None:
    """Exercise 8.3. Expects ``(softmaxes, relus, layer_norms)``: how many of each one forward pass
    of the blog's stack of six post-norm transformer blocks applies, counted on a real stack with
    :func:`~fromscratch.metrics.nonlinear.count_nonlinearities`."""
    if checking.is_stub(answer) or (isinstance(answer, (tuple, list)) and any(map(checking.is_stub, answer))):
        return checking.not_attempted("my_counts")
    return checking.check_value(tuple(answer), blog_counts(), name="(softmax, relu, layer norm) counts")
