"""fromscratch.interop: each weight table, checked against the reference module's own outputs.

The Hugging Face checks build a BertLayer from a tiny random BertConfig (no download) and skip
cleanly when ``transformers`` is not installed; the PyTorch checks always run.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fromscratch import interop
from fromscratch.attention import NarrowSelfAttention, SelfAttention, causal_mask
from fromscratch.attention.masks import padding_mask
from fromscratch.blocks import TransformerBlock, TransformerStack

TOL = dict(atol=1e-5, rtol=1e-4)


def padded_batch(b=3, t=7, e=16, seed=0):
    """Random inputs and a key-padding mask (True = real token) with sequences of lengths t, t-2, 1."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(b, t, e, generator=gen), padding_mask(torch.tensor([t, t - 2, 1][:b]), t)


def scramble(module: nn.Module) -> nn.Module:
    """Random weights everywhere, LayerNorms' 1s and 0s included, so every copied tensor is tested."""
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(std=0.3)
    return module.eval()


def hf():
    return pytest.importorskip("transformers")


# --- nn.MultiheadAttention -------------------------------------------------------------------------
@pytest.mark.parametrize("qkv_bias", [True, False])
def test_attention_to_and_from_multihead_attention(qkv_bias):
    torch.manual_seed(0)
    ours = scramble(SelfAttention(12, 3, qkv_bias=qkv_bias))
    theirs = interop.to_multihead_attention(ours).eval()
    x, mask = padded_batch(e=12)
    expected, _ = theirs(x, x, x, key_padding_mask=~mask)  # their True = blocked
    torch.testing.assert_close(ours(x, padding_mask=mask)[mask], expected[mask], **TOL)
    expected, _ = theirs(x, x, x, attn_mask=~causal_mask(7))
    torch.testing.assert_close(ours(x, attn_mask=causal_mask(7)), expected, **TOL)
    back = interop.from_multihead_attention(theirs)
    torch.testing.assert_close(back(x), ours(x), **TOL)
    if not qkv_bias:
        assert (theirs.in_proj_bias == 0).all()


def test_attention_weights_and_combined_masks_match_multihead_attention():
    torch.manual_seed(0)
    e, h = 12, 3
    ours = SelfAttention(e, h, qkv_bias=True)
    theirs = interop.to_multihead_attention(ours)  # weights and masks too
    x = torch.randn(2, 5, e)
    lengths = torch.tensor([5, 3])
    for mask in (None, padding_mask(lengths, 5)):
        weights = []
        out = ours(x, padding_mask=mask, attention=weights)
        weights = weights[0]
        # nn.MultiheadAttention's key_padding_mask has the opposite polarity: True = ignore.
        ref_out, ref_weights = theirs(x, x, x, key_padding_mask=None if mask is None else ~mask)
        torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(weights.mean(1), ref_weights, atol=1e-6, rtol=1e-4)
        torch.testing.assert_close(ours(x, padding_mask=mask), ref_out, atol=1e-5, rtol=1e-4)
    causal_out = ours.__class__(e, h, causal=True, qkv_bias=True)
    causal_out.load_state_dict(ours.state_dict())
    for mask in (None, padding_mask(lengths, 5)):  # causal=True combines with a key-padding mask
        ref, ref_weights = theirs(
            x, x, x, attn_mask=~causal_mask(5), key_padding_mask=None if mask is None else ~mask
        )
        weights = []
        out = causal_out(x, padding_mask=mask, attention=weights)
        weights = weights[0]
        torch.testing.assert_close(causal_out(x, padding_mask=mask), ref, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(weights.mean(1), ref_weights, atol=1e-6, rtol=1e-4)


def test_multihead_attention_with_biases_does_not_fit_ours_without():
    torch.manual_seed(1)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True)
    nn.init.normal_(theirs.in_proj_bias)
    with pytest.raises(ValueError, match="qkv_bias=True"):
        interop.copy_weights(
            SelfAttention(8, 2), theirs, interop.multihead_attention_table(qkv_bias=False), into="ours"
        )


# --- nn.TransformerEncoderLayer --------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_block_to_and_from_encoder_layer(norm, activation):
    torch.manual_seed(2)
    block = scramble(TransformerBlock(16, 4, norm=norm, activation=activation))
    layer = interop.to_encoder_layer(block).eval()
    assert layer.norm_first == (norm == "pre")
    x, mask = padded_batch(seed=2)
    expected = layer(x, src_key_padding_mask=~mask)  # PyTorch's key padding: True = blocked
    torch.testing.assert_close(block(x, padding_mask=mask)[mask], expected[mask], **TOL)
    torch.testing.assert_close(block(x), layer(x), **TOL)
    back = interop.from_encoder_layer(layer).eval()
    assert back.norm == norm and back.attention.to_queries.bias is not None
    torch.testing.assert_close(back(x), block(x), **TOL)


# --- the copy function's checks --------------------------------------------------------------------
def test_copy_checks_keys_and_shapes_before_copying():
    ours, theirs = SelfAttention(8, 2, qkv_bias=True), nn.MultiheadAttention(8, 2, batch_first=True)
    before = {k: v.clone() for k, v in theirs.state_dict().items()}
    with pytest.raises(
        ValueError, match=r"names 5 of our keys, the module has 8: not in the table \['to_keys.bias'"
    ):
        interop.copy_weights(ours, theirs, interop.multihead_attention_table(qkv_bias=False))
    with pytest.raises(ValueError, match="Shapes differ"):
        interop.copy_weights(SelfAttention(12, 2, qkv_bias=True), theirs, interop.multihead_attention_table())
    with pytest.raises(ValueError, match="Only standard heads"):
        interop.to_multihead_attention(NarrowSelfAttention(8, 2))
    with pytest.raises(ValueError, match="into must be"):
        interop.copy_weights(ours, theirs, interop.multihead_attention_table(), into="both")
    for key, value in theirs.state_dict().items():  # nothing was half-copied
        torch.testing.assert_close(value, before[key])


def test_transposed_weights_and_prefixes():
    """GPT-2's Conv1D keeps (in, out) matrices: the table lists them in ``transposed``."""

    class Conv1D(nn.Module):  # GPT-2's layout: y = x @ weight + bias, weight (in, out)
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight, self.bias = nn.Parameter(torch.randn(n_in, n_out)), nn.Parameter(torch.randn(n_out))

        def forward(self, x):
            return x @ self.weight + self.bias

    ours = nn.Sequential(nn.Linear(4, 6))
    theirs = nn.ModuleDict({"c_fc": Conv1D(4, 6)})
    table = interop.prefixed([("weight", "weight"), ("bias", "bias")], "0.", "c_fc.")
    interop.copy_weights(ours, theirs, table, into="ours", transposed={"c_fc.weight"})
    x = torch.randn(3, 4)
    torch.testing.assert_close(ours(x), theirs["c_fc"](x), **TOL)


# --- Hugging Face BertLayer ------------------------------------------------------------------------
def bert_config(layers: int = 1, act: str = "gelu", eps: float = 1e-12):
    return hf().BertConfig(
        hidden_size=16,
        num_attention_heads=4,
        intermediate_size=64,
        num_hidden_layers=layers,
        hidden_act=act,
        layer_norm_eps=eps,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )


def additive_mask(mask: torch.Tensor) -> torch.Tensor:
    """Our (b, t) key-padding mask as BERT's additive (b, 1, 1, t) mask: 0 to attend, -inf to block."""
    return torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))[:, None, None, :]


def first(output):
    return output[0] if isinstance(output, tuple) else output


@pytest.mark.parametrize("act, eps", [("gelu", 1e-12), ("relu", 1e-5)])
def test_block_from_bert_layer(act, eps):
    bert = hf().models.bert.modeling_bert
    torch.manual_seed(4)
    layer = scramble(bert.BertLayer(bert_config(act=act, eps=eps)))
    block = interop.from_bert_layer(layer).eval()
    assert block.norm1.eps == eps and isinstance(block.ff.net[1], nn.GELU if act == "gelu" else nn.ReLU)
    x, mask = padded_batch(seed=4)
    expected = first(layer(x, additive_mask(mask)))
    torch.testing.assert_close(block(x, padding_mask=mask)[mask], expected[mask], **TOL)


def test_block_to_bert_layer_zeroes_the_biases_we_lack():
    hf()
    torch.manual_seed(5)
    block = scramble(TransformerBlock(16, 4))  # the blog's block: ReLU, no q, k, v biases
    layer = interop.to_bert_layer(block).eval()
    assert (layer.attention.self.query.bias == 0).all()
    x, mask = padded_batch(seed=5)
    torch.testing.assert_close(
        block(x, padding_mask=mask)[mask], first(layer(x, additive_mask(mask)))[mask], **TOL
    )
    with pytest.raises(ValueError, match="post-norm"):
        interop.to_bert_layer(TransformerBlock(16, 4, norm="pre"))


def test_stack_matches_bert_encoder():
    """Two post-norm blocks = BERT's encoder (BERT adds its embeddings and their LayerNorm before it)."""
    bert = hf().models.bert.modeling_bert
    torch.manual_seed(6)
    encoder = bert.BertEncoder(bert_config(layers=2)).eval()
    stack = TransformerStack(vocab_size=30, emb=16, heads=4, depth=2, context=10).eval()
    stack.blocks = nn.ModuleList(interop.from_bert_layer(layer) for layer in encoder.layer)
    tokens = torch.randint(1, 30, (3, 7))
    _, mask = padded_batch()
    embedded = stack.token_embedding(tokens) + stack.positions.positions(7)  # (b, t, e)
    expected = encoder(embedded, additive_mask(mask)).last_hidden_state
    torch.testing.assert_close(stack(tokens, padding_mask=mask)[mask], expected[mask], **TOL)
