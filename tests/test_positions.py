"""RoPE and ALiBi (chapter 11): rotations keep norms, scores depend only on offsets; generator options."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.positions import (
    ALiBi,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    relative_offsets,
    rotate,
)
from fromscratch.models import Generator


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


@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "rope", "alibi"])
def test_every_position_option_is_causal(positions):
    torch.manual_seed(0)
    model = Generator(emb=16, heads=2, depth=2, context=32, positions=positions).eval()
    tokens = torch.randint(0, 256, (2, 32))
    changed = tokens.clone()
    changed[:, 20:] = (changed[:, 20:] + 1) % 256
    with torch.no_grad():
        torch.testing.assert_close(model(tokens)[:, :20], model(changed)[:, :20])


def test_rope_and_alibi_generators_have_no_position_parameters():
    sizes = {
        p: sum(x.numel() for x in Generator(emb=16, heads=2, depth=1, context=32, positions=p).parameters())
        for p in ("learned", "rope", "alibi")
    }
    assert sizes["learned"] - sizes["rope"] == 32 * 16
    assert sizes["rope"] == sizes["alibi"]
    with pytest.raises(ValueError, match="positions must be one of"):
        Generator(emb=16, heads=2, depth=1, context=8, positions="relative")
