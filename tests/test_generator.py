"""The causal generator (chapter 07): output i never depends on inputs after i, in value or gradient."""

from __future__ import annotations

import math

import pytest
import torch

from fromscratch.chapters import get_profile
from fromscratch.models import Generator, GeneratorConfig
from fromscratch.training.losses import next_byte_loss

T = 10


def small(causal: bool = True, norm: str = "post", seed: int = 0) -> Generator:
    torch.manual_seed(seed)
    return Generator(emb=16, heads=2, depth=2, context=T, causal=causal, norm=norm)


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
@pytest.mark.parametrize("written_out", [False, True])  # the fast path and the teaching path
def test_changing_later_tokens_never_changes_earlier_outputs(norm, written_out):
    model = small(norm=norm).eval()
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 256, (3, T), generator=gen)

    def run(x):
        return model(x, attention=[] if written_out else None)

    logits = run(tokens)
    for i in range(T - 1):
        changed = tokens.clone()
        changed[:, i + 1 :] = torch.randint(0, 256, (3, T - i - 1), generator=gen)
        torch.testing.assert_close(run(changed)[:, : i + 1], logits[:, : i + 1], atol=0, rtol=0)
        assert not torch.allclose(run(changed)[:, i + 1 :], logits[:, i + 1 :])  # later outputs do change


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_gradient_from_later_positions_is_exactly_zero(norm):
    model = small(norm=norm).train()  # dropout is 0: training mode computes the same function
    tokens = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(2))
    for i in range(T):
        grad = embedding_gradients(model, tokens, i)  # (b, t, e)
        assert torch.count_nonzero(grad[:, i + 1 :]) == 0, f"position {i} sees later inputs"
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
    weights = []
    logits = model(tokens, attention=weights)
    assert logits.shape == (4, 7, 256) and len(weights) == 2
    for w in weights:
        assert w.shape == (4, 2, 7, 7)
        assert torch.count_nonzero(w.triu(diagonal=1)) == 0  # nothing above the diagonal
        torch.testing.assert_close(w.sum(-1), torch.ones(4, 2, 7))
    torch.testing.assert_close(model(tokens), logits, atol=1e-5, rtol=1e-5)  # fast path agrees
    with pytest.raises(ValueError, match="context=10"):
        model(torch.zeros(1, T + 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(b, t\)"):
        model(torch.zeros(T, dtype=torch.long))


def test_built_from_every_profile():
    for name in ("smoke", "cpu", "gpu"):
        run = get_profile(name).ch07
        model = Generator(run.model)
        assert model.config == run.model and len(model.stack.blocks) == run.model.depth
        assert model.context == run.model.context and model.vocab_size == 256
        demo = Generator(run.model, context=run.demo_context, causal=False)
        assert demo.config.context == run.demo_context and not demo.config.causal
        assert demo.config.emb == run.model.emb


def test_config_defaults_are_the_blogs_model():
    assert GeneratorConfig() == GeneratorConfig(vocab_size=256, emb=256, heads=8, depth=12, context=256)
    with pytest.raises(TypeError, match="takes a GeneratorConfig"):
        Generator(256)
    with pytest.raises(TypeError):
        small()(torch.zeros(1, 3, dtype=torch.long), [])  # attention is keyword-only


def test_next_byte_loss_is_bits_per_predicted_byte():
    class Uniform(torch.nn.Module):  # knows nothing: every byte equally likely, 8 bits each
        def forward(self, tokens):
            return torch.zeros(*tokens.shape, 256)  # (b, t, V)

    inputs, targets = torch.randint(0, 256, (2, 2, 5))
    assert next_byte_loss(Uniform(), (inputs, targets)).item() == pytest.approx(8.0)
    model = small().eval()
    nats = torch.nn.functional.cross_entropy(model(inputs).reshape(-1, 256), targets.reshape(-1))
    assert next_byte_loss(model, (inputs, targets)).item() == pytest.approx(
        nats.item() / math.log(2), rel=1e-5
    )
