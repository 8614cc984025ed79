"""Transformer blocks (chapter 05): self-attention and a feed-forward, each with a residual and a norm,
and the stack of blocks with token and position embeddings that the classifier and generator use.

- :mod:`~fromscratch.blocks.transformer`: ``TransformerBlock`` (GPT-2's or Llama's by its options) and
  ``TransformerStack``;
- :mod:`~fromscratch.blocks.feedforward`: the MLP ``FeedForward`` (ch. 05) and ``SwiGLU`` (ch. 14);
- :mod:`~fromscratch.blocks.norms`: ``RMSNorm`` beside ``nn.LayerNorm`` (ch. 14).

Imports only :mod:`fromscratch.attention`.
"""

from fromscratch.blocks.feedforward import (
    ACTIVATIONS,
    FEEDFORWARDS,
    FeedForward,
    SwiGLU,
    make_feedforward,
    swiglu_hidden,
)
from fromscratch.blocks.norms import NORM_KINDS, RMSNorm, make_norm
from fromscratch.blocks.transformer import (
    NORMS,
    POSITIONS,
    TransformerBlock,
    TransformerStack,
)

__all__ = [
    "ACTIVATIONS",
    "FEEDFORWARDS",
    "NORMS",
    "NORM_KINDS",
    "POSITIONS",
    "FeedForward",
    "RMSNorm",
    "SwiGLU",
    "TransformerBlock",
    "TransformerStack",
    "make_feedforward",
    "make_norm",
    "swiglu_hidden",
]
