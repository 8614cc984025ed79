"""RoPE and ALiBi (chapter 11): rotations keep norms, scores depend only on offsets; chapter 11's
generator takes every scheme."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention import RelativeBias, relative_buckets
from fromscratch.attention.positions import (
    ALiBi,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    relative_offsets,
    rotate,
)
from fromscratch.models import EncoderDecoder, Llama, LongContextGenerator
from fromscratch.models.encoder_decoder import EncoderDecoderConfig
from fromscratch.models.llama import LlamaConfig
from fromscratch.models.long_context import POSITIONS


def test_rope_preserves_norms():
    x = torch.randn(2, 3, 10, 8)  # (b, h, t, d)
    rotated = RotaryEmbedding(8)(x, offset=5)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    assert not torch.allclose(rotated, x)


def test_rope_scores_depend_only_on_the_offset():
    q, k = torch.randn(16), torch.randn(16)

    def score(i, j):
        return rotate(q[None], torch.tensor([i]))[0] @ rotate(k[None], torch.tensor([j]))[0]

    for i, j in [(3, 1), (7, 7), (2, 9)]:
        for shift in (1, 10, 1000):
            torch.testing.assert_close(score(i + shift, j + shift), score(i, j), atol=1e-4, rtol=1e-4)
    assert not torch.isclose(score(3, 1), score(3, 2))


def test_rope_at_position_zero_is_the_identity_and_odd_widths_fail():
    x = torch.randn(1, 1, 1, 6)
    torch.testing.assert_close(RotaryEmbedding(6)(x), x)
    with pytest.raises(ValueError, match="even"):
        RotaryEmbedding(5)


def test_alibi_slopes_are_the_papers():
    torch.testing.assert_close(alibi_slopes(8), torch.tensor([2.0**-i for i in range(1, 9)]))
    assert alibi_slopes(6).shape == (6,)  # not a power of two: the paper's interleaving
    assert torch.all(alibi_slopes(6) > 0)


def test_alibi_bias_is_a_distance_penalty_with_queries_last():
    bias = alibi_bias(torch.tensor([0.5]), tq=2, tk=4)  # queries are positions 2 and 3
    assert torch.equal(relative_offsets(2, 4), torch.tensor([[2, 1, 0, -1], [3, 2, 1, 0]]))
    torch.testing.assert_close(bias[0], -0.5 * torch.tensor([[2.0, 1, 0, 1], [3, 2, 1, 0]]))
    assert ALiBi(4)(3, 3).shape == (4, 3, 3)


@pytest.mark.parametrize("positions", POSITIONS)
def test_every_position_option_is_causal(positions):
    torch.manual_seed(0)
    model = LongContextGenerator(emb=16, heads=2, depth=2, context=32, positions=positions).eval()
    tokens = torch.randint(0, 256, (2, 32))
    changed = tokens.clone()
    changed[:, 20:] = (changed[:, 20:] + 1) % 256
    with torch.no_grad():
        torch.testing.assert_close(model(tokens)[:, :20], model(changed)[:, :20])


def test_rope_and_alibi_generators_have_no_position_parameters():
    sizes = {
        p: sum(
            x.numel()
            for x in LongContextGenerator(emb=16, heads=2, depth=1, context=32, positions=p).parameters()
        )
        for p in ("learned", "rope", "alibi")
    }
    assert sizes["learned"] - sizes["rope"] == 32 * 16
    assert sizes["rope"] == sizes["alibi"]
    with pytest.raises(ValueError, match="positions must be one of"):
        LongContextGenerator(emb=16, heads=2, depth=1, context=8, positions="relative")


@pytest.mark.parametrize("positions", POSITIONS)
def test_every_scheme_counts_positions_right_through_the_cache(positions):
    """Chapter 11's generator (every scheme) and the Llama (its two): a KV cache gives the logits of the
    whole sequence at once."""
    torch.manual_seed(0)
    tokens = torch.randint(0, 64, (2, 12))
    config = LlamaConfig(vocab_size=64, context=16, emb=32, heads=4, kv_heads=2, depth=2, hidden=64)
    models = [LongContextGenerator(vocab_size=64, emb=32, heads=4, depth=2, context=16, positions=positions)]
    if positions in ("rope", "learned"):
        models.append(Llama(config, positions=positions))
    for model in models:
        model.eval()
        for p in model.parameters():  # a learned bias starts at zero: give it something to carry
            torch.nn.init.normal_(p, std=0.1) if p.dim() == 2 else None
        cache = model.new_cache()
        with torch.no_grad():
            whole = model(tokens)
            first = model(tokens[:, :7], cache=cache)
            rest = model(tokens[:, 7:], cache=cache)
        torch.testing.assert_close(torch.cat([first, rest], dim=1), whole, atol=1e-5, rtol=1e-4)


def test_the_encoder_decoder_takes_added_positions_and_says_so_for_the_others():
    small = dict(src_vocab_size=40, tgt_vocab_size=40, emb=16, heads=2, encoder_depth=1, decoder_depth=1)
    EncoderDecoder(EncoderDecoderConfig(**small, positions=None))
    with pytest.raises(ValueError, match="'sinusoidal', 'learned' or None"):
        EncoderDecoder(EncoderDecoderConfig(**small, positions="rope"))


def test_t5_buckets_are_exact_near_then_logarithmic_and_split_by_direction():
    offsets = torch.tensor([[0, 1, 7, 8, 20, 127, 128, 10_000, -1, -5]])
    buckets = relative_buckets(offsets, buckets=32, max_distance=128)[0].tolist()
    assert buckets[:3] == [0, 1, 7]  # below buckets / 4: one bucket each
    assert 8 <= buckets[3] < buckets[4] < buckets[5] <= 15 and buckets[6] == buckets[7] == 15  # far: the last
    assert buckets[8] == 16 + 1 and buckets[9] == 16 + 5  # keys after the query: the second half
    bias = RelativeBias(4)
    assert bias(3, 5).shape == (4, 3, 5) and torch.all(bias(3, 5) == 0)  # starts at zero: no preference


def test_check_tokens_says_what_to_do():
    """A model's door: shape, dtype, ids in the vocabulary, the context with and without a cache."""
    from fromscratch.attention.positions import check_tokens

    check_tokens(torch.tensor([[0, 9]]), context=4, vocab_size=10)
    with pytest.raises(ValueError, match=r"\(b, t\).*tokens\[None\]"):
        check_tokens(torch.tensor([0, 9]), context=4, vocab_size=10)
    with pytest.raises(ValueError, match="integer ids.*tokens.long"):
        check_tokens(torch.zeros(1, 2), context=4, vocab_size=10)
    with pytest.raises(ValueError, match=r"id 10, outside the vocabulary 0\.\.9.*vocab_size > 10"):
        check_tokens(torch.tensor([[0, 10]]), context=4, vocab_size=10)
    with pytest.raises(ValueError, match="id -1"):
        check_tokens(torch.tensor([[-1, 3]]), context=4, vocab_size=10)
    with pytest.raises(ValueError, match=r"context=4.*tokens\[:, -4:\]"):
        check_tokens(torch.zeros(1, 5, dtype=torch.long), context=4, vocab_size=10)
    with pytest.raises(ValueError, match="3 cached \\+ 2 new.*fresh cache"):
        check_tokens(torch.zeros(1, 2, dtype=torch.long), context=4, vocab_size=10, past=3)


@pytest.mark.parametrize("family", ["gpt2", "llama", "generator"])
def test_an_id_outside_the_vocabulary_is_a_clear_error(family):
    """Not PyTorch's bare ``IndexError: index out of range in self``."""
    from fromscratch.models import GPT2, Generator, Llama

    sizes = dict(vocab_size=10, context=8, emb=8, heads=2, depth=1)
    model = {
        "gpt2": lambda: GPT2(**sizes),
        "llama": lambda: Llama(**sizes, kv_heads=1, hidden=16),
        "generator": lambda: Generator(**sizes),
    }[family]()
    with pytest.raises(ValueError, match="outside the vocabulary 0..9"):
        model(torch.tensor([[1, 12]]))
