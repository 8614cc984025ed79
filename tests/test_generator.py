"""The causal generator (chapter 07): output i never depends on inputs after i, in value or gradient."""

from __future__ import annotations

import pytest
import torch

from fromscratch.models import Generator
from fromscratch.profiles import get_profile

T = 10


def small(causal: bool = True, norm: str = "post", seed: int = 0) -> Generator:
    torch.manual_seed(seed)
    return Generator(256, emb=16, heads=2, depth=2, context=T, causal=causal, norm=norm)


def embedding_gradients(model: Generator, tokens: torch.Tensor, i: int) -> torch.Tensor:
    """d(sum of logits at position i) / d(input vectors) for every position: (b, t, e)."""
    captured = {}

    def keep(module, args, out):
        out.retain_grad()
        captured["x"] = out

    handle = model.stack.token_embedding.register_forward_hook(keep)
    try:
        model(tokens)[:, i].sum().backward()
    finally:
        handle.remove()
    return captured["x"].grad


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("return_attention", [False, True])  # the fast path and the teaching path
def test_changing_later_tokens_never_changes_earlier_outputs(norm, return_attention):
    model = small(norm=norm).eval()
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 256, (3, T), generator=gen)

    def run(x):
        out = model(x, return_attention=return_attention)
        return out[0] if return_attention else out

    logits = run(tokens)
    for i in range(T - 1):
        changed = tokens.clone()
        changed[:, i + 1:] = torch.randint(0, 256, (3, T - i - 1), generator=gen)
        torch.testing.assert_close(run(changed)[:, : i + 1], logits[:, : i + 1], atol=0, rtol=0)
        assert not torch.allclose(run(changed)[:, i + 1:], logits[:, i + 1:])  # later outputs do change


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_gradient_from_later_positions_is_exactly_zero(norm):
    model = small(norm=norm).train()  # dropout is 0: training mode computes the same function
    tokens = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(2))
    for i in range(T):
        grad = embedding_gradients(model, tokens, i)  # (b, t, e)
        assert torch.count_nonzero(grad[:, i + 1:]) == 0, f"position {i} sees later inputs"
        assert torch.count_nonzero(grad[:, : i + 1].abs().sum(-1)) == 2 * (i + 1)  # every earlier one matters
        model.zero_grad()


def test_without_the_mask_the_future_leaks():
    model = small(causal=False).eval()
    tokens = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(3))
    grad = embedding_gradients(model, tokens, 0)
    assert torch.count_nonzero(grad[:, 1:]) > 0  # position 0 reads the byte it should predict


def test_shapes_attention_and_context_limit():
    model = small().eval()
    tokens = torch.randint(0, 256, (4, 7))
    logits, weights = model(tokens, return_attention=True)
    assert logits.shape == (4, 7, 256) and len(weights) == 2
    for w in weights:
        assert w.shape == (4, 2, 7, 7)
        assert torch.count_nonzero(w.triu(diagonal=1)) == 0  # nothing above the diagonal
        torch.testing.assert_close(w.sum(-1), torch.ones(4, 2, 7))
    torch.testing.assert_close(model(tokens), logits, atol=1e-5, rtol=1e-5)  # fast path agrees
    with pytest.raises(ValueError, match="context is 10"):
        model(torch.zeros(1, T + 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(b, t\)"):
        model(torch.zeros(T, dtype=torch.long))


def test_built_from_every_profile():
    for name in ("smoke", "cpu", "gpu"):
        size = get_profile(name).enwik8
        model = Generator.from_profile(size)
        assert model.context == size.context and len(model.stack.blocks) == size.depth
