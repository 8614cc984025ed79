"""Models of sets (chapter 13): pooled they are permutation invariant, unpooled equivariant."""

from __future__ import annotations

import pytest
import torch

from fromscratch.chapters.ch13_beyond_text.pipeline import accuracy_on, labelled_loss, predict
from fromscratch.models import DeepSets, SetConfig, SetTransformer

SMALL = SetConfig(input_dim=12, hidden=16, emb=8, heads=2, depth=2, num_classes=5)


@pytest.mark.parametrize("build", [SetTransformer, DeepSets], ids=["transformer", "deepsets"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pooled_set_models_are_permutation_invariant(build, seed):
    torch.manual_seed(seed)
    model = build(SMALL).eval()
    sets = torch.randn(4, 7, 12)
    out = model(sets)
    for _ in range(3):
        shuffled = sets[:, torch.randperm(7)]
        torch.testing.assert_close(model(shuffled), out, atol=1e-6, rtol=1e-6)
    assert out.shape == (4, 5)


def test_unpooled_set_transformer_is_permutation_equivariant():
    torch.manual_seed(0)
    model = SetTransformer(SMALL, pooling=None).eval()
    sets, order = torch.randn(2, 6, 12), torch.randperm(6)
    torch.testing.assert_close(model(sets[:, order]), model(sets)[:, order], atol=1e-6, rtol=1e-6)


def test_deepsets_is_the_set_transformer_without_blocks():
    deepsets, transformer = DeepSets(SMALL), SetTransformer(SMALL)
    assert deepsets.config.depth == 0 and len(deepsets.blocks) == 0 and len(transformer.blocks) == 2
    assert deepsets.phi[0].weight.shape == transformer.phi[0].weight.shape


def test_in_deepsets_the_elements_never_meet():
    """DeepSets' code of one element does not depend on the others; with blocks, it does."""
    torch.manual_seed(0)
    sets = torch.randn(1, 5, 12)
    changed = sets.clone()
    changed[0, 4] += 1
    for build, meet in ((DeepSets, False), (SetTransformer, True)):
        model = build(SMALL, pooling=None).eval()
        first = model(sets)[0, 0], model(changed)[0, 0]  # the answer for element 0
        assert torch.allclose(*first) is not meet


def test_padding_keeps_sets_of_different_sizes_apart():
    torch.manual_seed(0)
    model = SetTransformer(SMALL).eval()
    sets = torch.randn(1, 5, 12)
    padded = torch.cat([sets, torch.randn(1, 3, 12)], dim=1)  # three elements of padding
    keep = torch.tensor([[True] * 5 + [False] * 3])
    torch.testing.assert_close(model(padded, padding_mask=keep), model(sets), atol=1e-5, rtol=1e-5)


def test_wrong_input_says_what_to_do():
    with pytest.raises(ValueError, match=r"x\[None\]"):
        SetTransformer(SMALL)(torch.randn(7, 12))
    with pytest.raises(ValueError, match="pooling"):
        SetConfig(pooling="max")


def test_labelled_loss_and_accuracy_on_sets_and_elements():
    torch.manual_seed(0)
    model = SetTransformer(SMALL)
    sets, labels = torch.randn(6, 4, 12), torch.randint(0, 5, (6,))
    assert labelled_loss(model, (sets, labels)).shape == ()
    per_element = SetTransformer(SMALL, pooling=None)
    element_labels = torch.full((6, 4), -100)
    element_labels[:, 0] = 1  # only the first element of each set is labelled
    loss = labelled_loss(per_element, (sets, element_labels))
    expected = torch.nn.functional.cross_entropy(per_element(sets)[:, 0], element_labels[:, 0])
    torch.testing.assert_close(loss, expected)
    assert predict(model, sets, batch_size=4).shape == (6, 5)
    assert 0.0 <= accuracy_on(model, sets, labels=labels, batch_size=4) <= 1.0
