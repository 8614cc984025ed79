"""Chapter 14's parts: RMSNorm, SwiGLU, the Llama block and decoder (with the ablation's GPT-2 options),
Hugging Face's LlamaForCausalLM in our model, and the cosine schedule."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fromscratch.blocks import FeedForward
from fromscratch.chapters import get_profile
from fromscratch.models import GPT2, Llama, LlamaConfig
from fromscratch.models.llama import MLP, LlamaBlock, RMSNorm, SwiGLU, swiglu_hidden
from fromscratch.training.schedule import Schedule
from fromscratch.utils import count_parameters


# --- RMSNorm ---------------------------------------------------------------------------------------
def test_rms_norm_equals_the_formula_and_pytorch():
    torch.manual_seed(0)
    norm = RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        norm.weight.normal_()
    x = torch.randn(3, 5, 16) * 4
    by_hand = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * norm.weight
    torch.testing.assert_close(norm(x), by_hand)
    torch.testing.assert_close(norm(x), F.rms_norm(x, (16,), norm.weight, eps=1e-6))
    theirs = torch.nn.RMSNorm(16, eps=1e-6)
    theirs.load_state_dict(norm.state_dict())
    torch.testing.assert_close(norm(x), theirs(x))


def test_rms_norm_has_no_bias_keeps_the_dtype_and_ignores_the_mean():
    norm = RMSNorm(8)
    assert [n for n, _ in norm.named_parameters()] == ["weight"]
    assert norm.to(torch.bfloat16)(torch.randn(2, 8, dtype=torch.bfloat16)).dtype == torch.bfloat16
    norm = norm.float()
    x = torch.randn(4, 8)
    assert not torch.allclose(norm(x + 3.0), norm(x))  # LayerNorm would not move: it subtracts the mean
    torch.testing.assert_close(norm(5 * x), norm(x), atol=1e-4, rtol=1e-4)  # scale-free


# --- SwiGLU ----------------------------------------------------------------------------------------
def test_swiglu_equals_the_formula():
    torch.manual_seed(0)
    ff = SwiGLU(12, 20)
    x = torch.randn(2, 3, 12)
    w1, w3, w2 = ff.gate.weight, ff.up.weight, ff.down.weight  # llama2.c's names
    by_hand = (x @ w1.T * torch.sigmoid(x @ w1.T) * (x @ w3.T)) @ w2.T
    torch.testing.assert_close(ff(x), by_hand)
    torch.testing.assert_close(ff(x), F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2))
    assert all(m.bias is None for m in (ff.gate, ff.up, ff.down))


@pytest.mark.parametrize("emb", [48, 96, 384, 768])
def test_swiglu_of_two_thirds_width_has_the_mlps_weights(emb):
    hidden = swiglu_hidden(emb)
    assert 3 * emb * hidden == 2 * emb * 4 * emb  # emb divisible by 3: exactly equal
    mlp, swiglu = MLP(emb, 4 * emb, bias=False), SwiGLU(emb, hidden)
    assert count_parameters(mlp) == count_parameters(swiglu)
    assert swiglu_hidden(4096, multiple_of=256) == 11_008  # Llama 2 7B's width


# --- the block -------------------------------------------------------------------------------------
def test_one_block_is_gpt2s_or_llamas_by_its_config():
    sizes = dict(vocab_size=10, emb=32, heads=4, hidden=88)
    gpt2 = LlamaBlock(LlamaConfig(**sizes, kv_heads=4, norm_kind="layer", feedforward="gelu_tanh", bias=True))
    llama = LlamaBlock(LlamaConfig(**sizes, kv_heads=2))
    assert isinstance(gpt2.norm1, torch.nn.LayerNorm) and isinstance(gpt2.ff, MLP)
    assert isinstance(llama.norm1, RMSNorm) and isinstance(llama.ff, SwiGLU)
    assert not [n for n, _ in llama.named_parameters() if n.endswith("bias")]
    assert llama.attention.to_keys.weight.shape == (16, 32)  # 2 key/value heads of width 8
    x = torch.randn(2, 6, 32)
    assert gpt2(x).shape == llama(x).shape == (2, 6, 32)
    with pytest.raises(ValueError, match="'swiglu', 'gelu_tanh'"):
        Llama(LlamaConfig(**sizes, kv_heads=2, feedforward="moe"))


# --- the Llama decoder -----------------------------------------------------------------------------
def small(**fields) -> Llama:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, context=32, emb=32, heads=4, kv_heads=2, depth=2, hidden=88)
    return Llama(config, **fields).eval()


def test_logits_shapes_tied_and_untied():
    model = small()
    assert model(torch.zeros(3, 7, dtype=torch.long)).shape == (3, 7, 64)
    assert model.to_logits.weight is model.token_embedding.weight
    untied = small(tied=False)
    assert untied.to_logits.weight is not untied.token_embedding.weight
    assert count_parameters(untied) == count_parameters(model) + 64 * 32


def test_the_gpt2_style_rung_has_gpt2s_parameters():
    config = LlamaConfig(
        vocab_size=256,
        context=64,
        emb=32,
        heads=4,
        kv_heads=4,
        depth=2,
        hidden=128,
        norm_kind="layer",
        feedforward="gelu_tanh",
        positions="learned",
        bias=True,
    )
    gpt2 = GPT2(vocab_size=256, context=64, emb=32, heads=4, depth=2).eval()
    rung = Llama(config).eval()
    rung.load_state_dict(gpt2.state_dict())  # strict: the same names, the same shapes
    tokens = torch.randint(0, 256, (2, 20), generator=torch.Generator().manual_seed(0))
    pad = torch.arange(20) < torch.tensor([[20], [13]])  # (2, 20): the second row padded
    with torch.no_grad():
        torch.testing.assert_close(rung(tokens), gpt2(tokens), atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(rung(tokens, padding_mask=pad), gpt2(tokens, padding_mask=pad))


def test_the_mlp_is_gpt2s_feedforward():
    """``models.llama.MLP`` is a deliberate copy of GPT-2's ``FeedForward(activation="gelu_tanh")``."""
    mlp, ff = MLP(32, 128).eval(), FeedForward(32, 4, activation="gelu_tanh").eval()
    mlp.load_state_dict(ff.state_dict())
    x = torch.randn(2, 5, 32)
    torch.testing.assert_close(mlp(x), ff(x), atol=0, rtol=0)


@pytest.mark.parametrize(
    "fields", [{}, {"positions": "learned"}, {"norm_kind": "layer", "feedforward": "gelu_tanh", "bias": True}]
)
def test_cached_logits_equal_the_full_forward(fields):
    model = small(**fields)
    tokens = torch.randint(0, 64, (2, 20), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens)
        cache = model.new_cache()
        pieces = [model(tokens[:, :8], cache=cache)] + [
            model(tokens[:, i : i + 1], cache=cache) for i in range(8, 20)
        ]
    torch.testing.assert_close(torch.cat(pieces, 1), full, atol=1e-5, rtol=1e-4)
    assert cache[0].keys.shape == (2, 2, 20, 8)  # (b, hk, t, s)


def test_attention_weights_are_causal_and_one_per_block():
    weights = []
    small()(torch.zeros(1, 5, dtype=torch.long), attention=weights)
    assert len(weights) == 2 and weights[0].shape == (1, 4, 5, 5)
    assert torch.all(weights[1][0, :, 0, 1:] == 0)


def test_bad_configs_and_inputs_say_what_to_do():
    with pytest.raises(ValueError, match="kv_heads=3 must divide heads=4"):
        small(kv_heads=3)
    with pytest.raises(ValueError, match="positions must be one of 'rope', 'learned'"):
        small(positions="sideways")
    with pytest.raises(ValueError, match="even head width"):
        small(emb=36, heads=4, kv_heads=2)  # head width 9: RoPE has no pairs to turn
    with pytest.raises(ValueError, match="context=32"):
        small()(torch.zeros(1, 33, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(b, t\)"):
        small()(torch.zeros(5, dtype=torch.long))


def test_every_profile_ladder_changes_one_thing_at_a_time():
    for name in ("smoke", "cpu", "gpu"):
        ladder = get_profile(name).ch14.ladder
        assert len(ladder) == 6
        changed = [
            sorted(k for k in vars(a) if getattr(a, k) != getattr(b, k))
            for (_, a), (_, b) in zip(ladder, ladder[1:], strict=False)
        ]
        assert changed == [["norm_kind"], ["feedforward", "hidden"], ["positions"], ["kv_heads"], ["bias"]]
        mlp, swiglu = Llama(ladder[1][1]), Llama(ladder[2][1])
        weights = [
            sum(p.numel() for n, p in m.named_parameters() if "ff." in n and n.endswith("weight"))
            for m in (mlp, swiglu)
        ]
        assert weights[0] == weights[1]  # equal parameters (the feed-forwards' weights)


# --- Hugging Face's LlamaForCausalLM -----------------------------------------------------------------
@pytest.mark.parametrize(
    "heads, kv_heads, theta, tied, bias",
    [
        (4, 4, 10_000.0, True, False),
        (4, 2, 5_000.0, False, False),
        (8, 1, 500_000.0, False, False),
        (6, 3, 1e6, True, True),
    ],
)
def test_from_hf_llama_gives_equal_logits(heads, kv_heads, theta, tied, bias):
    transformers = pytest.importorskip("transformers")
    from fromscratch.interop import from_hf

    torch.manual_seed(0)
    sizes = dict(vocab_size=101, hidden_size=48, intermediate_size=100, num_hidden_layers=2)
    config = transformers.LlamaConfig(
        **sizes,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=64,
        rope_theta=theta,
        tie_word_embeddings=tied,
        attention_bias=bias,
        mlp_bias=bias,
        rms_norm_eps=1e-5,
    )
    theirs = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():  # weights far from their tiny initialisation, so a wrong mapping shows
        for p in theirs.parameters():
            p.normal_(0, 0.3)
    ours = from_hf(theirs)
    assert (ours.config.kv_heads, ours.config.rope_theta, ours.config.tied) == (kv_heads, theta, tied)
    ids = torch.randint(0, 101, (2, 40), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = theirs(ids).logits
        got = ours(ids)
    assert (got - expected).abs().max().item() <= 1e-4 * max(1.0, expected.abs().max().item())


def test_from_hf_refuses_what_our_llama_cannot_hold():
    transformers = pytest.importorskip("transformers")
    from fromscratch.interop import from_hf

    sizes = dict(vocab_size=10, hidden_size=16, intermediate_size=20, num_hidden_layers=1)
    config = transformers.LlamaConfig(
        **sizes, num_attention_heads=2, num_key_value_heads=2, hidden_act="gelu"
    )
    with pytest.raises(ValueError, match="hidden_act='gelu'"):
        from_hf(transformers.LlamaForCausalLM(config))


# --- the cosine schedule ---------------------------------------------------------------------------
def test_cosine_schedule_warms_up_then_follows_half_a_cosine_to_zero():
    schedule = Schedule(10, 110, None, shape="cosine")
    factors = [schedule(step) for step in range(111)]
    assert factors[:10] == pytest.approx([(s + 1) / 10 for s in range(10)])
    assert factors[10] == pytest.approx(1.0) and factors[110] == pytest.approx(0.0, abs=1e-12)
    assert factors[60] == pytest.approx(0.5)
    assert factors[35] == pytest.approx(0.5 * (1 + math.cos(math.pi * 0.25)))
    assert factors[35] > Schedule(10, 110, None)(35)  # above the straight line in the first half
    with pytest.raises(ValueError, match="'linear', 'cosine'"):
        Schedule(0, 10, None, shape="step")


def test_train_takes_the_cosine_schedule():
    from fromscratch.training import TrainConfig, train

    model = torch.nn.Linear(2, 1)
    batches = [(torch.randn(4, 2), torch.randn(4, 1))] * 3

    def loss(net, batch):
        return F.mse_loss(net(batch[0]), batch[1])

    config = TrainConfig(steps=20, lr=0.1, warmup_steps=2, schedule="cosine", progress=False)
    lrs = train(model, batches, loss, config).series("lr")[1]
    assert lrs[2] == pytest.approx(0.1) and lrs[11] == pytest.approx(0.05, rel=1e-3)
