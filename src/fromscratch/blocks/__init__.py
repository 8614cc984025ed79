"""Transformer blocks (chapter 05): self-attention and a feed-forward, each with a residual and a norm,
and the stack of blocks with token and position embeddings that the classifier and generator use.

Imports only :mod:`fromscratch.attention`.
"""

from fromscratch.blocks.transformer import (
    ACTIVATIONS,
    NORMS,
    POSITIONS,
    FeedForward,
    TransformerBlock,
    TransformerStack,
)

__all__ = ["ACTIVATIONS", "NORMS", "POSITIONS", "FeedForward", "TransformerBlock", "TransformerStack"]
