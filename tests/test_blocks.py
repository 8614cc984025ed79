"""The transformer block, feed-forward and positions (chapter 05): shapes, options and promises.

The checks against PyTorch's and Hugging Face's encoder layers with copied weights are in
test_interop.py."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from fromscratch.attention import PositionEmbedding, PositionEncoding, sinusoidal_encoding
from fromscratch.blocks import FeedForward, TransformerBlock, TransformerStack
from fromscratch.utils import count_parameters

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
    weights = []
    out = block(x, padding_mask=mask, attention=weights)
    (weights,) = weights  # one attention layer, one tensor
    assert out.shape == x.shape and weights.shape == (3, 4, 7, 7)
    torch.testing.assert_close(block(x, padding_mask=mask), out, **TOL)  # fast path == teaching path
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 7))
    assert (weights[1, :, :, 5:] == 0).all()  # padded keys get no weight


def test_block_rejects_unknown_norm():
    with pytest.raises(ValueError, match="norm must be"):
        TransformerBlock(16, 4, norm="sandwich")


def test_post_norm_output_is_normalised():
    block = TransformerBlock(16, 4, norm="post")
    out = block(torch.randn(2, 5, 16) * 10)
    torch.testing.assert_close(
        out.mean(-1), torch.zeros(2, 5), atol=1e-5, rtol=0
    )  # LayerNorm's fresh weights: 1, 0
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(2, 5), atol=1e-3, rtol=0)


def test_block_is_permutation_equivariant_and_padding_blind():
    torch.manual_seed(1)
    block = TransformerBlock(16, 2).eval()
    x, mask = padded_batch()
    perm = torch.randperm(7)
    torch.testing.assert_close(block(x[:, perm]), block(x)[:, perm], **TOL)
    # what sits at padded positions does not change the real positions' outputs
    noisy = torch.where(mask[..., None], x, torch.randn_like(x) * 100)
    torch.testing.assert_close(
        block(noisy, padding_mask=mask)[mask], block(x, padding_mask=mask)[mask], **TOL
    )
    torch.testing.assert_close(block(x[1:2, :5]), block(x, padding_mask=mask)[1:2, :5], **TOL)


def test_causal_block_ignores_the_future():
    torch.manual_seed(2)
    block = TransformerBlock(16, 4, causal=True)
    x = torch.randn(2, 6, 16)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 2, 16)
    torch.testing.assert_close(block(changed)[:, :4], block(x)[:, :4], **TOL)
    pattern = torch.ones(6, 6, dtype=torch.bool).tril()  # the same pattern passed as attn_mask
    open_block = TransformerBlock(16, 4)
    open_block.load_state_dict(block.state_dict())
    torch.testing.assert_close(open_block(x, attn_mask=pattern), block(x), **TOL)


def test_block_options_are_keyword_only_and_checked():
    with pytest.raises(TypeError):
        TransformerBlock(16, 4, 4)  # ff_mult must be named
    with pytest.raises(ValueError, match="activation must be one of relu, gelu"):
        TransformerBlock(16, 4, activation="swish")
    block = TransformerBlock(16, 4, activation="gelu")
    assert isinstance(block.ff.net[1], nn.GELU)


def test_the_block_stays_at_its_teaching_shape():
    """TransformerBlock (chapters 05-09) takes at most 8 constructor arguments."""
    import inspect

    assert len(inspect.signature(TransformerBlock).parameters) <= 8


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
    with pytest.raises(ValueError, match="context=10"):
        positions(torch.zeros(1, 11, 8))


def test_encoding_has_no_parameters_and_is_not_saved():
    assert count_parameters(PositionEncoding(10, 8)) == 0
    assert PositionEncoding(10, 8).state_dict() == {}
    assert count_parameters(PositionEmbedding(10, 8)) == 80


@pytest.mark.parametrize("positions", ["learned", "sinusoidal", None])
def test_stack_shapes_and_positions(positions):
    torch.manual_seed(3)
    stack = TransformerStack(vocab_size=20, emb=16, heads=4, depth=2, context=12, positions=positions).eval()
    tokens = torch.randint(0, 20, (2, 9))
    weights = []
    out = stack(tokens, attention=weights)
    assert out.shape == (2, 9, 16) and len(weights) == 2 and weights[0].shape == (2, 4, 9, 9)
    perm = torch.randperm(9)
    shuffled = stack(tokens[:, perm])
    if positions is None:  # no positions: shuffling the tokens only shuffles the outputs
        torch.testing.assert_close(shuffled, out[:, perm], **TOL)
    else:
        assert not torch.allclose(shuffled, out[:, perm], atol=1e-3)
    with pytest.raises(ValueError, match="context=12"):
        stack(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="positions must be"):
        TransformerStack(vocab_size=20, emb=16, heads=4, depth=2, context=12, positions="rotary")


def test_pre_norm_stack_ends_with_a_norm():
    sizes = dict(vocab_size=20, emb=16, heads=4, depth=1, context=8)
    assert isinstance(TransformerStack(**sizes, norm="pre").final_norm, nn.LayerNorm)
    assert isinstance(TransformerStack(**sizes).final_norm, nn.Identity)


def test_stack_passes_both_masks_to_every_block():
    torch.manual_seed(6)
    stack = TransformerStack(vocab_size=20, emb=16, heads=4, depth=2, context=8).eval()
    tokens = torch.randint(0, 20, (2, 6))
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    pattern = torch.ones(6, 6, dtype=torch.bool).tril()
    weights = []
    out = stack(tokens, padding_mask=mask, attn_mask=pattern, attention=weights)
    for w in weights:
        assert (w[1, :, :, 4:] == 0).all() and torch.count_nonzero(w.triu(diagonal=1)) == 0
    torch.testing.assert_close(stack(tokens, padding_mask=mask, attn_mask=pattern), out, **TOL)
