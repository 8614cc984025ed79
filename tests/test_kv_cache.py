"""The KV cache (chapter 11): cached generation gives the tokens and logits of plain recomputation."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention import KVCache
from fromscratch.generate import generate, generate_text
from fromscratch.models import GPT2, LongContextGenerator
from fromscratch.models.long_context import CachedSelfAttention


def small_generator(**fields) -> LongContextGenerator:
    torch.manual_seed(0)
    return LongContextGenerator(emb=32, heads=4, depth=2, context=48, **fields).eval()


@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "rope", "alibi"])
@pytest.mark.parametrize("length", [1, 7, 40, 60])  # 60 runs past the context: the window slides
def test_cached_greedy_generation_equals_recomputation(positions, length):
    model = small_generator(positions=positions)
    prompt = torch.randint(0, 256, (3, 5), generator=torch.Generator().manual_seed(1))
    cached = generate(model, prompt, steps=length, temperature=0)
    plain = generate(model, prompt, steps=length, temperature=0, cache=False)
    assert torch.equal(cached, plain)


@pytest.mark.parametrize("fields", [{}, {"positions": "t5"}, {"sparsity": "fixed", "sparse_block": 4}])
def test_cached_logits_equal_the_full_forward(fields):
    model = small_generator(**fields)
    tokens = torch.randint(0, 256, (2, 30), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(tokens)  # (b, t, V)
        cache = model.new_cache()
        pieces = [model(tokens[:, :11], cache=cache)] + [
            model(tokens[:, i : i + 1], cache=cache) for i in range(11, 30)
        ]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=1e-4)
    assert [len(c) for c in cache] == [30, 30]


def test_sampling_with_the_cache_gives_the_same_text():
    model = small_generator()
    assert generate_text(model, "[[Anar", steps=30, temperature=0.8, seed=3) == generate_text(
        model, "[[Anar", steps=30, temperature=0.8, seed=3, cache=False
    )


def test_the_cache_is_explicit_and_models_without_one_recompute():
    model = small_generator()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    generate(model, torch.zeros(1, 3, dtype=torch.long), steps=5)
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    assert not any(isinstance(v, KVCache) for v in vars(model).values())

    def plain(tokens):  # a callable without new_cache(): cache=True falls back to recomputation
        return model(tokens)

    out = generate(plain, torch.zeros(1, 3, dtype=torch.long), steps=5, context=48, temperature=0)
    assert torch.equal(out, generate(model, torch.zeros(1, 3, dtype=torch.long), steps=5, temperature=0))


def test_attention_with_a_cache_matches_the_full_attention_and_checks_shapes():
    torch.manual_seed(0)
    attention = CachedSelfAttention(16, 2).eval()
    x = torch.randn(2, 9, 16)
    cache = KVCache()
    steps = [attention(x[:, :4], cache=cache)] + [
        attention(x[:, i : i + 1], cache=cache) for i in range(4, 9)
    ]
    torch.testing.assert_close(torch.cat(steps, 1), attention(x), atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="fresh KVCache"):
        attention(torch.randn(3, 1, 16), cache=cache)  # another batch size


def test_a_full_cache_says_what_to_do():
    model = small_generator()
    cache = model.new_cache()
    model(torch.zeros(1, 48, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="48 cached"):
        model(torch.zeros(1, 1, dtype=torch.long), cache=cache)


def test_gpt2_cached_generation_equals_recomputation():
    torch.manual_seed(0)
    model = GPT2(vocab_size=300, context=48, emb=32, heads=4, depth=2).eval()
    prompt = torch.randint(0, 300, (2, 6), generator=torch.Generator().manual_seed(1))
    for length in (1, 20, 50):
        cached = generate(model, prompt, steps=length, temperature=0)
        assert torch.equal(cached, generate(model, prompt, steps=length, temperature=0, cache=False))
