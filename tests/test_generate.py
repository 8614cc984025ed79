"""Sampling (chapters 07, 14, 15): temperature, top-k, top-p, stop tokens, prompts longer than the context,
and the one ``generate`` against the greedy loops it replaced."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fromscratch.generate import decode, encode, generate, generate_text, next_token, probabilities
from fromscratch.models import Llama
from fromscratch.utils import evaluating


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


def greedy(model, text: str, steps: int) -> str:
    return generate_text(model, text, steps=steps, temperature=0)


def test_encode_decode_round_trip_and_invalid_utf8():
    assert encode("ab[[").tolist() == [97, 98, 91, 91]
    assert decode(encode("Zürich [[link]]")) == "Zürich [[link]]"
    assert decode(torch.tensor([104, 105, 0xC3])) == "hi\ufffd"  # half a character becomes U+FFFD


def test_temperature_towards_zero_equals_greedy():
    model = WindowSum()
    expected = greedy(model, "The [[", 40)
    for temperature in (1e-3, 1e-4):
        assert generate_text(model, "The [[", steps=40, temperature=temperature, seed=3) == expected
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


def test_top_p_keeps_the_nucleus_worked_by_hand():
    # softmax of log([0.5, 0.25, 0.15, 0.1]) is that distribution itself; p = 0.7: the mass before the
    # first token is 0, before the second 0.5, before the third 0.75 >= 0.7: keep two, renormalise
    logits = torch.tensor([[0.5, 0.25, 0.15, 0.1]]).log()
    torch.testing.assert_close(probabilities(logits, top_p=0.7)[0], torch.tensor([2 / 3, 1 / 3, 0.0, 0.0]))
    torch.testing.assert_close(probabilities(logits, top_p=0.75)[0], torch.tensor([2 / 3, 1 / 3, 0.0, 0.0]))
    torch.testing.assert_close(
        probabilities(logits, top_p=0.76)[0], torch.tensor([0.5, 0.25, 0.15, 0.0]) / 0.9
    )
    torch.testing.assert_close(probabilities(logits, top_p=0.1)[0], torch.tensor([1.0, 0.0, 0.0, 0.0]))
    torch.testing.assert_close(probabilities(logits, top_p=1.0)[0], torch.tensor([0.5, 0.25, 0.15, 0.1]))
    # the order of the vocabulary does not matter, and rows are independent
    shuffled = logits[:, [2, 0, 3, 1]].expand(2, -1)
    torch.testing.assert_close(probabilities(shuffled, top_p=0.7)[1], torch.tensor([0.0, 2 / 3, 0.0, 1 / 3]))
    # after a temperature and a top-k, as chapter 14's sampler: T = 0.5 squares the ratios
    squared = torch.tensor([0.25, 0.0625, 0.0225, 0.01])
    expected = torch.tensor([1.0, 0.0625 / 0.25, 0.0, 0.0]) / (1 + 0.25)
    torch.testing.assert_close(probabilities(logits, temperature=0.5, top_p=0.9)[0], expected)
    assert squared[0] / squared.sum() < 0.9 < (squared[0] + squared[1]) / squared.sum()  # why two are kept
    draws = {
        int(next_token(logits, top_p=0.7, generator=torch.Generator().manual_seed(i))) for i in range(50)
    }
    assert draws == {0, 1}
    with pytest.raises(ValueError, match="top_p"):
        probabilities(logits, top_p=0.0)


def test_probabilities_worked_by_hand():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    e4, e2 = torch.exp(torch.tensor(4.0)), torch.exp(torch.tensor(2.0))
    expected = torch.stack([e4, e2, torch.tensor(0.0), torch.tensor(0.0)]) / (e4 + e2)  # T = 0.5, top 2
    torch.testing.assert_close(probabilities(logits, temperature=0.5, top_k=2)[0], expected)
    torch.testing.assert_close(probabilities(logits, temperature=0)[0], torch.tensor([1.0, 0.0, 0.0, 0.0]))
    torch.testing.assert_close(probabilities(logits)[0], torch.softmax(logits[0], dim=0))


def test_sampling_is_reproducible_and_follows_the_distribution():
    model = WindowSum()
    a = generate_text(model, "seed", steps=30, temperature=1.0, seed=7)
    assert a == generate_text(model, "seed", steps=30, temperature=1.0, seed=7)
    assert a != generate_text(model, "seed", steps=30, temperature=1.0, seed=8)
    probs = torch.tensor([[0.7, 0.2, 0.1]])
    draws = torch.stack(
        [next_token(probs.log(), generator=torch.Generator().manual_seed(i)) for i in range(2000)]
    )
    freq = torch.bincount(draws.flatten(), minlength=3).float() / 2000
    torch.testing.assert_close(freq, probs[0], atol=0.04, rtol=0)


def test_prompts_longer_than_the_context_are_cropped_to_their_end():
    model = WindowSum(context=8)
    long_seed = "x" * 50 + "<page>[[Ab"  # 60 bytes, the model takes at most 8
    cropped = long_seed[-8:]
    assert greedy(model, long_seed, 25) == greedy(model, cropped, 25)
    sampled = [generate_text(model, text, steps=25, temperature=0.8, seed=1) for text in (long_seed, cropped)]
    assert sampled[0] == sampled[1]
    out = generate(model, encode(long_seed)[None], steps=5, temperature=0)
    assert out.shape == (1, 65) and out[0, :60].tolist() == list(long_seed.encode())


def test_a_stop_token_ends_each_sequence_where_it_is_drawn():
    model = WindowSum()
    rows = torch.stack([encode("abc"), encode("xyz")])  # (2, 3)
    free = generate(model, rows, steps=12, temperature=0)  # (2, 15): no stop
    stop = int(free[0, 3 + 4])  # the 5th token row 0 writes
    first = [i for i in range(3, 15) if free[1, i] == stop]
    out = generate(model, rows, steps=12, temperature=0, stop=[stop])
    end0 = 3 + next(i for i in range(12) if free[0, 3 + i] == stop)  # row 0's first stop token
    end = max(end0, first[0] if first else 14)  # generation ends when every row has stopped
    assert out.shape == (2, end + 1)
    assert torch.equal(out[0, : end0 + 1], free[0, : end0 + 1]) and (out[0, end0:] == stop).all()
    assert torch.equal(out[1, : (first[0] if first else 14) + 1], free[1, : (first[0] if first else 14) + 1])
    assert torch.equal(generate(model, rows, steps=12, temperature=0, stop=[-1]), free)  # never drawn


def test_batched_rows_and_bad_arguments():
    model = WindowSum()
    rows = torch.stack([encode("abc"), encode("xyz")])  # (2, 3)
    out = generate(model, rows, steps=6, temperature=0)
    assert out.shape == (2, 9)
    assert decode(out[1, 3:]) == greedy(model, "xyz", 6)
    with pytest.raises(ValueError, match="temperature"):
        generate_text(model, "a", steps=3, temperature=-1)
    with pytest.raises(ValueError, match="top_k"):
        generate_text(model, "a", steps=3, top_k=0)
    with pytest.raises(ValueError, match=r"t >= 1"):
        generate_text(model, "", steps=3)
    with pytest.raises(TypeError):
        generate(model, rows, 3)  # steps is keyword-only


class ModeSpy(WindowSum):
    """WindowSum that records whether it was called in training mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen = {*getattr(self, "seen", set()), self.training}
        return super().forward(x)


@pytest.mark.parametrize("training", [True, False])
def test_generation_runs_in_eval_mode_and_restores_the_mode(training):
    model = ModeSpy().train(training)
    generate_text(model, "ab", steps=3)
    assert model.seen == {False} and model.training == training


@torch.no_grad()
def greedy_reply(model, ids, *, max_new: int, stop: int) -> list[int]:
    """Chapter 15's own decoding loop before this ``generate`` (``recipes/assistant.py`` at 012f766)."""
    cache, fresh, out = model.new_cache(), torch.tensor([list(ids)]), []
    with evaluating(model):
        for _ in range(max_new):
            token = int(model(fresh, cache=cache)[0, -1].argmax())
            out.append(token)
            if token == stop:
                break
            fresh = torch.tensor([[token]])
    return out


@pytest.mark.parametrize("stop", [None, "drawn"])
def test_greedy_generate_gives_chapter_15s_greedy_reply(stop):
    torch.manual_seed(0)
    model = Llama(vocab_size=40, context=64, emb=32, heads=4, kv_heads=2, depth=2, hidden=48)
    ids = [3, 17, 5, 9]
    # no stop token, or one the model does draw, part way
    stop = -1 if stop is None else greedy_reply(model, ids, max_new=20, stop=-1)[6]
    expected = greedy_reply(model, ids, max_new=20, stop=stop)
    out = generate(model, torch.tensor([ids]), steps=20, temperature=0, stop=[stop])
    assert out[0, len(ids) :].tolist() == expected
