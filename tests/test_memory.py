"""Chapter 12's memory estimate agrees with what autograd really saves (within 15 %)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fromscratch.chapters import PROFILE_NAMES, get_profile
from fromscratch.chapters.ch12_going_big.profile import training_runs
from fromscratch.models import Classifier, ClassifierConfig, Generator, GeneratorConfig
from fromscratch.training.memory import (
    T4_BYTES,
    attention_matrix_bytes,
    estimate_memory,
    fits,
    measure_activations,
    mib,
)

GENERATORS = [
    GeneratorConfig(vocab_size=64, emb=32, heads=4, depth=3, context=24),
    GeneratorConfig(vocab_size=64, emb=32, heads=4, depth=2, context=24, norm="pre", dropout=0.1),
    GeneratorConfig(vocab_size=64, emb=48, heads=2, depth=2, context=40, checkpoint=True),
    GeneratorConfig(
        vocab_size=64, emb=32, heads=4, depth=4, context=16, dropout=0.1, checkpoint=True, norm="pre"
    ),
]


def saved_by_generator(config: GeneratorConfig, batch: int, precision: str, attention: str) -> int:
    torch.manual_seed(0)
    model = Generator(config)
    tokens = torch.randint(0, config.vocab_size, (batch, config.context))
    teaching = attention == "teaching"

    def forward():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = model(tokens, attention=[] if teaching else None)  # (b, t, V)
            return F.cross_entropy(logits.transpose(1, 2), tokens)

    return measure_activations(model, forward).bytes


@pytest.mark.parametrize(
    "config", GENERATORS, ids=lambda c: f"d{c.depth}-{c.norm}-p{c.dropout}-ck{c.checkpoint}"
)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("attention", ["fast", "teaching"])
def test_generator_estimate_within_15_percent_of_measurement(config, precision, attention):
    estimate = estimate_memory(config, 3, precision=precision, attention=attention)
    measured = saved_by_generator(config, 3, precision, attention)
    assert estimate.activations + estimate.weight_copies == pytest.approx(measured, rel=0.15)


@pytest.mark.parametrize("pad_id", [0, None])
@pytest.mark.parametrize("attention", ["fast", "teaching"])
def test_classifier_estimate_within_15_percent_of_measurement(pad_id, attention):
    config = ClassifierConfig(
        vocab_size=100, emb=32, heads=4, depth=2, context=40, dropout=0.1, pad_id=pad_id
    )
    torch.manual_seed(0)
    model = Classifier(config)
    tokens = torch.randint(1, 100, (4, 40))
    tokens[0, 30:] = 0
    labels = torch.randint(0, 2, (4,))
    teaching = attention == "teaching"

    def forward():
        return F.cross_entropy(model(tokens, attention=[] if teaching else None), labels)

    measured = measure_activations(model, forward).bytes
    assert estimate_memory(config, 4, attention=attention).activations == pytest.approx(measured, rel=0.15)


def test_the_t_squared_term_is_the_teaching_paths_alone():
    config = GeneratorConfig(emb=64, heads=4, depth=2, context=512)
    teaching = estimate_memory(config, 2, attention="teaching")
    fast = estimate_memory(config, 2, attention="fast")
    assert teaching.scores == 2 * attention_matrix_bytes(2, 512, heads=4)  # softmax output + its masked copy
    assert fast.scores == 0 and fast.activations < teaching.activations
    # doubling t doubles the fast path's activations but nearly quadruples the teaching path's scores
    longer = estimate_memory(config, 2, 1024, attention="teaching")
    assert longer.scores == 4 * teaching.scores


def test_checkpointing_keeps_one_input_per_block():
    config = GeneratorConfig(emb=64, heads=4, depth=6, context=128)
    plain, ckpt = estimate_memory(config, 4), estimate_memory(config, 4, checkpoint=True)
    assert ckpt.per_block == 4 * 128 * 64 * 4 and ckpt.activations < plain.activations / 3
    assert ckpt.recompute == plain.per_block and plain.recompute == 0


def test_the_blogs_arithmetic():
    assert attention_matrix_bytes(16, 1000) == 64_000_000  # one (b, t, t) matrix: 64 MB, not the blog's 250
    assert attention_matrix_bytes(16, 1000, heads=4) == 256_000_000
    assert mib(2**20) == "1.0 MiB" and mib(3 * 2**30) == "3.00 GiB"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_chapters_profile_model_fits_a_t4(name):
    """Each run whose model the estimate covers: its training step must fit a Colab T4 (15 GB, 80 %
    usable).
    """
    for run, config, batch in training_runs(get_profile(name)):
        estimate = estimate_memory(config, batch, precision="fp16" if name == "gpu" else "fp32")  # a T4: fp16
        assert fits(estimate, T4_BYTES), f"{name}, {run}: {config} needs {mib(estimate.total)}"


def test_bad_input_says_what_to_do():
    with pytest.raises(ValueError, match="GeneratorConfig or a ClassifierConfig"):
        estimate_memory(object(), 2)
    with pytest.raises(ValueError, match="precision"):
        estimate_memory(GeneratorConfig(), 2, precision="int8")
    with pytest.raises(ValueError, match="attention"):
        estimate_memory(GeneratorConfig(), 2, attention="flash")
