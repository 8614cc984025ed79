"""Path lengths: how many steps separate two positions in each kind of sequence model (chapter 08).

Vaswani et al. (2017, Table 1) compare self-attention, recurrent and convolutional layers on three
counts, for a sequence of ``n = t`` positions of width ``d = e``:

================  =====================  ==============  =========================
layer             operations per layer   sequential ops  max path length
================  =====================  ==============  =========================
self-attention    ``t² e``               1               1
recurrent         ``t e²``               ``t``           ``t - 1``
convolutional     ``kernel t e²``        1               layers to reach ``t - 1``
================  =====================  ==============  =========================

The functions below give these counts for our models; :func:`gradient_map` *measures* which inputs
can influence an output (a nonzero gradient means some path connects them), so tests and the
chapter can check each count against the model itself.

Our convolutions are centred: with ``r = (kernel - 1) // 2`` a block sees ``r`` positions to either
side, times its dilation. Dilation doubles per block (WaveNet), so the dilated reach grows as
``2**layers`` (``log2`` layers, where the paper's dilation by ``kernel`` gives ``log_kernel``).
A *pooled* classifier compares two tokens ``d`` apart where one output sees both, which a centred
window does once its reach is ``ceil(d / 2)``.

Shape legend: ``t`` length, ``e`` embedding.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from fromscratch.models.encoders import ENCODERS
from fromscratch.utils import evaluating


def _radius(kernel: int) -> int:
    if kernel < 3 or kernel % 2 == 0:
        raise ValueError(
            f"kernel must be odd and at least 3 (a kernel of 1 never mixes positions); got {kernel}."
        )
    return (kernel - 1) // 2


def conv_reach(layers: int, kernel: int, *, dilated: bool = False) -> int:
    """How far an output of ``layers`` centred convolutions sees: inputs ``i - reach .. i + reach``.

    ``r * layers`` with ``r = (kernel - 1) // 2``; dilated (1, 2, 4, ...): ``r * (2**layers - 1)``.
    """
    if layers < 0:
        raise ValueError(f"layers must be 0 or more; got {layers}.")
    r = _radius(kernel)
    return r * (2**layers - 1) if dilated else r * layers


def conv_layers_needed(d: int, kernel: int, *, dilated: bool = False) -> int:
    """The fewest centred convolution layers whose output at ``i`` sees the input at ``i - d``.

    ``ceil(d / r)`` (``O(t / kernel)`` for ``d = t - 1``); dilated: ``ceil(log2(d / r + 1))``
    (``O(log t)``). The inverse of :func:`conv_reach`.
    """
    if d < 0:
        raise ValueError(f"the distance d must be 0 or more; got {d}.")
    r = _radius(kernel)
    if not dilated:
        return -(-d // r)
    layers = 0
    while conv_reach(layers, kernel, dilated=True) < d:  # exact in integers, unlike log2
        layers += 1
    return layers


def rnn_sequential_steps(t: int) -> int:
    """Steps a recurrent layer takes one after another over ``t`` tokens: ``t`` (each needs the last)."""
    if t < 1:
        raise ValueError(f"t must be at least 1; got {t}.")
    return t


def max_path_length(encoder: str, t: int, *, kernel: int = 3, dilated: bool = False) -> float:
    """The longest path between two of ``t`` positions (Vaswani et al. 2017, Table 1).

    "transformer": 1 (every position attends to every other); "rnn": ``t - 1`` (first to last,
    one step at a time); "cnn": :func:`conv_layers_needed` for ``d = t - 1``; "bag": ``math.inf``
    (positions never meet before pooling).
    """
    if encoder not in ENCODERS:
        raise ValueError(f"encoder must be one of {', '.join(ENCODERS)}; got {encoder!r}.")
    if t < 1:
        raise ValueError(f"t must be at least 1; got {t}.")
    if t == 1:
        return 0
    if encoder == "cnn":
        return conv_layers_needed(t - 1, kernel, dilated=dilated)
    return {"bag": math.inf, "rnn": t - 1, "transformer": 1}[encoder]


def layer_costs(
    encoder: str, t: int, *, emb: int, kernel: int = 3, dilated: bool = False
) -> dict[str, float]:
    """One row of Vaswani et al.'s Table 1 for our models, with the constants left out.

    Returns ``{"operations": ..., "sequential": ..., "max_path": ...}``: multiply-adds of one
    mixing layer (attention ``t² e``, recurrent ``t e²``, convolution ``kernel t e²``, bag 0: it has
    no mixing layer), sequential steps of that layer (recurrent ``t``, others 1, bag 0) and
    :func:`max_path_length`.
    """
    operations = {"bag": 0, "rnn": t * emb**2, "cnn": kernel * t * emb**2, "transformer": t**2 * emb}
    sequential = {"bag": 0, "rnn": rnn_sequential_steps(t), "cnn": 1, "transformer": 1}
    max_path = max_path_length(encoder, t, kernel=kernel, dilated=dilated)  # checks encoder and t
    return {"operations": operations[encoder], "sequential": sequential[encoder], "max_path": max_path}


# --- measuring it --------------------------------------------------------------------------------
def gradient_map(encoder: nn.Module, t: int, *, outputs: list[int] | None = None, seed: int = 0) -> Tensor:
    """How strongly each input position can move each output position: ``(len(outputs), t)``.

    ``encoder`` maps token ids ``(1, t)`` to ``(1, t, e)`` and has a ``token_embedding`` (every
    encoder of chapter 08, and :class:`~fromscratch.blocks.TransformerStack`). On ``t`` seeded
    random tokens (no padding, eval mode), row ``i`` holds, for each input position ``j``, the norm
    of the gradient of output ``outputs[i]`` (read along a random direction: a LayerNorm's outputs
    sum to zero) with respect to the embedding of token ``j``. Zero means no path from ``j`` to that
    output. ``outputs``: positions (negative ones count from the end); None: all ``t``. Through many
    layers a gradient can shrink below float32's range; measure a ``encoder.double()`` copy then.
    """
    embedding = encoder.token_embedding
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, embedding.num_embeddings, (1, t), generator=generator)  # (1, t), never id 0
    captured = []
    handle = embedding.register_forward_hook(lambda module, args, out: captured.append(out))
    try:
        with evaluating(encoder), torch.enable_grad():
            out = encoder(tokens)  # (1, t, e)
    finally:
        handle.remove()
    inputs = captured[0]  # (1, t, e): the token embeddings, before anything else is added
    direction = torch.randn(out.size(-1), generator=generator).to(out.dtype)  # (e,); float64 models too
    rows = []
    for position in range(t) if outputs is None else outputs:
        (grad,) = torch.autograd.grad(out[0, position] @ direction, inputs, retain_graph=True)  # (1, t, e)
        rows.append(grad[0].norm(dim=-1))  # (t,)
    return torch.stack(rows)  # (len(outputs), t)


def farthest_reachable(encoder: nn.Module, t: int, *, position: int = -1, seed: int = 0) -> int:
    """The largest distance ``|j - position|`` of an input ``j`` with a nonzero gradient on that output.

    The measured counterpart of :func:`conv_reach` (a CNN's output at the end sees ``reach`` inputs
    back) and of :func:`max_path_length`'s ``t - 1`` for a recurrent network read at the last position.
    """
    reached = gradient_map(encoder, t, outputs=[position], seed=seed)[0] > 0  # (t,)
    distance = (torch.arange(t) - position % t).abs()  # (t,)
    return int(distance[reached].max())


__all__ = [
    "conv_layers_needed",
    "conv_reach",
    "farthest_reachable",
    "gradient_map",
    "layer_costs",
    "max_path_length",
    "rnn_sequential_steps",
]
