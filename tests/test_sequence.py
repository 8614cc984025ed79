"""Chapter 08's sequence models: encoders, one classifier for all four, path lengths against gradients."""

from __future__ import annotations

import math

import pytest
import torch
from torch.testing import assert_close

from fromscratch.attention.masks import padding_mask
from fromscratch.metrics.paths import (
    conv_layers_needed,
    conv_reach,
    farthest_reachable,
    gradient_map,
    layer_costs,
    max_path_length,
    rnn_sequential_steps,
)
from fromscratch.models import Classifier, SequenceClassifier, hidden_for_budget
from fromscratch.models.encoders import ENCODERS, ConvEncoder, RecurrentEncoder
from fromscratch.utils import count_parameters

TINY = dict(vocab_size=20, emb=8, heads=2, depth=2, context=16)
VARIANTS = [  # (encoder, extra fields): every encoder, and the options that change how padding is handled
    ("bag", {}),
    ("rnn", {}),
    ("rnn", {"cell": "lstm", "bidirectional": True, "hidden": 5}),
    ("cnn", {}),
    ("cnn", {"dilated": True, "kernel": 5, "hidden": 12}),
    ("transformer", {}),
]


def tiny(encoder: str, **fields) -> SequenceClassifier:
    torch.manual_seed(0)
    return SequenceClassifier(**(TINY | {"encoder": encoder} | fields)).eval()


@pytest.mark.parametrize(("encoder", "fields"), VARIANTS)
def test_shapes_and_zero_padding(encoder, fields):
    model = tiny(encoder, **fields)
    tokens = torch.randint(1, 20, (3, 7))  # (b, t)
    mask = padding_mask(torch.tensor([7, 4, 1]), 7)  # (b, t)
    out = model.encoder(tokens, padding_mask=mask)
    assert out.shape == (3, 7, 8)
    if encoder != "transformer":  # TransformerStack leaves padded positions as they come
        assert (out[~mask] == 0).all()
    assert model(tokens, padding_mask=mask).shape == (3, 2)


@pytest.mark.parametrize(("encoder", "fields"), VARIANTS)
def test_appending_padding_changes_no_real_output(encoder, fields):
    model = tiny(encoder, **fields)
    tokens = torch.randint(1, 20, (2, 6))  # (b, t)
    lengths = torch.tensor([6, 4])
    padded = torch.cat([tokens, torch.zeros(2, 3, dtype=torch.long)], dim=1)  # (b, t + 3)
    short, long = padding_mask(lengths, 6), padding_mask(lengths, 9)
    with torch.no_grad():
        out_short = model.encoder(tokens, padding_mask=short)  # (b, t, e)
        out_long = model.encoder(padded, padding_mask=long)  # (b, t + 3, e)
        assert_close(out_long[:, :6][short], out_short[short], atol=1e-6, rtol=1e-5)
        assert_close(
            model(padded, padding_mask=long), model(tokens, padding_mask=short), atol=1e-6, rtol=1e-5
        )


def test_rnn_gives_zeros_for_an_all_padding_sequence():
    model = tiny("rnn", bidirectional=True)
    tokens = torch.randint(1, 20, (2, 5))
    mask = padding_mask(torch.tensor([5, 0]), 5)
    with torch.no_grad():
        out = model.encoder(tokens, padding_mask=mask)  # (b, t, e)
        alone = model.encoder(tokens[:1])  # the real sequence on its own
    assert (out[1] == 0).all()
    assert_close(out[:1], alone)
    assert torch.isfinite(model(tokens, padding_mask=mask)).all()


def test_rnn_takes_a_16_bit_recurrence_as_cuda_autocast_runs_it():
    """On a GPU, autocast runs the GRU in fp16 while the zero states are fp32 (found by the GPU check)."""
    torch.manual_seed(0)
    rnn = RecurrentEncoder(vocab_size=20, emb=8, context=10)
    tokens = torch.randint(1, 20, (3, 10))
    keep = padding_mask(torch.tensor([10, 6, 3]), 10)
    expected = rnn(tokens, padding_mask=keep)

    class HalfGRU(torch.nn.Module):  # what CUDA autocast does to nn.GRU: a 16-bit output
        def __init__(self, gru: torch.nn.Module) -> None:
            super().__init__()
            self.gru = gru

        def forward(self, packed):
            out, h = self.gru(packed)
            return out._replace(data=out.data.half()), h

    rnn.rnn = HalfGRU(rnn.rnn)
    assert_close(rnn(tokens, padding_mask=keep), expected, atol=1e-2, rtol=1e-2)


def test_rnn_refuses_left_padding():
    mask = torch.tensor([[False, True, True]])
    with pytest.raises(ValueError, match="right padding"):
        tiny("rnn").encoder(torch.ones(1, 3, dtype=torch.long), padding_mask=mask)


@pytest.mark.parametrize("encoder", ENCODERS)
def test_bad_input_says_what_to_do(encoder):
    model = tiny(encoder)
    with pytest.raises(ValueError, match="context=16"):
        model(torch.ones(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tokens\[None\]"):
        model(torch.ones(5, dtype=torch.long))
    with pytest.raises(ValueError, match="padding_mask"):
        model(torch.ones(1, 5, dtype=torch.long), padding_mask=torch.ones(1, 4, dtype=torch.bool))


def test_bad_options():
    with pytest.raises(ValueError, match="encoder must be one of"):
        SequenceClassifier(**TINY, encoder="lstm")
    with pytest.raises(ValueError, match="'gru' or 'lstm'"):
        SequenceClassifier(**TINY, encoder="rnn", cell="elman")
    with pytest.raises(ValueError, match="kernel must be odd"):
        SequenceClassifier(**TINY, encoder="cnn", kernel=4)


def test_transformer_encoder_is_the_chapter_06_classifier():
    model = tiny("transformer")
    reference = Classifier(**TINY, pooling="mean").eval()
    state = {key.replace("encoder.", "stack.", 1): value for key, value in model.state_dict().items()}
    reference.load_state_dict(state)
    tokens = torch.randint(1, 20, (3, 7))
    tokens[1, 5:] = 0  # padding, found through pad_id by both
    with torch.no_grad():
        assert_close(model(tokens), reference(tokens))


@pytest.mark.parametrize("encoder", ["rnn", "cnn"])
def test_hidden_for_budget_is_the_closest_width(encoder):
    sizes = dict(vocab_size=100, emb=16, heads=2, depth=2, context=32)
    budget = count_parameters(SequenceClassifier(**sizes))  # the transformer's count
    hidden = hidden_for_budget(budget, encoder=encoder, **sizes)

    def miss(h: int) -> int:
        return abs(count_parameters(SequenceClassifier(**sizes, encoder=encoder, hidden=h)) - budget)

    assert miss(hidden) <= min(miss(hidden - 1), miss(hidden + 1))
    assert miss(hidden) < 0.05 * budget


def test_hidden_for_budget_refuses_what_it_cannot_size():
    with pytest.raises(ValueError, match="only the 'rnn' and 'cnn'"):
        hidden_for_budget(10_000, **TINY)
    with pytest.raises(ValueError, match="over the budget"):
        hidden_for_budget(10, **TINY, encoder="rnn")


# --- path lengths: the formulas against gradient reachability ------------------------------------
def reached(encoder, t: int, position: int) -> torch.Tensor:
    return gradient_map(encoder, t, outputs=[position])[0] > 0  # (t,)


@pytest.mark.parametrize(
    ("depth", "kernel", "dilated"), [(2, 3, False), (3, 5, False), (3, 3, True), (2, 5, True)]
)
def test_conv_reach_matches_the_gradients(depth, kernel, dilated):
    torch.manual_seed(0)
    cnn = ConvEncoder(vocab_size=20, emb=8, context=40, depth=depth, kernel=kernel, dilated=dilated)
    t, position = 31, 15
    reach = conv_reach(depth, kernel, dilated=dilated)
    assert reach < position  # the window fits inside the sequence
    assert torch.equal(reached(cnn, t, position), (torch.arange(t) - position).abs() <= reach)
    assert farthest_reachable(cnn, t) == reach  # read at the last position: reach inputs back
    assert conv_layers_needed(reach, kernel, dilated=dilated) == depth
    assert conv_layers_needed(reach + 1, kernel, dilated=dilated) == depth + 1


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_rnn_paths_match_the_gradients(cell):
    torch.manual_seed(0)
    one_way = RecurrentEncoder(vocab_size=20, emb=8, context=16, cell=cell)
    both_ways = RecurrentEncoder(vocab_size=20, emb=8, context=16, cell=cell, bidirectional=True)
    t = 12
    assert torch.equal(reached(one_way, t, 5), torch.arange(t) <= 5)  # the past only
    assert reached(both_ways, t, 5).all()
    assert farthest_reachable(one_way, t) == max_path_length("rnn", t) == t - 1
    assert rnn_sequential_steps(t) == t


def test_attention_joins_every_pair_and_a_bag_none():
    transformer = tiny("transformer", depth=1).encoder
    bag = tiny("bag").encoder
    grads = gradient_map(transformer, 9)  # (t, t)
    assert grads.shape == (9, 9) and (grads > 0).all()
    assert max_path_length("transformer", 9) == 1
    assert torch.equal(gradient_map(bag, 9) > 0, torch.eye(9, dtype=torch.bool))
    assert max_path_length("bag", 9) == math.inf


def test_vaswani_table_1():
    assert layer_costs("transformer", 100, emb=16) == {
        "operations": 100**2 * 16,
        "sequential": 1,
        "max_path": 1,
    }
    assert layer_costs("rnn", 100, emb=16) == {"operations": 100 * 16**2, "sequential": 100, "max_path": 99}
    assert layer_costs("cnn", 100, emb=16, kernel=3)["max_path"] == 99  # reach 1 per layer
    assert layer_costs("cnn", 100, emb=16, kernel=3, dilated=True)["max_path"] == 7  # 2**7 - 1 >= 99
    assert conv_layers_needed(100, 5, dilated=False) == 50
    with pytest.raises(ValueError, match="kernel must be odd"):
        conv_reach(2, 1)
    with pytest.raises(ValueError, match="encoder must be one of"):
        max_path_length("lstm", 10)
