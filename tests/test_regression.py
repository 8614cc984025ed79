"""Regression pins: a Classifier and a Generator built at a fixed seed give these exact logits.

The numbers were printed by the code as it stood before the configs/mask-API refactor.
A refactor that changes parameter creation order, initialisation or the forward numerics fails here.
"""

from __future__ import annotations

import torch

from fromscratch.models import Classifier, Generator, GeneratorConfig

PIN = dict(atol=1e-5, rtol=0)
TOKENS = torch.tensor([[5, 17, 42, 8, 3, 0, 0], [9, 9, 31, 2, 44, 12, 7]])  # row 0 padded with id 0
BYTES = torch.tensor([[72, 101, 108, 108, 111, 32, 119, 111]])  # b"Hello wo"


def classifier(**options) -> Classifier:
    torch.manual_seed(0)
    return Classifier(vocab_size=50, num_classes=3, emb=16, heads=4, depth=2, context=12, **options).eval()


def generator(**options) -> Generator:
    torch.manual_seed(0)
    return Generator(GeneratorConfig(emb=16, heads=2, depth=2, context=10), **options).eval()


def test_classifier_mean_pooling_post_norm_learned_positions():
    expected = torch.tensor([[0.271153, -0.402537, -0.071715], [0.380990, -0.561249, 0.277184]])
    torch.testing.assert_close(classifier()(TOKENS), expected, **PIN)


def test_classifier_cls_pooling_pre_norm_sinusoids():
    expected = torch.tensor([[-0.420847, 0.331011, 1.185363], [-0.207467, -0.354892, 1.083136]])
    model = classifier(pooling="cls", norm="pre", positions="sinusoidal")
    torch.testing.assert_close(model(TOKENS), expected, **PIN)


def test_generator_causal_post_norm():
    logits = generator()(BYTES)  # (1, 8, 256)
    expected = torch.tensor(
        [
            [0.612274, 0.692833, 0.354081, 0.187750],
            [-0.294392, 1.424711, 0.280361, 0.461947],
            [-0.201182, 0.483342, 0.915018, 0.211450],
            [0.171586, 0.765557, 0.666077, 0.085072],
            [-0.172146, -0.299404, 0.516891, -0.718996],
            [0.699824, -0.141721, 0.086543, -0.329708],
            [-0.472996, 0.171982, -0.018990, -0.239546],
            [-0.145034, 0.439731, 0.277774, -0.507831],
        ]
    )
    torch.testing.assert_close(logits[0, :, :4], expected, **PIN)
    top = logits[0, -1].topk(3)
    assert top.indices.tolist() == [96, 171, 120]
    torch.testing.assert_close(top.values, torch.tensor([1.469168, 1.295683, 1.198834]), **PIN)


def test_generator_without_mask_pre_norm():
    expected = torch.tensor(
        [
            [0.716902, 0.585936, 0.254586],
            [-0.037726, 1.505699, -0.075893],
            [-0.154880, 0.542033, 0.576823],
            [0.113352, 1.019361, 0.408976],
            [-0.262948, -0.130271, 0.604676],
            [0.734829, -0.139800, -0.093879],
            [-0.505848, 0.159078, -0.026011],
            [-0.131879, 0.469229, 0.293852],
        ]
    )
    logits = generator(norm="pre", causal=False)(BYTES)
    torch.testing.assert_close(logits[0, :, :3], expected, **PIN)
