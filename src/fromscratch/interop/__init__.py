"""Our modules and other libraries' twins hold the same weights under other names.

One module per library whose models we compare with:

- :mod:`fromscratch.interop.pytorch`: weight tables and :func:`copy_weights`; ``SelfAttention`` <->
  ``nn.MultiheadAttention``, ``TransformerBlock`` <-> ``nn.TransformerEncoderLayer`` and Hugging
  Face's ``BertLayer`` (chapters 04-05).
"""

from fromscratch.interop.pytorch import (
    bert_layer_table,
    copy_weights,
    encoder_layer_table,
    from_bert_layer,
    from_encoder_layer,
    from_multihead_attention,
    multihead_attention_table,
    prefixed,
    to_bert_layer,
    to_encoder_layer,
    to_multihead_attention,
)

__all__ = [
    "bert_layer_table",
    "copy_weights",
    "encoder_layer_table",
    "from_bert_layer",
    "from_encoder_layer",
    "from_multihead_attention",
    "multihead_attention_table",
    "prefixed",
    "to_bert_layer",
    "to_encoder_layer",
    "to_multihead_attention",
]
