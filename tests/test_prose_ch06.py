"""Chapter 06's computed sentences read at every size: the gpu profile's sizes, both sides of each verdict."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch06_imdb_classifier import prose
from fromscratch.training.history import History

GPU = get_profile("gpu").ch06
VALID, TEST = GPU.valid_reviews, 25_000


def _history(accuracy, losses):
    """A training run: one loss per step, and validation accuracies evaluated every 100 steps."""
    rows = [{"step": i + 1, "loss": loss, "lr": 1e-3} for i, loss in enumerate(losses)]
    rows += [{"step": 100 * (i + 1), "validation accuracy": a} for i, a in enumerate(accuracy)]
    return History(rows)


def _results(**accuracy):
    """Predictions by model name, reduced to what the prose reads: their accuracy."""
    names = {"bag": "bag of embeddings", "mean": "transformer, mean pooling"}
    names["cls"] = "transformer, CLS token"
    return {names[key]: SimpleNamespace(accuracy=a) for key, a in accuracy.items()}


@pytest.mark.parametrize(
    "accuracy, losses, ends",
    [
        ([0.70, 0.86, 0.88, 0.85], [0.7] * 50 + [0.3] * 50, "ended 3.0 points lower"),  # fell
        ([0.70, 0.86, 0.87, 0.872], [0.7] * 50 + [0.3] * 50, "kept falling"),  # flat, loss falling
        ([0.70, 0.86, 0.87, 0.872], [0.3] * 100, "Both flattened"),  # flat, loss flat
        ([0.60, 0.70, 0.75, 0.85], [0.7] * 50 + [0.3] * 50, "still rising"),  # rising
        ([0.5], [0.69], "Both flattened"),  # one evaluation (a smoke-sized run)
    ],
)
def test_learning_curve_every_branch(accuracy, losses, ends):
    text = prose.learning_curve(_history(accuracy, losses), VALID)
    assert ends in text and f"{VALID:,} validation reviews" in text
    assert_reads(text)


@pytest.mark.parametrize(
    "bag, transformer, says",
    [
        (0.85, 0.90, "is ahead of the bag"),
        (0.90, 0.85, "is behind the bag"),
        (0.880, 0.879, "within noise"),
    ],
)
@pytest.mark.parametrize("smoke", [False, True])
def test_test_accuracy_every_branch(bag, transformer, says, smoke):
    profile = get_profile("smoke" if smoke else "gpu")
    text = prose.test_accuracy(_results(bag=bag, mean=transformer), 0.5, TEST, 24_000, profile)
    assert says in text and ("`smoke`" in text) == smoke
    assert (
        "another seed could narrow or widen the gap" in text
    )  # the seed's noise is said, not only the test set's
    assert_reads(text, never_together=[("is ahead", "within noise"), ("is behind", "of the way")])


def test_test_accuracy_transformer_at_the_majority_class_does_not_divide_by_zero():
    results = _results(bag=0.5, mean=0.5)
    assert_reads(prose.test_accuracy(results, 0.5, 256, 448, get_profile("smoke")))


def test_contributions_mixed_and_one_sided():
    words = ["a", "great", "film", "awful"]
    mixed = prose.contributions(words, [0.1, 0.9, 0.2, -0.8], 0.05)
    assert "`great` (+0.90)" in mixed and "Every term" not in mixed
    one_sided = prose.contributions(words, [0.1, 0.9, 0.2, 0.3], -0.05)
    assert "Every term points towards *positive*" in one_sided
    assert "*negative*: " not in prose.contributions(words, [-0.1, -0.9, -0.2, -0.3], 0.0)[-60:]
    for text in (mixed, one_sided):
        assert_reads(text)


@pytest.mark.parametrize("cut", [0, 1, 3])
def test_truncation(cut):
    context = GPU.model.context
    lengths = torch.tensor([context + 1] * cut + [context] * (3 - cut))  # 3 reviews, `cut` too long
    text = prose.truncation(lengths, context)
    assert f"`context` = {context}" in text and ("None of these 3" in text) == (cut == 0)
    assert f"{cut} {'was' if cut == 1 else 'were'} longer" in text or cut == 0
    assert_reads(text)


@pytest.mark.parametrize(
    "cls, mean, says", [(0.88, 0.85, "ahead"), (0.85, 0.88, "behind"), (0.87, 0.871, "noise")]
)
def test_pooling(cls, mean, says):
    text = prose.pooling(_results(bag=0.8, cls=cls, mean=mean), TEST)
    assert says in text and "one run each" in text
    assert_reads(text)
