"""Sampling and greedy decoding (chapter 07): temperature, top-k, seeds longer than the context."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fromscratch.generate import decode, encode, generate, generate_tokens, greedy, next_token


class WindowSum(nn.Module):
    """A toy byte model whose prediction depends on every byte it sees, and that refuses long inputs."""

    def __init__(self, context: int = 8, V: int = 256) -> None:
        super().__init__()
        self.context = context
        gen = torch.Generator().manual_seed(0)
        self.table = nn.Parameter(torch.randn(V, V, generator=gen) * 3)
        self.mix = nn.Parameter(torch.randn(V, V, generator=gen))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(1) > self.context:
            raise ValueError(f"input of length {x.size(1)} exceeds the context {self.context}")
        running = self.mix[x].cumsum(dim=1)  # (b, t, V): depends on all earlier bytes
        return self.table[x] + 0.1 * running  # (b, t, V)


def test_encode_decode_round_trip_and_invalid_utf8():
    assert encode("ab[[").tolist() == [97, 98, 91, 91]
    assert decode(encode("Zürich [[link]]")) == "Zürich [[link]]"
    assert decode(torch.tensor([104, 105, 0xC3])) == "hi\ufffd"  # half a character becomes U+FFFD


def test_temperature_towards_zero_equals_greedy():
    model = WindowSum()
    expected = greedy(model, "The [[", 40)
    for temperature in (1e-3, 1e-4):
        assert generate(model, "The [[", 40, temperature=temperature, seed=3) == expected
    logits = torch.randn(5, 256, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(next_token(logits, temperature=0), logits.argmax(-1))
    torch.testing.assert_close(
        next_token(logits, temperature=1e-4, generator=torch.Generator().manual_seed(0)), logits.argmax(-1)
    )


def test_top_k_only_draws_from_the_k_most_likely():
    logits = torch.randn(4, 256, generator=torch.Generator().manual_seed(5))
    allowed = logits.topk(3, dim=-1).indices  # (4, 3)
    gen = torch.Generator().manual_seed(0)
    draws = torch.stack(
        [next_token(logits, temperature=5.0, top_k=3, generator=gen) for _ in range(300)]
    )  # (300, 4)
    for row in range(4):
        assert set(draws[:, row].tolist()) == set(allowed[row].tolist())  # all three seen, nothing else
    torch.testing.assert_close(next_token(logits, top_k=1, generator=gen), logits.argmax(-1))


def test_sampling_is_reproducible_and_follows_the_distribution():
    model = WindowSum()
    a = generate(model, "seed", 30, temperature=1.0, seed=7)
    assert a == generate(model, "seed", 30, temperature=1.0, seed=7)
    assert a != generate(model, "seed", 30, temperature=1.0, seed=8)
    probs = torch.tensor([[0.7, 0.2, 0.1]])
    draws = torch.stack(
        [next_token(probs.log(), generator=torch.Generator().manual_seed(i)) for i in range(2000)]
    )
    freq = torch.bincount(draws.flatten(), minlength=3).float() / 2000
    torch.testing.assert_close(freq, probs[0], atol=0.04, rtol=0)


def test_seeds_longer_than_the_context_are_cropped_to_their_end():
    model = WindowSum(context=8)
    long_seed = "x" * 50 + "<page>[[Ab"  # 60 bytes, the model takes at most 8
    cropped = long_seed[-8:]
    assert greedy(model, long_seed, 25) == greedy(model, cropped, 25)
    sampled = [generate(model, text, 25, temperature=0.8, seed=1) for text in (long_seed, cropped)]
    assert sampled[0] == sampled[1]
    out = generate_tokens(model, encode(long_seed)[None], 5, context=8, temperature=0)
    assert out.shape == (1, 65) and out[0, :60].tolist() == list(long_seed.encode())


def test_batched_rows_and_bad_arguments():
    model = WindowSum()
    rows = torch.stack([encode("abc"), encode("xyz")])  # (2, 3)
    out = generate_tokens(model, rows, 6, context=8, temperature=0)
    assert out.shape == (2, 9)
    assert decode(out[1, 3:]) == greedy(model, "xyz", 6)
    with pytest.raises(ValueError, match="temperature"):
        generate(model, "a", 3, temperature=-1)
    with pytest.raises(ValueError, match="top_k"):
        generate(model, "a", 3, top_k=0)
    with pytest.raises(ValueError, match="context"):
        generate(lambda x: x, "a", 3)
    with pytest.raises(ValueError, match="seed byte"):
        generate(model, "", 3)


def test_probabilities_worked_by_hand():
    from fromscratch.generate import probabilities

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    e4, e2 = torch.exp(torch.tensor(4.0)), torch.exp(torch.tensor(2.0))
    expected = torch.stack([e4, e2, torch.tensor(0.0), torch.tensor(0.0)]) / (e4 + e2)  # T = 0.5, top 2
    torch.testing.assert_close(probabilities(logits, temperature=0.5, top_k=2)[0], expected)
    torch.testing.assert_close(probabilities(logits, temperature=0)[0], torch.tensor([1.0, 0.0, 0.0, 0.0]))
    torch.testing.assert_close(probabilities(logits)[0], torch.softmax(logits[0], dim=0))


class ModeSpy(WindowSum):
    """WindowSum that records whether it was called in training mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen = {*getattr(self, "seen", set()), self.training}
        return super().forward(x)


@pytest.mark.parametrize("training", [True, False])
def test_generation_runs_in_eval_mode_and_restores_the_mode(training):
    model = ModeSpy().train(training)
    generate(model, "ab", 3)
    assert model.seen == {False} and model.training == training
