"""bits_per_byte (chapter 07): exact averages over a stream, checked against values worked by hand."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from fromscratch.metrics import bits_per_byte, scoring_windows


class Bigram(nn.Module):
    """Next-byte logits that depend only on the current byte: logits[b, j] = table[x[b, j]]."""

    def __init__(self, table: torch.Tensor) -> None:
        super().__init__()
        self.table = nn.Parameter(table)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.table[x]  # (b, t, V)


class PositionAware(nn.Module):
    """Logits that depend on the byte and on its position j inside the window (its context length)."""

    def __init__(self, V: int = 5, t: int = 4) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.by_token = nn.Parameter(torch.randn(V, V, generator=gen))
        self.by_position = nn.Parameter(torch.randn(t, V, generator=gen))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.by_token[x] + self.by_position[: x.size(1)]  # (b, t, V)


def test_half_and_quarter_probabilities_by_hand():
    # After "a" (97) the model splits its bet evenly between "b" and "c": the true "b" costs 1 bit.
    # After "b" it spreads over "a", "b", "c", "d": the true "a" costs 2 bits. "ababa" -> (1+2+1+2)/4.
    table = torch.full((256, 256), float("-inf"))
    table[ord("a"), [ord("b"), ord("c")]] = 0.0
    table[ord("b"), [ord("a"), ord("b"), ord("c"), ord("d")]] = 0.0
    stream = torch.tensor(list(b"ababa"), dtype=torch.uint8)
    for context, stride in [(4, 1), (4, 2), (2, 1), (2, 2), (8, None)]:
        got = bits_per_byte(Bigram(table), stream, context=context, stride=stride, batch_size=2)
        assert got == pytest.approx(1.5, abs=1e-6)


def test_uniform_model_scores_eight_bits():
    stream = torch.randint(0, 256, (300,), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    got = bits_per_byte(Bigram(torch.zeros(256, 256)), stream, context=16, batch_size=7)
    assert got == pytest.approx(8.0, abs=1e-6)


def test_each_byte_scored_once_at_the_documented_window_position():
    # n = 10, context 4, stride 2. Written out by hand: (byte index i, its position j in the window).
    # window start 0 scores bytes 1-4 at j = 0-3; start 2 scores 5, 6 at j = 2, 3; start 4 scores
    # 7, 8 at j = 2, 3; the last window (start 5) scores byte 9 at j = 3.
    model = PositionAware()
    values = [0, 3, 1, 4, 2, 2, 0, 1, 3, 4]
    stream = torch.tensor(values, dtype=torch.uint8)
    plan = [(1, 0), (2, 1), (3, 2), (4, 3), (5, 2), (6, 3), (7, 2), (8, 3), (9, 3)]
    with torch.no_grad():
        nats = [
            -torch.log_softmax(model.by_token[values[i - 1]] + model.by_position[j], dim=0)[values[i]]
            for i, j in plan
        ]
    expected = float(sum(nats)) / len(plan) / math.log(2)
    got = bits_per_byte(model, stream, context=4, stride=2, batch_size=3)
    assert got == pytest.approx(expected, rel=1e-6)
    assert scoring_windows(10, 4, 2) == [(0, 4), (2, 2), (4, 2), (5, 1)]


@pytest.mark.parametrize("n, context, stride", [(2, 4, 1), (10, 4, 1), (10, 4, 4), (101, 8, 3), (50, 64, 7)])
def test_scored_counts_add_up(n, context, stride):
    windows = scoring_windows(n, context, stride)
    assert sum(scored for _, scored in windows) == n - 1
    length = min(context, n - 1)
    assert all(0 <= start <= n - 1 - length for start, _ in windows)


def test_restores_training_mode_and_rejects_bad_arguments():
    model = Bigram(torch.zeros(256, 256)).train()
    stream = torch.zeros(20, dtype=torch.uint8)
    bits_per_byte(model, stream, context=4)
    assert model.training
    with pytest.raises(ValueError, match="stride"):
        bits_per_byte(model, stream, context=4, stride=5)
    with pytest.raises(ValueError, match="nothing to predict"):
        bits_per_byte(model, stream[:1], context=4)


@pytest.mark.parametrize("training", [True, False])
def test_scoring_runs_in_eval_mode_and_restores_the_mode(training):
    seen = set()

    class Spy(PositionAware):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            seen.add(self.training)
            return super().forward(x)

    model = Spy().train(training)
    bits_per_byte(model, torch.tensor([0, 1, 2, 3, 4, 0, 1], dtype=torch.uint8), context=4)
    assert seen == {False} and model.training == training
