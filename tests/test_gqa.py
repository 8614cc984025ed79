"""Grouped-query attention (chapter 14): kv_heads = heads is today's attention, fewer KV heads share
their keys and values, the cache holds only the KV heads, and the cache changes no token."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.cache import KVCache
from fromscratch.attention.grouped import cache_bytes, expand_kv_heads
from fromscratch.generate import generate
from fromscratch.models import Llama
from fromscratch.models.llama import GroupedQueryAttention


def attention(kv_heads: int = 8, seed: int = 0) -> GroupedQueryAttention:
    torch.manual_seed(seed)
    return GroupedQueryAttention(32, 8, kv_heads).eval()


def explicit(module, x, **options):
    weights = []
    out = module(x, **options, attention=weights)
    return out, weights[0]


@pytest.mark.parametrize("kv_heads", [0, 3, 5, 16, -2])
def test_kv_heads_must_divide_heads_and_the_error_names_both(kv_heads):
    with pytest.raises(ValueError, match=rf"kv_heads={kv_heads} must divide heads=8.*\[1, 2, 4, 8\]"):
        Llama(vocab_size=10, emb=32, heads=8, kv_heads=kv_heads, depth=1, hidden=8)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_shared_heads_equal_multi_head_attention_with_repeated_key_value_weights(kv_heads):
    """GQA is MHA whose key/value projections are copies within each group of h / hk query heads."""
    gqa = attention(kv_heads)
    mha = attention(seed=1)
    groups, s = 8 // kv_heads, 4
    state = gqa.state_dict()
    for name in ("to_keys", "to_values"):  # (hk·s, e) -> each head's s rows repeated `groups` times
        weight = state[f"{name}.weight"].unflatten(0, (kv_heads, s))  # (hk, s, e)
        state[f"{name}.weight"] = weight.repeat_interleave(groups, dim=0).flatten(0, 1)  # (h·s, e)
    mha.load_state_dict(state)
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        torch.testing.assert_close(gqa(x), mha(x), atol=1e-6, rtol=1e-5)
        mask = torch.tensor([[True] * 9, [True] * 5 + [False] * 4])
        torch.testing.assert_close(gqa(x, padding_mask=mask), mha(x, padding_mask=mask), atol=1e-6, rtol=1e-5)
        out, weights = explicit(gqa, x)  # the explicit path expands the heads itself
    torch.testing.assert_close(out, gqa(x), atol=1e-6, rtol=1e-5)
    assert weights.shape == (2, 8, 9, 9)


def test_expand_kv_heads_repeats_each_head_next_to_itself():
    k = torch.arange(3.0)[None, :, None, None].expand(1, 3, 2, 1)  # head n holds the value n
    assert expand_kv_heads(k, 2)[0, :, 0, 0].tolist() == [0, 0, 1, 1, 2, 2]
    assert expand_kv_heads(k, 1) is k


def test_the_cache_stores_only_the_key_value_heads():
    model = attention(kv_heads=2)
    cache = KVCache()
    with torch.no_grad():
        model(torch.randn(2, 5, 32), cache=cache)
        model(torch.randn(2, 1, 32), cache=cache)
    assert cache.keys.shape == cache.values.shape == (2, 2, 6, 4)  # (b, hk, t, s)


def llama(kv_heads: int) -> Llama:
    torch.manual_seed(0)
    return Llama(vocab_size=64, context=40, emb=32, heads=8, kv_heads=kv_heads, depth=2, hidden=64).eval()


@pytest.mark.parametrize("kv_heads", [1, 2, 8])
def test_cached_generation_gives_the_tokens_of_recomputation(kv_heads):
    model = llama(kv_heads)
    prompt = torch.randint(0, 64, (3, 4), generator=torch.Generator().manual_seed(1))
    cached = generate(model, prompt, steps=30, temperature=0)
    assert torch.equal(cached, generate(model, prompt, steps=30, temperature=0, cache=False))
    sampled = generate(model, prompt, steps=20, temperature=0.9, seed=4)
    assert torch.equal(sampled, generate(model, prompt, steps=20, temperature=0.9, seed=4, cache=False))


def test_cache_bytes_shrink_by_exactly_heads_over_kv_heads():
    sizes = {}
    for kv_heads in (1, 2, 4, 8):
        model = llama(kv_heads)
        cache = model.new_cache()
        with torch.no_grad():
            model(torch.zeros(2, 12, dtype=torch.long), cache=cache)
        sizes[kv_heads] = cache_bytes(cache)
    assert sizes[8] == 2 * 2 * 12 * 32 * 4 * 2  # K and V, b, t, h·s, float32, 2 blocks
    assert all(sizes[8] == sizes[k] * (8 // k) for k in sizes)


def test_without_the_fused_kernels_gqa_option_the_heads_are_expanded(monkeypatch):
    """PyTorch < 2.5 has no enable_gqa: the shared heads are then repeated first; the output is the same."""
    import fromscratch.attention.dot_product as dot_product

    model, x = attention(kv_heads=2), torch.randn(2, 6, 32)
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    with torch.no_grad():
        fused, masked = model(x), model(x, padding_mask=mask)
        monkeypatch.setattr(dot_product, "FUSED_GQA", False)
        torch.testing.assert_close(model(x), fused, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(model(x, padding_mask=mask), masked, atol=1e-6, rtol=1e-5)
