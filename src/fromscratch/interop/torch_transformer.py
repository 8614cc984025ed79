"""Our encoder-decoder and ``torch.nn.Transformer`` hold the same weights under other names (chapter 09).

``nn.Transformer`` is the two stacks without embeddings or output layer: ``encoder.layers.i``
(``nn.TransformerEncoderLayer``, our :class:`~fromscratch.blocks.TransformerBlock`),
``decoder.layers.i`` (``nn.TransformerDecoderLayer``, our
:class:`~fromscratch.models.encoder_decoder.DecoderBlock`: ``self_attn``, ``multihead_attn`` for
cross-attention, ``linear1``/``linear2``, ``norm1``-``norm3``) and, for pre-norm, a final
``encoder.norm`` and ``decoder.norm``. :func:`to_transformer` builds the twin of our stacks and copies
our weights into it; :func:`transformer_logits` runs our embeddings, their stacks and our output
layer, which must give our logits. Their boolean masks mean True = *blocked*, the opposite of ours.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from fromscratch.interop.pytorch import (
    _our_activation,
    _weight_and_bias,
    copy_weights,
    encoder_layer_table,
    multihead_attention_table,
    prefixed,
)
from fromscratch.models.encoder_decoder import EncoderDecoder

Table = list


def decoder_layer_table(qkv_bias: bool = False) -> Table:
    """``DecoderBlock`` <-> ``nn.TransformerDecoderLayer``."""
    return [
        *prefixed(multihead_attention_table(qkv_bias), "self_attention.", "self_attn."),
        *prefixed(multihead_attention_table(qkv_bias), "cross_attention.", "multihead_attn."),
        *_weight_and_bias("ff.net.0", "linear1"),
        *_weight_and_bias("ff.net.3", "linear2"),
        *_weight_and_bias("norm1", "norm1"),
        *_weight_and_bias("norm2", "norm2"),
        *_weight_and_bias("norm3", "norm3"),
    ]


def transformer_table(encoder_depth: int, decoder_depth: int, norm: str = "post") -> Table:
    """Our two stacks (``encoder.i``, ``decoder.i``, ``encoder_norm``, ``decoder_norm``) <->
    ``nn.Transformer``.
    """
    table = []
    for i in range(encoder_depth):
        table += prefixed(encoder_layer_table(), f"encoder.{i}.", f"encoder.layers.{i}.")
    for i in range(decoder_depth):
        table += prefixed(decoder_layer_table(), f"decoder.{i}.", f"decoder.layers.{i}.")
    if norm == "pre":
        table += _weight_and_bias("encoder_norm", "encoder.norm") + _weight_and_bias(
            "decoder_norm", "decoder.norm"
        )
    return table


class _Stacks(nn.Module):
    """A view of our model with only the parts ``nn.Transformer`` has (shares the parameters)."""

    def __init__(self, model: EncoderDecoder) -> None:
        super().__init__()
        self.encoder, self.decoder = model.encoder, model.decoder
        self.encoder_norm, self.decoder_norm = model.encoder_norm, model.decoder_norm


def to_transformer(model: EncoderDecoder) -> nn.Transformer:
    """An ``nn.Transformer`` (batch_first, dropout 0) holding the weights of our model's two stacks."""
    c = model.config
    pre = c.norm == "pre"
    options = dict(dim_feedforward=c.ff_mult * c.emb, dropout=0.0, batch_first=True, norm_first=pre)
    options["activation"] = _our_activation(model.encoder[0].ff) if c.encoder_depth else "relu"
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(c.emb, c.heads, **options),
        c.encoder_depth,
        norm=nn.LayerNorm(c.emb) if pre else None,
        enable_nested_tensor=False,
    )
    decoder = nn.TransformerDecoder(
        nn.TransformerDecoderLayer(c.emb, c.heads, **options),
        c.decoder_depth,
        norm=nn.LayerNorm(c.emb) if pre else None,
    )
    twin = nn.Transformer(c.emb, c.heads, custom_encoder=encoder, custom_decoder=decoder, batch_first=True)
    copy_weights(_Stacks(model), twin, transformer_table(c.encoder_depth, c.decoder_depth, c.norm))
    return twin


def load_from_transformer(model: EncoderDecoder, twin: nn.Transformer) -> EncoderDecoder:
    """Copy the weights of ``twin``'s two stacks into ``model`` (the reverse of :func:`to_transformer`)."""
    c = model.config
    copy_weights(
        _Stacks(model), twin, transformer_table(c.encoder_depth, c.decoder_depth, c.norm), into="ours"
    )
    return model


def _blocked(mask: Tensor | None) -> Tensor | None:
    """Our padding mask (True = real token) in ``nn.Transformer``'s meaning (True = blocked)."""
    return None if mask is None else ~mask


def transformer_logits(
    model: EncoderDecoder,
    twin: nn.Transformer,
    src: Tensor,
    tgt_in: Tensor,
    src_padding_mask: Tensor | None = None,
    tgt_padding_mask: Tensor | None = None,
) -> Tensor:
    """Our embeddings -> ``twin``'s stacks -> our output layer: logits ``(b, tt, V)``.

    Masks are ours (True = real token); they are inverted for ``nn.Transformer``. In eval mode this
    equals ``model(src, tgt_in, src_padding_mask)`` at every real target position.
    """
    x = model._embed(src, model.src_embedding, model.src_positions, "src")  # (b, ts, e)
    y = model._embed(tgt_in, model.tgt_embedding, model.tgt_positions, "tgt_in")  # (b, tt, e)
    causal = nn.Transformer.generate_square_subsequent_mask(
        tgt_in.size(1), dtype=torch.bool
    )  # True = blocked
    out = twin(
        x,
        y,
        tgt_mask=causal,
        src_key_padding_mask=_blocked(src_padding_mask),
        tgt_key_padding_mask=_blocked(tgt_padding_mask),
        memory_key_padding_mask=_blocked(src_padding_mask),
        tgt_is_causal=True,
    )  # (b, tt, e)
    return model.to_logits(out)  # (b, tt, V)


__all__ = [
    "decoder_layer_table",
    "load_from_transformer",
    "to_transformer",
    "transformer_logits",
    "transformer_table",
]
