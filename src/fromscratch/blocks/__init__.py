"""Transformer blocks (chapter 05) and LoRA (chapter 15).

- :mod:`~fromscratch.blocks.transformer`: ``TransformerBlock``, ``TransformerStack`` and its
  ``StackConfig`` (chapters 05-09);
- :mod:`~fromscratch.blocks.feedforward`: the position-wise ``FeedForward`` (chapter 05);
- :mod:`~fromscratch.blocks.lora`: ``LoRALinear`` and ``add_lora`` (chapter 15).

Imports only :mod:`fromscratch.attention`.
"""

from fromscratch.blocks.feedforward import ACTIVATIONS, FeedForward
from fromscratch.blocks.transformer import StackConfig, TransformerBlock, TransformerStack

__all__ = ["ACTIVATIONS", "FeedForward", "StackConfig", "TransformerBlock", "TransformerStack"]
