"""metrics.flops against PyTorch's own count (torch.utils.flop_counter.FlopCounterMode) on a real step.

FlopCounterMode counts matrix products (mm, addmm, bmm, the fused attention kernels of CUDA) and nothing
else: not softmax, norms, activations, RoPE, residual sums, bias additions or the loss. Those are exactly
what flops_per_token leaves out, so the matrix products must agree to the FLOP. On a CPU, PyTorch's fused
attention kernel (``_scaled_dot_product_flash_attention_for_cpu``) is not in the counter's registry: a step
that takes it shows the weights' FLOPs only, so the full check writes the attention weights out
(``attention=[]``), where the scores and the weighted sum are two counted ``bmm``.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from fromscratch.metrics.flops import flops_per_token, parameter_count, training_flops
from fromscratch.models.generator import Generator, GeneratorConfig
from fromscratch.models.llama import Llama, LlamaConfig
from fromscratch.utils import count_parameters

LLAMA = LlamaConfig(vocab_size=97, context=32, emb=48, heads=6, kv_heads=2, depth=3, hidden=128)
CONFIGS = {
    "llama": LLAMA,  # tied, grouped-query attention (6 query heads, 2 key/value heads)
    "llama-untied": LlamaConfig(**{**LLAMA.__dict__, "tied": False}),
    "generator": GeneratorConfig(vocab_size=256, emb=32, heads=4, depth=2, context=24),  # biases, untied
}


def build(config):
    torch.manual_seed(0)
    return Llama(config) if isinstance(config, LlamaConfig) else Generator(config)


def counted_step(model, b: int, t: int, *, written_out: bool) -> dict[str, int]:
    """PyTorch's FLOP count, per operator, of one forward and backward on ``(b, t)`` random tokens."""
    tokens = torch.randint(0, model.config.vocab_size, (b, t), generator=torch.Generator().manual_seed(1))
    with FlopCounterMode(display=False) as counter:
        logits = model(tokens, attention=[]) if written_out else model(tokens)  # (b, t, V)
        logits.float().logsumexp(-1).mean().backward()
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_flops_per_token_equal_pytorchs_count_of_a_training_step(name):
    config = CONFIGS[name]
    model = build(config)
    b, t = 3, config.context
    counted = counted_step(model, b, t, written_out=True)
    flops = flops_per_token(model, t)
    assert sum(counted.values()) == flops.total * b * t, counted
    # the attention term is the bmm (the scores and the weighted sum); the linear layers are mm/addmm
    assert counted["aten.bmm"] == flops.attention * b * t
    assert training_flops(config, b * t, t) == flops.total * b * t


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_shorter_sequence_costs_less_attention_only(name):
    config = CONFIGS[name]
    model = build(config)
    t = config.context // 2
    counted = counted_step(model, 2, t, written_out=True)
    flops = flops_per_token(model, t)
    assert sum(counted.values()) == flops.total * 2 * t
    assert flops.weights == flops_per_token(model).weights
    assert flops.attention * 2 == flops_per_token(model).attention


def test_the_cpu_fused_kernel_is_not_counted_by_pytorch():
    # what a learner sees when the counter runs on an ordinary CPU step: the weights' FLOPs alone
    model = build(LLAMA)
    counted = counted_step(model, 2, LLAMA.context, written_out=False)
    if attention := set(counted) - {"aten.mm", "aten.addmm"}:  # a later PyTorch may count the kernel
        pytest.skip(f"this PyTorch counts the fused CPU attention kernel: {sorted(attention)}")
    assert sum(counted.values()) == flops_per_token(model).weights * 2 * LLAMA.context


@pytest.mark.parametrize("name", list(CONFIGS))
def test_parameter_counts_with_and_without_embeddings(name):
    config = CONFIGS[name]
    model = build(config)
    count = parameter_count(config)  # from the config alone (a model on the meta device)
    assert count == parameter_count(model)
    assert count.total == count_parameters(model)
    e, V = config.emb, config.vocab_size
    if isinstance(config, LlamaConfig):  # the token embedding, and the output layer when untied
        assert count.embedding == V * e * (1 if config.tied else 2)
    else:  # token and position embeddings, the output layer with its bias
        assert count.embedding == V * e + config.context * e + V * e + V
    blocks = sum(p.numel() for p in model.parameters()) - count.embedding
    assert count.non_embedding == blocks
    # every weight that multiplies a token, the output layer's included: 2 per token forward
    assert count.matmul_weights == sum(
        m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear)
    )


def test_the_smollm2_default_config_matches_its_published_size():
    count = parameter_count(LlamaConfig())  # SmolLM2-135M, counted without building it
    assert 134_000_000 < count.total < 135_000_000
    assert count.embedding == 49_152 * 576  # tied: one vocabulary matrix, 28 M of the 135 M


def test_other_models_and_lengths_are_refused_with_what_to_do():
    with pytest.raises(ValueError, match="Llama or a Generator"):
        parameter_count(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="1..context"):
        flops_per_token(LLAMA, LLAMA.context + 1)
