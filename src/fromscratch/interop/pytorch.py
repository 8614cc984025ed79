"""Our modules and other libraries' twins hold the same weights under other names (chapters 04-05).

A **weight table** is a list of ``(ours, theirs)`` pairs of state-dict keys. ``ours`` is one key,
a tuple of keys whose tensors *theirs* keeps stacked along dim 0 (``nn.MultiheadAttention``'s
``in_proj_weight`` holds the query, key and value projections), or None where ours has no such
weight and theirs must be zero (our query/key/value projections have no bias by default).
:func:`copy_weights` copies along a table in either direction, after checking that the table
names every key of both modules exactly once and that the shapes agree. Weights that a library
stores transposed (GPT-2's ``Conv1D``) are listed in ``transposed``.

The tables, and a pair of functions for each that build the twin module and copy into it:

- ``SelfAttention`` <-> ``nn.MultiheadAttention``: :func:`to_multihead_attention`,
  :func:`from_multihead_attention`;
- ``TransformerBlock`` <-> ``nn.TransformerEncoderLayer`` (post- and pre-norm):
  :func:`to_encoder_layer`, :func:`from_encoder_layer`;
- ``TransformerBlock`` <-> Hugging Face's ``BertLayer`` (post-norm, query/key/value biases, GELU,
  LayerNorm eps 1e-12): :func:`to_bert_layer`, :func:`from_bert_layer`.

The copies compute the same function in eval mode; dropout is not carried over (the twins are
built with dropout 0). Mind the masks: ours say True = may attend, ``nn.MultiheadAttention``'s and
``nn.TransformerEncoderLayer``'s boolean masks say True = blocked (pass ``~padding_mask``), and
BERT takes an additive mask (0 to attend, -inf to block). Later chapters add whole-model tables
(GPT-2, BERT) built from these with :func:`prefixed`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fromscratch.attention.core import SelfAttention
from fromscratch.blocks.transformer import TransformerBlock

Ours = str | tuple[str, ...] | None
Table = list[tuple[Ours, str]]
QKV = ("to_queries", "to_keys", "to_values")
DIRECTIONS = ("theirs", "ours")


# --- tables ------------------------------------------------------------------------------------------
def _weight_and_bias(ours: str, theirs: str) -> Table:
    """The ``weight`` and ``bias`` of one layer (a Linear or a LayerNorm) under both names."""
    return [(f"{ours}.{p}", f"{theirs}.{p}") for p in ("weight", "bias")]


def prefixed(table: Table, ours: str, theirs: str) -> Table:
    """``table`` for submodules: every our key gets the prefix ``ours``, every their key ``theirs``."""

    def add(key: Ours) -> Ours:
        if key is None:
            return None
        return ours + key if isinstance(key, str) else tuple(ours + k for k in key)

    return [(add(o), theirs + t) for o, t in table]


def multihead_attention_table(qkv_bias: bool = True) -> Table:
    """``SelfAttention`` (standard heads) <-> ``nn.MultiheadAttention``: q, k, v stacked in ``in_proj``."""
    return [
        (tuple(f"{p}.weight" for p in QKV), "in_proj_weight"),  # (3e, e)
        (tuple(f"{p}.bias" for p in QKV) if qkv_bias else None, "in_proj_bias"),  # (3e,)
        *_weight_and_bias("unify_heads", "out_proj"),
    ]


def encoder_layer_table(qkv_bias: bool = False) -> Table:
    """``TransformerBlock`` <-> ``nn.TransformerEncoderLayer`` (the same sub-layers in the same order)."""
    return [
        *prefixed(multihead_attention_table(qkv_bias), "attention.", "self_attn."),
        *_weight_and_bias("ff.net.0", "linear1"),  # e -> ff_mult·e
        *_weight_and_bias("ff.net.3", "linear2"),  # ff_mult·e -> e
        *_weight_and_bias("norm1", "norm1"),
        *_weight_and_bias("norm2", "norm2"),
    ]


def bert_layer_table(qkv_bias: bool = True) -> Table:
    """A post-norm ``TransformerBlock`` <-> Hugging Face's ``BertLayer``."""
    projections = [
        ("attention.to_queries", "attention.self.query"),
        ("attention.to_keys", "attention.self.key"),
        ("attention.to_values", "attention.self.value"),
    ]
    return [
        *((f"{o}.weight", f"{t}.weight") for o, t in projections),
        *((f"{o}.bias" if qkv_bias else None, f"{t}.bias") for o, t in projections),
        *_weight_and_bias("attention.unify_heads", "attention.output.dense"),
        *_weight_and_bias("norm1", "attention.output.LayerNorm"),
        *_weight_and_bias("ff.net.0", "intermediate.dense"),
        *_weight_and_bias("ff.net.3", "output.dense"),
        *_weight_and_bias("norm2", "output.LayerNorm"),
    ]


# --- the one copy function ---------------------------------------------------------------------------
def _check_keys(side: str, state: dict[str, torch.Tensor], keys: Sequence[str]) -> None:
    """The table must name every key of ``state`` exactly once."""
    missing, unknown = sorted(set(state) - set(keys)), sorted(set(keys) - set(state))
    if len(keys) != len(set(keys)) or len(keys) != len(state) or missing or unknown:
        raise ValueError(
            f"The table names {len(keys)} of {side} keys, the module has {len(state)}: "
            f"not in the table {missing}, not in the module {unknown}. Build the two modules with "
            f"matching options (biases, standard heads), or fix the table."
        )


def copy_weights(
    ours: nn.Module,
    theirs: nn.Module,
    table: Table,
    *,
    into: str = "theirs",
    transposed: Collection[str] = (),
) -> None:
    """Copy weights between ``ours`` and ``theirs`` along ``table``: into ``theirs`` or into ``ours``.

    Checks first that the table names every state-dict key of both modules once (equal key counts)
    and that every pair of tensors has the same shape; ``transposed`` lists their keys stored as
    the transpose of ours. Copying into ours, a their tensor paired with None must be all zeros.
    """
    if into not in DIRECTIONS:
        raise ValueError(f"into must be 'theirs' or 'ours', got {into!r}.")
    our_state, their_state = ours.state_dict(), theirs.state_dict()  # tensors sharing the modules' storage
    links = [((o,) if isinstance(o, str) else (o or ()), t) for o, t in table]
    _check_keys("our", our_state, [k for names, _ in links for k in names])
    _check_keys("their", their_state, [t for _, t in links])
    for names, t in links:
        if not names:
            continue
        mine = [our_state[k] for k in names]
        stacked = (sum(m.shape[0] for m in mine), *mine[0].shape[1:])  # their shape, ours stacked along dim 0
        their_shape = tuple(their_state[t].t().shape if t in transposed else their_state[t].shape)
        if any(m.shape[1:] != mine[0].shape[1:] for m in mine) or tuple(stacked) != their_shape:
            raise ValueError(
                f"Shapes differ: ours {names} {[tuple(m.shape) for m in mine]}, theirs {t!r} "
                f"{their_shape}{' (transposed)' if t in transposed else ''}; build the two modules "
                f"with the same sizes."
            )
    with torch.no_grad():
        for names, t in links:
            their = their_state[t].t() if t in transposed else their_state[t]  # a view: writes reach theirs
            if not names:
                if into == "theirs":
                    their.zero_()
                elif their.any():
                    raise ValueError(
                        f"Their {t!r} is not zero, but ours has no such weight; build ours with "
                        f"the bias (qkv_bias=True)."
                    )
                continue
            parts = their.split([our_state[k].shape[0] for k in names])  # views of theirs, one per our key
            for key, part in zip(names, parts, strict=True):
                source, target = (our_state[key], part) if into == "theirs" else (part, our_state[key])
                target.copy_(source)


# --- building the twins ------------------------------------------------------------------------------
def _activation_name(activation) -> str:
    """ "relu" or "gelu" (exact): which one a library's activation function computes."""
    probe = torch.linspace(-4, 4, 81)
    for name, reference in (("relu", F.relu), ("gelu", F.gelu)):
        if torch.allclose(activation(probe), reference(probe), atol=1e-6):
            return name
    raise ValueError(f"Unsupported activation {activation}: our FeedForward has 'relu' and 'gelu' (exact).")


def _our_activation(ff: nn.Module) -> str:
    """The activation of our feed-forward ``ff`` by name, for the library layers ('relu' or 'gelu')."""
    if ff.activation not in ("relu", "gelu"):
        raise ValueError(
            f"The library layers take 'relu' and 'gelu' (exact); this block uses {ff.activation!r}."
        )
    return ff.activation


def _check_standard(attention: SelfAttention) -> None:
    if type(attention) is not SelfAttention:
        raise ValueError(
            f"Only standard heads (SelfAttention) have a twin in other libraries, "
            f"got {type(attention).__name__}."
        )


def _with_eps(block: TransformerBlock, eps: float) -> TransformerBlock:
    """``block`` with both LayerNorms' epsilon set to ``eps`` (PyTorch's default 1e-5, BERT's 1e-12)."""
    block.norm1.eps = block.norm2.eps = eps
    return block


def to_multihead_attention(attention: SelfAttention) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention`` (batch_first) holding our weights; zero q, k, v biases if we have none.

    For ``causal=True``, call it with ``attn_mask=~causal_mask(t)`` (their True = blocked).
    """
    _check_standard(attention)
    twin = nn.MultiheadAttention(attention.emb, attention.heads, batch_first=True)
    copy_weights(attention, twin, multihead_attention_table(attention.to_queries.bias is not None))
    return twin


def from_multihead_attention(mha: nn.MultiheadAttention) -> SelfAttention:
    """Our ``SelfAttention`` (standard, with q, k, v biases) holding the weights of ``mha``."""
    ours = SelfAttention(mha.embed_dim, mha.num_heads, qkv_bias=True)
    copy_weights(ours, mha, multihead_attention_table(qkv_bias=True), into="ours")
    return ours


def to_encoder_layer(block: TransformerBlock) -> nn.TransformerEncoderLayer:
    """An ``nn.TransformerEncoderLayer`` (batch_first, the block's norm placement) holding our weights."""
    attention = block.attention
    _check_standard(attention)
    twin = nn.TransformerEncoderLayer(
        attention.emb,
        attention.heads,
        dim_feedforward=block.ff.net[0].out_features,
        dropout=0.0,
        activation=_our_activation(block.ff),
        layer_norm_eps=block.norm1.eps,
        batch_first=True,
        norm_first=block.norm == "pre",
    )
    copy_weights(block, twin, encoder_layer_table(attention.to_queries.bias is not None))
    return twin


def from_encoder_layer(layer: nn.TransformerEncoderLayer) -> TransformerBlock:
    """Our ``TransformerBlock`` (with q, k, v biases) holding the weights of ``layer``."""
    emb, hidden = layer.linear1.in_features, layer.linear1.out_features
    if hidden % emb:
        raise ValueError(f"The feed-forward width {hidden} is not a multiple of the embedding width {emb}.")
    ours = TransformerBlock(
        emb,
        layer.self_attn.num_heads,
        ff_mult=hidden // emb,
        norm="pre" if layer.norm_first else "post",
        qkv_bias=True,
        activation=_activation_name(layer.activation),
    )
    ours = _with_eps(ours, layer.norm1.eps)
    copy_weights(ours, layer, encoder_layer_table(qkv_bias=True), into="ours")
    return ours


def to_bert_layer(block: TransformerBlock) -> nn.Module:
    """A Hugging Face ``BertLayer`` (eager attention, no dropout) holding our post-norm block's weights."""
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    attention = block.attention
    _check_standard(attention)
    if block.norm != "post":
        raise ValueError("BERT's layer is post-norm; only a block with norm='post' has a BertLayer twin.")
    config = BertConfig(
        hidden_size=attention.emb,
        num_attention_heads=attention.heads,
        intermediate_size=block.ff.net[0].out_features,
        hidden_act=_our_activation(block.ff),
        layer_norm_eps=block.norm1.eps,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )
    twin = BertLayer(config)
    copy_weights(block, twin, bert_layer_table(attention.to_queries.bias is not None))
    return twin


def from_bert_layer(layer: nn.Module) -> TransformerBlock:
    """Our post-norm ``TransformerBlock`` (q, k, v biases, BERT's activation and eps) holding
    ``layer``'s weights.
    """
    emb, hidden = layer.intermediate.dense.in_features, layer.intermediate.dense.out_features
    if hidden % emb:
        raise ValueError(f"The feed-forward width {hidden} is not a multiple of the embedding width {emb}.")
    ours = TransformerBlock(
        emb,
        layer.attention.self.num_attention_heads,
        ff_mult=hidden // emb,
        norm="post",
        qkv_bias=True,
        activation=_activation_name(layer.intermediate.intermediate_act_fn),
    )
    ours = _with_eps(ours, layer.attention.output.LayerNorm.eps)
    copy_weights(ours, layer, bert_layer_table(qkv_bias=True), into="ours")
    return ours
