"""Gradient checkpointing (chapter 12): the same gradients, fewer saved activations."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fromscratch.models import Classifier, Generator, GeneratorConfig
from fromscratch.training.memory import measure_activations

CONFIG = GeneratorConfig(vocab_size=64, emb=32, heads=4, depth=4, context=16, dropout=0.1)


def gradients(model, tokens, *, teaching: bool = False):
    torch.manual_seed(7)  # the same dropout masks in both runs (checkpointing replays them)
    model.zero_grad()
    logits = model(tokens, attention=[] if teaching else None)
    F.cross_entropy(logits.transpose(1, 2), tokens).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("teaching", [False, True])
def test_checkpointing_gives_the_same_gradients(norm, teaching):
    torch.manual_seed(0)
    plain = Generator(CONFIG, norm=norm)
    ckpt = Generator(CONFIG, norm=norm, checkpoint=True)
    ckpt.load_state_dict(plain.state_dict())
    tokens = torch.randint(0, 64, (3, 16))
    expected, got = gradients(plain, tokens, teaching=teaching), gradients(ckpt, tokens, teaching=teaching)
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], atol=1e-6, rtol=1e-5, msg=name)


def test_checkpointing_works_with_the_attention_list_and_gives_the_same_weights():
    torch.manual_seed(0)
    plain, ckpt = Generator(CONFIG, dropout=0.0), Generator(CONFIG, dropout=0.0, checkpoint=True)
    ckpt.load_state_dict(plain.state_dict())
    tokens = torch.randint(0, 64, (2, 16))
    expected, got = [], []
    plain(tokens, attention=expected)
    ckpt(tokens, attention=got).sum().backward()  # the backward pass reruns each block
    assert len(got) == CONFIG.depth  # and the rerun's weights do not land in the caller's list
    for a, b in zip(expected, got, strict=True):
        torch.testing.assert_close(a, b)


def test_checkpointing_saves_less():
    torch.manual_seed(0)
    tokens = torch.randint(0, 64, (4, 16))
    saved = {}
    for checkpoint in (False, True):
        model = Generator(CONFIG, depth=6, checkpoint=checkpoint)
        saved[checkpoint] = measure_activations(
            model, lambda m=model: F.cross_entropy(m(tokens).transpose(1, 2), tokens)
        ).bytes
    assert saved[True] < saved[False] / 3


def test_classifier_takes_the_option_and_eval_mode_does_not_checkpoint():
    model = Classifier(vocab_size=50, emb=16, heads=2, depth=2, context=8, checkpoint=True)
    assert model.stack.checkpoint
    model.eval()
    tokens = torch.randint(1, 50, (2, 8))
    with torch.no_grad():
        assert model(tokens).shape == (2, 2)
