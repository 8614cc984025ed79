"""Chapter 09's models: cross-attention, the encoder-decoder against nn.Transformer, masks, RNN baselines."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.masks import padding_mask
from fromscratch.interop import (
    copy_weights,
    load_from_transformer,
    multihead_attention_table,
    to_transformer,
    transformer_logits,
)
from fromscratch.models import EncoderDecoder, EncoderDecoderConfig, RNNSeq2Seq
from fromscratch.models.encoder_decoder import Attention
from fromscratch.models.pool_dropout import PoolDropout
from fromscratch.utils import evaluating

SIZES = dict(emb=16, heads=4, encoder_depth=2, decoder_depth=2, ff_mult=2, dropout=0.0, context=20)
SMALL = EncoderDecoderConfig(src_vocab_size=50, tgt_vocab_size=50, **SIZES)


def batch(seed: int = 0, b: int = 3, ts: int = 7, tt: int = 6):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 50, (b, ts), generator=g)
    tgt = torch.randint(4, 50, (b, tt), generator=g)
    src_mask = padding_mask(torch.tensor([ts, ts - 3, 2])[:b], ts)
    tgt_mask = padding_mask(torch.tensor([tt, tt - 2, 3])[:b], tt)
    return src.masked_fill(~src_mask, 0), tgt.masked_fill(~tgt_mask, 0), src_mask, tgt_mask


# --- cross-attention -----------------------------------------------------------------------------------
def cross_attention() -> Attention:
    torch.manual_seed(0)
    return Attention(16, 4, causal=False)


def explicit(module, *args, **options):
    weights = []
    out = module(*args, **options, attention=weights)
    return out, weights[0]


def test_cross_attention_equals_multihead_attention_with_other_keys():
    attention = cross_attention()
    twin = nn.MultiheadAttention(16, 4, batch_first=True)
    copy_weights(attention, twin, multihead_attention_table(qkv_bias=False))
    x, context = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    mask = padding_mask(torch.tensor([5, 2]), 5)
    ours, weights = explicit(attention, x, context, padding_mask=mask)
    theirs, their_weights = twin(x, context, context, key_padding_mask=~mask, average_attn_weights=False)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, their_weights, atol=1e-5, rtol=1e-4)
    assert weights.shape == (2, 4, 3, 5)
    torch.testing.assert_close(attention(x, context, padding_mask=mask), ours, atol=1e-5, rtol=1e-4)


def test_cross_attention_ignores_padded_source_positions():
    attention = cross_attention()
    x, context = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    mask = padding_mask(torch.tensor([5, 2]), 5)
    changed = context.clone()
    changed[1, 2:] = 100 * torch.randn(3, 16)
    for written_out in (False, True):
        weights = [] if written_out else None
        a = attention(x, context, padding_mask=mask, attention=weights)
        b = attention(x, changed, padding_mask=mask, attention=weights)
        torch.testing.assert_close(a, b)
    _, weights = explicit(attention, x, context, padding_mask=mask)
    assert weights[1, :, :, 2:].abs().max() == 0


def test_the_cross_attention_cache_projects_the_source_once():
    attention, x, context = cross_attention(), torch.randn(2, 4, 16), torch.randn(2, 5, 16)
    cache = KVCache()
    steps = [attention(x[:, i : i + 1], context, cache=cache) for i in range(4)]
    torch.testing.assert_close(torch.cat(steps, dim=1), attention(x, context), atol=1e-6, rtol=1e-5)
    assert len(cache) == 5  # the source's keys and values, stored at the first step and reused


# --- the encoder-decoder against nn.Transformer ----------------------------------------------------------
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_decoder_equals_nn_transformer_forward_and_gradients(norm):
    torch.manual_seed(0)
    model = EncoderDecoder(SMALL, norm=norm).eval()
    twin = to_transformer(model).eval()
    src, tgt, src_mask, tgt_mask = batch()
    ours = model(src, tgt, src_mask)  # no target mask: the causal mask hides the padding at the end
    theirs = transformer_logits(model, twin, src, tgt, src_mask, tgt_mask)
    real = tgt_mask[:, :, None].expand_as(ours)
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-5, rtol=1e-4)
    # gradients: the same loss through both stacks gives the same gradients for every matched weight
    target = torch.randn_like(ours) * real
    (ours * target).sum().backward()
    our_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    (transformer_logits(model, twin, src, tgt, src_mask, tgt_mask) * target).sum().backward()
    torch.testing.assert_close(
        model.src_embedding.weight.grad, our_grads["src_embedding.weight"], atol=1e-5, rtol=1e-4
    )
    their = dict(twin.named_parameters())
    torch.testing.assert_close(
        their["decoder.layers.1.multihead_attn.out_proj.weight"].grad,
        our_grads["decoder.1.cross_attention.unify_heads.weight"],
        atol=1e-5,
        rtol=1e-4,
    )
    torch.testing.assert_close(
        their["encoder.layers.0.linear1.weight"].grad,
        our_grads["encoder.0.ff.net.0.weight"],
        atol=1e-5,
        rtol=1e-4,
    )


def test_weights_copy_back_from_nn_transformer():
    torch.manual_seed(0)
    model = EncoderDecoder(SMALL)
    twin = to_transformer(model)
    with torch.no_grad():
        for p in twin.parameters():
            p.add_(0.01 * torch.randn_like(p))
    for layer in [*twin.encoder.layers, *twin.decoder.layers]:
        for mha in (getattr(layer, "self_attn", None), getattr(layer, "multihead_attn", None)):
            if mha is not None:
                mha.in_proj_bias.data.zero_()
    load_from_transformer(model, twin)
    src, tgt, src_mask, tgt_mask = batch()
    with evaluating(model), evaluating(twin), torch.no_grad():
        ours = model(src, tgt, src_mask)
        theirs = transformer_logits(model, twin, src, tgt, src_mask, tgt_mask)
    real = tgt_mask[:, :, None].expand_as(ours)
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-5, rtol=1e-4)


# --- masks ------------------------------------------------------------------------------------------------
def test_decoder_is_causal_changing_later_targets_leaves_earlier_logits():
    torch.manual_seed(0)
    model = EncoderDecoder(SMALL).eval()
    src, tgt, src_mask, _ = batch(tt=8)
    tgt = torch.randint(4, 50, tgt.shape)
    with torch.no_grad():
        before = model(src, tgt, src_mask)
        for i in range(tgt.size(1) - 1):
            changed = tgt.clone()
            changed[:, i + 1 :] = torch.randint(4, 50, changed[:, i + 1 :].shape)
            after = model(src, changed, src_mask)
            torch.testing.assert_close(after[:, : i + 1], before[:, : i + 1])
            assert not torch.allclose(after[:, i + 1 :], before[:, i + 1 :])


def test_encoder_decoder_ignores_padded_source_tokens():
    torch.manual_seed(0)
    model = EncoderDecoder(SMALL).eval()
    src, tgt, src_mask, _ = batch()
    changed = src.masked_fill(~src_mask, 7)  # other tokens where the source is padding
    with torch.no_grad():
        torch.testing.assert_close(model(src, tgt, src_mask), model(changed, tgt, src_mask))


def test_attention_weights_per_layer_and_shapes():
    model = EncoderDecoder(SMALL).eval()
    src, tgt, src_mask, _ = batch()
    weights = []
    logits = model(src, tgt, src_mask, attention=weights)
    assert len(weights) == 2 + 2 * 2  # every encoder block, then each decoder block's self and cross
    weights = model.attention_parts(weights)
    assert logits.shape == (3, 6, 50)
    assert [w.shape for w in weights["encoder"]] == [(3, 4, 7, 7)] * 2
    assert [w.shape for w in weights["decoder"]] == [(3, 4, 6, 6)] * 2
    assert [w.shape for w in weights["cross"]] == [(3, 4, 6, 7)] * 2
    assert weights["cross"][0][2, :, :, 2:].abs().max() == 0  # the third source has 2 real tokens
    assert weights["decoder"][0].triu(1).abs().max() == 0  # nothing above the diagonal
    torch.testing.assert_close(logits, model(src, tgt, src_mask), atol=1e-5, rtol=1e-4)


def test_config_options_and_bad_input():
    tied = EncoderDecoder(SMALL)
    assert tied.to_logits.weight is tied.tgt_embedding.weight is tied.src_embedding.weight
    separate = EncoderDecoder(SMALL, share_embeddings=False, tie_output=False, positions="learned")
    assert separate.src_embedding is not separate.tgt_embedding
    with pytest.raises(ValueError, match="context=20"):
        tied(torch.zeros(1, 21, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="joint vocabulary"):
        EncoderDecoder(SMALL, tgt_vocab_size=60)
    with pytest.raises(TypeError):
        EncoderDecoder(SMALL, nonsense=1)


def test_pool_dropout_keeps_the_expected_value_and_is_off_in_eval():
    torch.manual_seed(0)
    drop = PoolDropout(0.25, pool_size=1 << 16)
    x = torch.ones(100, 100)
    out = drop(x)
    values = out.unique()
    assert len(values) == 2 and values[0] == 0 and abs(values[1].item() - 1 / 0.75) < 1e-6
    assert abs((out == 0).float().mean().item() - 0.25) < 0.03
    assert torch.equal(drop.eval()(x), x)
    model = EncoderDecoder(SMALL, dropout=0.1, pool_dropout=True)
    assert not any(type(m) is nn.Dropout for m in model.modules())


# --- the RNN baselines --------------------------------------------------------------------------------------
@pytest.mark.parametrize("attention", [False, True])
def test_rnn_seq2seq_shapes_alignment_and_padding(attention):
    torch.manual_seed(0)
    model = RNNSeq2Seq(vocab_size=50, emb=8, hidden=12, attention=attention, dropout=0.0, context=20).eval()
    src, tgt, src_mask, _ = batch()
    weights = []
    logits = model(src, tgt, src_mask, attention=weights)
    (alignment,) = weights  # one attention layer of one head: (b, 1, tt, ts)
    assert alignment.shape == (3, 1, 6, 7)
    alignment = alignment[:, 0]
    assert logits.shape == (3, 6, 50)
    if attention:
        torch.testing.assert_close(alignment.sum(-1), torch.ones(3, 6))
        assert alignment[2, :, 2:].abs().max() == 0
    changed = src.masked_fill(~src_mask, 9)
    torch.testing.assert_close(model(changed, tgt, src_mask), logits, atol=1e-5, rtol=1e-4)
    decoded = model.decode(tgt, model.encode(src, src_mask), src_mask)  # (b, tt, V), as forward
    torch.testing.assert_close(decoded, logits, atol=1e-5, rtol=1e-4)
