"""Counting the nonlinearities a forward pass applies (chapter 08, "depth drives the design").

The blog notes that a transformer block has very few nonlinear steps: the softmax of the attention
and the ReLU of the feed-forward part (and, arguably, the layer norms); everything else is linear.
:func:`count_nonlinearities` checks that claim on a real model: it runs one forward pass under a
:class:`torch.overrides.TorchFunctionMode` that sees every PyTorch function called, and counts the
calls of the nonlinear ones, by kind. Calls are counted once whatever the batch or length: one
``softmax`` call covers every head and every query of a layer.

A recurrent layer runs inside one fused call (``gru`` / ``lstm``) that applies its gates' sigmoids
and tanh at every one of the ``t`` steps; it is counted as one call of that kind.
"""

from __future__ import annotations

from collections import Counter

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from fromscratch.utils import evaluating

NONLINEAR_FUNCTIONS = {  # the PyTorch functions that apply a nonlinearity, and the kind each counts as
    torch.softmax: "softmax",
    F.softmax: "softmax",
    Tensor.softmax: "softmax",
    F.scaled_dot_product_attention: "softmax",  # the fast attention: softmax inside one fused call
    torch.relu: "relu",
    F.relu: "relu",
    Tensor.relu: "relu",
    F.gelu: "gelu",
    F.layer_norm: "layer norm",
    torch.tanh: "tanh",
    Tensor.tanh: "tanh",
    torch.sigmoid: "sigmoid",
    Tensor.sigmoid: "sigmoid",
    torch.gru: "gru (sigmoid, tanh at every step)",
    torch.lstm: "lstm (sigmoid, tanh at every step)",
}


class _Counting(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kind = NONLINEAR_FUNCTIONS.get(func)
        if kind is not None:
            self.counts[kind] += 1
        return func(*args, **(kwargs or {}))


def count_nonlinearities(model: nn.Module, tokens: Tensor, **kwargs) -> Counter[str]:
    """How many times each kind of nonlinear function runs in ``model(tokens, **kwargs)`` (eval mode).

    tokens: ``(b, t)`` token ids (or any input the model takes). Returns a :class:`~collections.Counter`
    such as ``{"softmax": 6, "relu": 6, "layer norm": 12}`` for the blog's six post-norm blocks.
    """
    counting = _Counting()
    with evaluating(model), torch.no_grad(), counting:
        model(tokens, **kwargs)
    return counting.counts


__all__ = ["NONLINEAR_FUNCTIONS", "count_nonlinearities"]
