"""The position-wise feed-forward network of a block (chapter 05).

Every block ends with a small network applied to each position on its own. Vaswani et al. and the
blog use an MLP, ``FFN(x) = relu(x W1 + b1) W2 + b2``, four times wider than ``e`` inside; BERT
swaps the ReLU for the exact GELU, GPT-2 for its tanh approximation. Llama's gated SwiGLU is its
own (:mod:`fromscratch.models.llama`).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding.
"""

from __future__ import annotations

from functools import partial

from torch import Tensor, nn

# the blog's and Vaswani et al.'s; BERT's; GPT-2's "gelu_new" (tanh approximation, ~1e-3 from exact GELU)
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_tanh": partial(nn.GELU, approximate="tanh")}


class FeedForward(nn.Module):
    """``FFN(x) = act(x W1 + b1) W2 + b2``, ``ff_mult · e`` wide inside (the blog: 4, ReLU).

    ``activation``: ``"relu"``, ``"gelu"`` (exact, BERT) or ``"gelu_tanh"`` (GPT-2).
    x: ``(b, t, e)`` -> ``(b, t, e)``.
    """

    def __init__(self, emb: int, ff_mult: int = 4, dropout: float = 0.0, *, activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}.")
        self.activation = activation  # its name, for interop (a module can't say which GELU it is)
        self.net = nn.Sequential(
            nn.Linear(emb, ff_mult * emb),
            ACTIVATIONS[activation](),
            nn.Dropout(dropout),
            nn.Linear(ff_mult * emb, emb),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)  # (b, t, e)


__all__ = ["ACTIVATIONS", "FeedForward"]
