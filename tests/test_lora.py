"""Chapter 15's LoRA: exact at the start, merged = unmerged, equal to ``peft``'s with the same A and B
(one layer, and a whole grouped-query Llama through ``transformers``), and what it trains."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from fromscratch.blocks.lora import LoRALinear, add_lora, lora_layers, merge_lora, trainable_share
from fromscratch.models import Llama, LlamaConfig
from fromscratch.training.sft import step_cost

CONFIG = LlamaConfig(vocab_size=97, context=64, emb=48, heads=6, kv_heads=2, depth=2, hidden=96)
TARGETS = ("to_queries", "to_keys", "to_values", "down")


def trained(model: nn.Module, seed: int = 0) -> nn.Module:
    """``model`` with every LoRA B drawn at random, as after some training."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in lora_layers(model).values():
            layer.B.copy_(torch.randn(layer.B.shape, generator=generator) * 0.3)
    return model


@pytest.fixture
def lora_llama():
    torch.manual_seed(0)
    base = Llama(CONFIG).eval()
    model = copy.deepcopy(base)
    names = add_lora(model, targets=TARGETS, rank=4, alpha=8.0, seed=1)
    return base, model, names


def test_at_initialisation_the_model_is_exactly_the_base(lora_llama):
    base, model, names = lora_llama
    assert len(names) == CONFIG.depth * len(TARGETS) and names[0] == "blocks.0.attention.to_queries"
    ids = torch.randint(0, CONFIG.vocab_size, (2, 20), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(model(ids), base(ids))


def test_only_a_and_b_train(lora_llama):
    _, model, names = lora_llama
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {f"{name}.{ab}" for name in names for ab in "AB"}
    n, total = trainable_share(model)
    assert n == sum(4 * (m.base.in_features + m.base.out_features) for m in lora_layers(model).values())
    assert total == sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, CONFIG.vocab_size, (2, 10))
    model(ids).sum().backward()
    layer = next(iter(lora_layers(model).values()))
    assert layer.B.grad is not None and layer.base.weight.grad is None


def test_merged_equals_unmerged(lora_llama):
    _, model, _ = lora_llama
    trained(model)
    x = torch.randn(5, CONFIG.emb, generator=torch.Generator().manual_seed(2))
    for layer in lora_layers(model).values():
        inputs = x if layer.base.in_features == CONFIG.emb else torch.randn(5, layer.base.in_features)
        exact = copy.deepcopy(layer).double()  # the identity itself, without float32's rounding
        assert (exact.merged()(inputs.double()) - exact(inputs.double())).abs().max() <= 1e-12
        assert (layer.merged()(inputs) - layer(inputs)).abs().max() <= 1e-5  # float32: rounding only
        assert torch.allclose(layer.delta(), layer.scale * layer.B @ layer.A)
    ids = torch.randint(0, CONFIG.vocab_size, (2, 16), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        unmerged = model(ids)
        merged_model = merge_lora(copy.deepcopy(model))
        assert not lora_layers(merged_model)
        assert (merged_model(ids) - unmerged).abs().max() <= 1e-5


def test_one_layer_equals_peft_with_the_same_a_and_b():
    pytest.importorskip("peft")
    from fromscratch.interop.hf_lora import peft_layer

    layer = LoRALinear(nn.Linear(12, 7), rank=3, alpha=6.0)
    with torch.no_grad():
        layer.B.normal_()
    x = torch.randn(4, 12)
    assert (peft_layer(layer)(x) - layer(x)).abs().max() <= 1e-6


def test_the_whole_model_equals_transformers_with_peft(lora_llama):
    pytest.importorskip("peft")
    from fromscratch.interop.hf_llama import pairs_from_halves
    from fromscratch.interop.hf_lora import halves_from_pairs, peft_twin

    rows = torch.arange(24.0)[:, None]
    assert torch.equal(pairs_from_halves(halves_from_pairs(rows, 2), 2), rows)
    _, model, _ = lora_llama
    trained(model)
    twin = peft_twin(model, targets=TARGETS)
    ids = torch.randint(0, CONFIG.vocab_size, (2, 24), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        assert (twin(ids).logits - model(ids)).abs().max() <= 1e-5


def test_lora_trains_fewer_numbers_and_keeps_fewer_activations(lora_llama):
    base, model, _ = lora_llama
    batch = {
        "ids": torch.randint(0, CONFIG.vocab_size, (2, 12)),
        "labels": torch.randint(0, CONFIG.vocab_size, (2, 12)),
    }
    full = step_cost(copy.deepcopy(base).train(), batch, repeats=1)
    lora = step_cost(model, batch, repeats=1)
    assert lora.trainable < full.trainable and lora.optimizer_bytes < full.optimizer_bytes
    assert lora.activation_bytes < full.activation_bytes
    assert full.trainable == full.total == sum(p.numel() for p in base.parameters())


def test_bad_requests_are_clear_errors():
    model = Llama(CONFIG)
    with pytest.raises(ValueError, match="list of layer names"):
        add_lora(model, targets="to_queries", rank=2, alpha=2)
    with pytest.raises(ValueError, match="No nn.Linear"):
        add_lora(model, targets=["q_proj"], rank=2, alpha=2)
    with pytest.raises(ValueError, match="rank must lie"):
        LoRALinear(nn.Linear(4, 3), rank=5, alpha=1)


@pytest.fixture
def small_model():
    return nn.Sequential(nn.Linear(8, 8))


def test_add_lora_leaves_the_global_random_state_alone(small_model, global_rng_untouched):
    assert add_lora(small_model, targets=["0"], rank=2, alpha=4) == ["0"]
