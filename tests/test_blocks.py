"""The transformer block, feed-forward and positions (chapter 05), checked against PyTorch's and
Hugging Face's encoder layers with copied weights."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from fromscratch.blocks import (FeedForward, PositionEmbedding, PositionEncoding, TransformerBlock,
                                TransformerStack, count_parameters, sinusoidal_encoding)

TOL = dict(atol=1e-5, rtol=1e-4)


def padded_batch(b=3, t=7, e=16, seed=0):
    """Random inputs and a key-padding mask (True = real token) with sequences of lengths t, t-2, 1."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(b, t, e, generator=gen)
    lengths = torch.tensor([t, t - 2, 1][:b])
    mask = torch.arange(t)[None, :] < lengths[:, None]  # (b, t)
    return x, mask


# --- shapes, options, errors -----------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_block_shapes_and_attention(norm):
    torch.manual_seed(0)
    block = TransformerBlock(16, 4, norm=norm)
    x, mask = padded_batch()
    out, weights = block(x, mask, return_attention=True)
    assert out.shape == x.shape and weights.shape == (3, 4, 7, 7)
    torch.testing.assert_close(block(x, mask), out, **TOL)  # fast path == teaching path
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 7))
    assert (weights[1, :, :, 5:] == 0).all()  # padded keys get no weight


def test_block_rejects_unknown_norm():
    with pytest.raises(ValueError, match="norm must be"):
        TransformerBlock(16, 4, norm="sandwich")


def test_post_norm_output_is_normalised():
    block = TransformerBlock(16, 4, norm="post")
    out = block(torch.randn(2, 5, 16) * 10)
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 5), atol=1e-5, rtol=0)  # LayerNorm's fresh weights: 1, 0
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(2, 5), atol=1e-3, rtol=0)


def test_block_is_permutation_equivariant_and_padding_blind():
    torch.manual_seed(1)
    block = TransformerBlock(16, 2).eval()
    x, mask = padded_batch()
    perm = torch.randperm(7)
    torch.testing.assert_close(block(x[:, perm]), block(x)[:, perm], **TOL)
    # what sits at padded positions does not change the real positions' outputs
    noisy = torch.where(mask[..., None], x, torch.randn_like(x) * 100)
    torch.testing.assert_close(block(noisy, mask)[mask], block(x, mask)[mask], **TOL)
    torch.testing.assert_close(block(x[1:2, :5]), block(x, mask)[1:2, :5], **TOL)


def test_causal_block_ignores_the_future():
    torch.manual_seed(2)
    block = TransformerBlock(16, 4, causal=True)
    x = torch.randn(2, 6, 16)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 2, 16)
    torch.testing.assert_close(block(changed)[:, :4], block(x)[:, :4], **TOL)


def test_feedforward_is_positionwise():
    ff = FeedForward(8, ff_mult=4)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(ff(x)[:, 3], ff(x[:, 3:4])[:, 0], **TOL)
    assert count_parameters(ff) == 8 * 32 + 32 + 32 * 8 + 8


# --- positions -------------------------------------------------------------------------------------
def test_sinusoidal_encoding_by_hand():
    table = sinusoidal_encoding(50, 6)
    for p in (0, 1, 7, 49):
        for i in range(3):
            angle = p / 10_000 ** (2 * i / 6)
            assert table[p, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-5)
            assert table[p, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-5)
    assert sinusoidal_encoding(4, 5).shape == (4, 5)  # odd widths work too


@pytest.mark.parametrize("cls", [PositionEmbedding, PositionEncoding])
def test_positions_add_and_check_length(cls):
    positions = cls(10, 8)
    x = torch.zeros(2, 4, 8)
    torch.testing.assert_close(positions(x), positions.positions(4).expand(2, 4, 8))
    with pytest.raises(ValueError, match="max_len=10"):
        positions(torch.zeros(1, 11, 8))


def test_encoding_has_no_parameters_and_is_not_saved():
    assert count_parameters(PositionEncoding(10, 8)) == 0
    assert PositionEncoding(10, 8).state_dict() == {}
    assert count_parameters(PositionEmbedding(10, 8)) == 80


@pytest.mark.parametrize("positions", ["embedding", "encoding", None])
def test_stack_shapes_and_positions(positions):
    torch.manual_seed(3)
    stack = TransformerStack(20, 16, 4, 2, 12, positions=positions).eval()
    tokens = torch.randint(0, 20, (2, 9))
    out, weights = stack(tokens, return_attention=True)
    assert out.shape == (2, 9, 16) and len(weights) == 2 and weights[0].shape == (2, 4, 9, 9)
    perm = torch.randperm(9)
    shuffled = stack(tokens[:, perm])
    if positions is None:  # no positions: shuffling the tokens only shuffles the outputs
        torch.testing.assert_close(shuffled, out[:, perm], **TOL)
    else:
        assert not torch.allclose(shuffled, out[:, perm], atol=1e-3)
    with pytest.raises(ValueError, match="max_len=12"):
        stack(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="positions must be"):
        TransformerStack(20, 16, 4, 2, 12, positions="rotary")


def test_pre_norm_stack_ends_with_a_norm():
    stack = TransformerStack(20, 16, 4, 1, 8, norm="pre")
    assert isinstance(stack.final_norm, nn.LayerNorm)
    assert isinstance(TransformerStack(20, 16, 4, 1, 8).final_norm, nn.Identity)


# --- oracles ---------------------------------------------------------------------------------------
def copy_to_torch_layer(block: TransformerBlock, layer: nn.TransformerEncoderLayer) -> None:
    """Our block's weights into PyTorch's encoder layer (query/key/value stacked in in_proj)."""
    att = block.attention
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([att.to_queries.weight, att.to_keys.weight,
                                                        att.to_values.weight]))
        layer.self_attn.in_proj_bias.zero_()  # our projections have no bias (the blog's choice)
        layer.self_attn.out_proj.load_state_dict(att.unify_heads.state_dict())
        layer.linear1.load_state_dict(block.ff.net[0].state_dict())
        layer.linear2.load_state_dict(block.ff.net[3].state_dict())
        layer.norm1.load_state_dict(block.norm1.state_dict())
        layer.norm2.load_state_dict(block.norm2.state_dict())


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("seed", [0, 1])
def test_block_matches_torch_encoder_layer(norm, seed):
    torch.manual_seed(seed)
    block = TransformerBlock(16, 4, norm=norm)
    for p in block.parameters():  # move LayerNorm's weights away from 1, 0 so they are tested too
        nn.init.normal_(p, std=0.3)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=64, dropout=0.0, activation="relu",
                                       batch_first=True, norm_first=norm == "pre")
    copy_to_torch_layer(block, layer)
    x, mask = padded_batch(seed=seed)
    expected = layer(x, src_key_padding_mask=~mask)  # PyTorch's key padding: True = blocked
    torch.testing.assert_close(block(x, mask)[mask], expected[mask], **TOL)
    torch.testing.assert_close(block(x), layer(x), **TOL)


transformers = pytest.importorskip("transformers")


def bert_config(layers: int):
    return transformers.BertConfig(hidden_size=16, num_attention_heads=4, intermediate_size=64,
                                   num_hidden_layers=layers, hidden_act="relu", layer_norm_eps=1e-5,
                                   hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                   attn_implementation="eager")


def copy_to_bert_layer(block: TransformerBlock, layer) -> None:
    """Our post-norm block's weights into a Hugging Face ``BertLayer`` (same math, other names)."""
    att = block.attention
    pairs = [(layer.attention.self.query, att.to_queries), (layer.attention.self.key, att.to_keys),
             (layer.attention.self.value, att.to_values), (layer.attention.output.dense, att.unify_heads),
             (layer.attention.output.LayerNorm, block.norm1), (layer.intermediate.dense, block.ff.net[0]),
             (layer.output.dense, block.ff.net[3]), (layer.output.LayerNorm, block.norm2)]
    with torch.no_grad():
        for theirs, ours in pairs:
            assert theirs.weight.shape == ours.weight.shape
            theirs.weight.copy_(ours.weight)
            theirs.bias.copy_(ours.bias) if ours.bias is not None else theirs.bias.zero_()


def additive_mask(mask: torch.Tensor) -> torch.Tensor:
    """Our (b, t) key-padding mask as BERT's additive (b, 1, 1, t) mask: 0 to attend, -inf to block."""
    return torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))[:, None, None, :]


def test_block_matches_bert_layer():
    torch.manual_seed(4)
    block = TransformerBlock(16, 4, norm="post").eval()
    layer = transformers.models.bert.modeling_bert.BertLayer(bert_config(1)).eval()
    copy_to_bert_layer(block, layer)
    x, mask = padded_batch(seed=4)
    expected = layer(x, additive_mask(mask))
    expected = expected[0] if isinstance(expected, tuple) else expected
    torch.testing.assert_close(block(x, mask)[mask], expected[mask], **TOL)


def test_stack_matches_bert_encoder():
    """Two post-norm blocks = BERT's encoder (BERT adds its embeddings and their LayerNorm before it)."""
    torch.manual_seed(5)
    stack = TransformerStack(30, 16, 4, 2, 10, positions="embedding").eval()
    encoder = transformers.models.bert.modeling_bert.BertEncoder(bert_config(2)).eval()
    for block, layer in zip(stack.blocks, encoder.layer):
        copy_to_bert_layer(block, layer)
    tokens = torch.randint(1, 30, (3, 7))
    _, mask = padded_batch()
    embedded = stack.token_embedding(tokens) + stack.positions.positions(7)  # (b, t, e)
    expected = encoder(embedded, additive_mask(mask)).last_hidden_state
    torch.testing.assert_close(stack(tokens, mask)[mask], expected[mask], **TOL)
