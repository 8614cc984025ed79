"""The position-wise feed-forward network of a block: an MLP (chapter 05) or SwiGLU (chapter 14).

Every block ends with a small network applied to each position on its own. Vaswani et al. and the
blog use an MLP, ``FFN(x) = relu(x W1 + b1) W2 + b2``, four times wider than ``e`` inside; BERT and
GPT-2 swap the ReLU for a GELU.

**SwiGLU** (Shazeer 2020, "GLU variants improve transformer") is a *gated* linear unit: two
projections of ``x`` side by side, one passed through SiLU (``silu(z) = z · sigmoid(z)``) and used
as a gate on the other, then a projection back::

    SwiGLU(x) = (silu(x W_gate) ⊙ x W_up) W_down

Three matrices instead of two, so at equal parameters the hidden width is ``2/3`` of the MLP's:
an MLP of width ``4e`` holds ``8e²`` weights, SwiGLU of width ``8e/3`` holds ``3 · e · 8e/3 = 8e²``
(:func:`swiglu_hidden`). Llama rounds that width up to a multiple of 256; Shazeer found the gated
variants better than ReLU or GELU at equal cost, and PaLM and Llama adopted it. Llama has no biases.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding.
"""

from __future__ import annotations

from functools import partial

import torch.nn.functional as F
from torch import Tensor, nn

# the blog's and Vaswani et al.'s; BERT's; GPT-2's "gelu_new" (tanh approximation, ~1e-3 from exact GELU)
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_tanh": partial(nn.GELU, approximate="tanh")}
FEEDFORWARDS = ("mlp", "swiglu")  # FeedForward (chapter 05), SwiGLU (chapter 14)


class FeedForward(nn.Module):
    """The position-wise feed-forward network: one small MLP applied to every position alone.

    ``FFN(x) = relu(x W1 + b1) W2 + b2`` with a hidden layer ``ff_mult`` times wider than ``e``
    (the blog and Vaswani et al.: 4), or exactly ``hidden`` wide when given. ``activation="gelu"``
    (the exact, erf-based GELU) replaces the ReLU, as in BERT; ``bias=False`` drops ``b1`` and ``b2``.
    x: ``(b, t, e)`` -> ``(b, t, e)``.
    """

    def __init__(
        self,
        emb: int,
        ff_mult: int = 4,
        dropout: float = 0.0,
        *,
        activation: str = "relu",
        hidden: int | None = None,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}.")
        width = ff_mult * emb if hidden is None else hidden
        self.activation = activation  # its name, for interop (a module can't say which GELU it is)
        self.net = nn.Sequential(
            nn.Linear(emb, width, bias=bias),
            ACTIVATIONS[activation](),
            nn.Dropout(dropout),
            nn.Linear(width, emb, bias=bias),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)  # (b, t, e)


class SwiGLU(nn.Module):
    """The gated feed-forward of Llama: ``down(silu(gate(x)) * up(x))``, ``hidden`` wide inside.

    ``gate`` and ``up``: ``e -> hidden``; ``down``: ``hidden -> e`` (Hugging Face's ``gate_proj``,
    ``up_proj``, ``down_proj``; llama2.c's ``w1``, ``w3``, ``w2``). No biases unless ``bias=True``.
    x: ``(b, t, e)`` -> ``(b, t, e)``.
    """

    def __init__(self, emb: int, hidden: int, dropout: float = 0.0, *, bias: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(emb, hidden, bias=bias)
        self.up = nn.Linear(emb, hidden, bias=bias)
        self.down = nn.Linear(hidden, emb, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        gated = F.silu(self.gate(x)) * self.up(x)  # (b, t, hidden): silu(z) = z · sigmoid(z)
        return self.down(self.dropout(gated))  # (b, t, e)


def swiglu_hidden(emb: int, ff_mult: int = 4, multiple_of: int = 1) -> int:
    """SwiGLU's hidden width with as many weights as an MLP of width ``ff_mult · e``: ``2/3`` of it,
    rounded up to a multiple of ``multiple_of`` (Llama: 256). ``swiglu_hidden(768) == 2048``."""
    width = 2 * ff_mult * emb // 3
    return -(-width // multiple_of) * multiple_of


def make_feedforward(
    kind: str,
    emb: int,
    hidden: int,
    dropout: float = 0.0,
    *,
    activation: str = "relu",
    bias: bool = True,
) -> nn.Module:
    """A feed-forward by name, ``hidden`` wide: ``"mlp"`` (:class:`FeedForward` with ``activation``)
    or ``"swiglu"`` (:class:`SwiGLU`). ``bias`` says whether its linear layers have biases."""
    if kind == "mlp":
        return FeedForward(emb, dropout=dropout, activation=activation, hidden=hidden, bias=bias)
    if kind == "swiglu":
        return SwiGLU(emb, hidden, dropout, bias=bias)
    raise ValueError(f"feedforward must be one of {', '.join(map(repr, FEEDFORWARDS))}; got {kind!r}.")


__all__ = ["ACTIVATIONS", "FEEDFORWARDS", "FeedForward", "SwiGLU", "make_feedforward", "swiglu_hidden"]
