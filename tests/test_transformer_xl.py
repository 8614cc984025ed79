"""Transformer-XL (chapter 11): no leak from the future or through the memory; relative scores."""

from __future__ import annotations

import pytest
import torch

from fromscratch.models import TransformerXL
from fromscratch.models.transformer_xl import (
    RelativeAttention,
    bits_per_byte_xl,
    input_gradients,
    segment_loss,
)


def small_xl(**fields) -> TransformerXL:
    torch.manual_seed(0)
    return TransformerXL(**{"emb": 32, "heads": 4, "depth": 2, "segment": 8, "memory": 8, **fields}).eval()


def test_shapes_and_memory_in_and_out():
    model = small_xl()
    tokens = torch.randint(0, 256, (3, 8))
    logits, memory = model(tokens)
    assert logits.shape == (3, 8, 256)
    assert [m.shape for m in memory] == [(3, 8, 32)] * 2 and not any(m.requires_grad for m in memory)
    logits, memory = model(tokens[:, :5], memory, keep=12)
    assert [m.shape for m in memory] == [(3, 12, 32)] * 2
    assert [m.shape for m in small_xl(memory=0)(tokens)[1]] == [(3, 0, 32)] * 2


def test_no_gradient_reaches_future_tokens_or_the_memory():
    model = small_xl()
    _, memory = model(torch.randint(0, 256, (1, 8)))
    memory = [m.clone().requires_grad_(True) for m in memory]
    x = model.token_embedding(torch.randint(0, 256, (1, 8))).detach().requires_grad_(True)  # (1, t, e)
    hidden, new_memory = model.from_embeddings(x, memory)
    probe = torch.randn(32)  # a random read-out (the sum of a LayerNorm's output would be constant)
    for i in range(8):
        grads = torch.autograd.grad(hidden[0, i] @ probe, [x, *memory], retain_graph=True)
        assert grads[0][0, i + 1 :].abs().sum() == 0  # nothing from later positions
        assert grads[0][0, i].abs().max() > 0
        assert all(g.abs().max() > 0 for g in grads[1:])  # the memory is *read* (forward) ...
    assert not any(
        m.requires_grad for m in new_memory
    )  # ... but what goes on to the next segment is detached
    x2 = model.token_embedding(torch.randint(0, 256, (1, 8))).detach().requires_grad_(True)
    hidden2, _ = model.from_embeddings(x2, new_memory)
    hidden2.sum().backward()
    assert x.grad is None  # the next segment's loss never reaches this segment's inputs


def test_gradients_stop_at_the_memory_but_the_forward_pass_reaches_back():
    model = small_xl()
    tokens = torch.randint(0, 256, (1, 24))  # three segments
    stopped = input_gradients(model, tokens)
    assert stopped[:16].abs().max() == 0 and stopped[16:].abs().min() > 0
    reach = input_gradients(model, tokens, stop_gradient=False)
    assert reach[:16].abs().max() > 0  # the last prediction depends on earlier segments


def test_relative_scores_are_invariant_to_a_shift():
    torch.manual_seed(0)
    attention = RelativeAttention(16, 2)
    with torch.no_grad():
        attention.u.normal_(), attention.v.normal_()
    x, before = torch.randn(1, 6, 16), torch.randn(1, 5, 16)
    alone = attention.score_terms(x, x)
    shifted = attention.score_terms(x, torch.cat([before, x], dim=1))  # the same segment, 5 positions later
    for name in alone:
        torch.testing.assert_close(shifted[name][..., 5:], alone[name], atol=1e-5, rtol=1e-5)
    content = attention.to_queries(x).view(1, 6, 2, 8).transpose(1, 2) @ attention.to_keys(x).view(
        1, 6, 2, 8
    ).transpose(1, 2).transpose(-2, -1)
    torch.testing.assert_close(alone["a: content"], content)


def test_the_four_terms_add_up_to_the_attention_weights():
    torch.manual_seed(0)
    attention = RelativeAttention(16, 2)
    with torch.no_grad():
        attention.u.normal_(), attention.v.normal_()
    x, context = torch.randn(2, 4, 16), torch.randn(2, 7, 16)
    context[:, -4:] = x
    scores = sum(attention.score_terms(x, context).values()) / 8**0.5  # (b, h, t, tk)
    causal = torch.ones(4, 7, dtype=torch.bool).tril(3)
    expected = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    weights = []
    attention(x, context, attention=weights)
    torch.testing.assert_close(weights[0], expected)


def test_bad_memory_and_long_segments_name_both_shapes():
    model = small_xl()
    with pytest.raises(ValueError, match=r"\(1, 9\).*segment=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    wrong_width = small_xl(emb=16)(torch.zeros(1, 8, dtype=torch.long))[1]
    with pytest.raises(ValueError, match=r"\(1, 8, 16\).*\(1, 8, 32\)"):
        model(torch.zeros(1, 8, dtype=torch.long), wrong_width)
    with pytest.raises(ValueError, match="one tensor per layer"):
        model(torch.zeros(1, 8, dtype=torch.long), wrong_width[:1])


def test_segment_loss_and_evaluation_with_and_without_memory():
    model = small_xl()
    tokens = torch.randint(0, 256, (2, 24))
    loss = segment_loss(model, (tokens[:, :-1][:, :16], tokens[:, 1:17]))
    assert 7 < loss.item() < 10  # an untrained model: about log2(256) = 8 bits
    stream = torch.randint(0, 256, (401,), dtype=torch.uint8)
    with_memory = bits_per_byte_xl(model, stream, streams=4)
    without = bits_per_byte_xl(model, stream, streams=4, memory=0)
    assert with_memory != without and 7 < without < 10
    assert model.training is False
