"""Recurrence and convolution next to attention, measured (chapter 08).

``encoders``: :class:`BagEncoder`, :class:`RecurrentEncoder` (GRU/LSTM) and :class:`ConvEncoder`,
each token ids ``(b, t)`` -> ``(b, t, e)`` like :class:`~fromscratch.blocks.TransformerStack`;
``paths``: Vaswani et al.'s (2017) Table 1 for our models (path lengths, sequential steps,
receptive fields) and :func:`gradient_map`, which measures which inputs reach which outputs.
:class:`~fromscratch.models.SequenceClassifier` puts any of the four under one classification head.
"""

from fromscratch.sequence.encoders import CELLS, BagEncoder, ConvBlock, ConvEncoder, RecurrentEncoder
from fromscratch.sequence.paths import (
    ENCODERS,
    conv_layers_needed,
    conv_reach,
    farthest_reachable,
    gradient_map,
    layer_costs,
    max_path_length,
    rnn_sequential_steps,
)

__all__ = [
    "CELLS",
    "ENCODERS",
    "BagEncoder",
    "ConvBlock",
    "ConvEncoder",
    "RecurrentEncoder",
    "conv_layers_needed",
    "conv_reach",
    "farthest_reachable",
    "gradient_map",
    "layer_costs",
    "max_path_length",
    "rnn_sequential_steps",
]
