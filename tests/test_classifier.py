"""The sequence classifier (chapter 06) and the classification metrics."""

from __future__ import annotations

import pytest
import torch

from fromscratch.data.imdb import pad_batch
from fromscratch.metrics import Predictions, accuracy, predict_labels
from fromscratch.models import Classifier, ClassifierConfig
from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import classification_loss

TOL = dict(atol=1e-5, rtol=1e-4)


SMALL = ClassifierConfig(vocab_size=50, num_classes=3, emb=16, heads=4, depth=2, context=12)


def small(pooling="mean", positions="learned", **kwargs):
    torch.manual_seed(0)
    return Classifier(SMALL, pooling=pooling, positions=positions, **kwargs).eval()


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_shapes_and_attention(pooling):
    model = small(pooling)
    tokens = torch.randint(3, 50, (4, 9))
    weights = []
    logits = model(tokens, attention=weights)
    assert logits.shape == (4, 3) and len(weights) == 2 and weights[1].shape == (4, 4, 9, 9)
    torch.testing.assert_close(model(tokens), logits, **TOL)  # fast path == teaching path


@pytest.mark.parametrize("pooling", ["mean", "cls"])
@pytest.mark.parametrize("positions", ["learned", "sinusoidal", None])
def test_padding_does_not_change_the_logits(pooling, positions):
    model = small(pooling, positions)
    seqs = [torch.randint(3, 50, (n,)) for n in (9, 4, 1)]
    tokens, mask = pad_batch(seqs)  # (3, 9): padded with id 0
    logits = model(tokens, padding_mask=mask)
    for row, seq in enumerate(seqs):
        torch.testing.assert_close(logits[row], model(seq[None])[0], **TOL)
    torch.testing.assert_close(model(tokens), logits, **TOL)  # padding_mask=None: read from the padding id
    garbage = torch.where(mask, tokens, torch.randint(3, 50, tokens.shape))
    torch.testing.assert_close(model(garbage, padding_mask=mask), logits, **TOL)


def test_without_positions_word_order_is_invisible():
    tokens = torch.randint(3, 50, (2, 10))
    shuffled = tokens[:, torch.randperm(10)]
    blind = small(positions=None)
    torch.testing.assert_close(blind(shuffled), blind(tokens), **TOL)
    for positions in ("learned", "sinusoidal"):
        model = small(positions=positions)
        assert not torch.allclose(model(shuffled), model(tokens), atol=1e-4)


def test_cls_pooling_reads_position_zero():
    model = small("cls")
    tokens = torch.randint(3, 50, (2, 6))
    x = model.stack(tokens, padding_mask=tokens != 0)  # (b, t, e)
    torch.testing.assert_close(model(tokens), model.to_logits(x[:, 0]), **TOL)


def test_config_and_keyword_fields():
    assert ClassifierConfig() == ClassifierConfig(
        vocab_size=50_003, num_classes=2, emb=128, heads=8, depth=6, context=512
    )  # the blog's model
    model = Classifier(SMALL, depth=1, pooling="cls")
    assert model.config == ClassifierConfig(
        vocab_size=50, num_classes=3, emb=16, heads=4, depth=1, context=12, pooling="cls"
    )
    assert len(model.stack.blocks) == 1 and model.to_logits.out_features == 3
    same = Classifier(vocab_size=50, num_classes=3, emb=16, heads=4, depth=1, context=12, pooling="cls")
    assert same.config == model.config


def test_errors_say_what_to_do():
    with pytest.raises(ValueError, match="pooling must be"):
        Classifier(SMALL, pooling="max")
    with pytest.raises(TypeError, match="unexpected keyword argument 'embb'"):
        Classifier(SMALL, embb=16)
    with pytest.raises(
        TypeError, match=r"Classifier takes a ClassifierConfig \(e.g. from the run profile\), got int"
    ):
        Classifier(50)
    model = small()
    with pytest.raises(ValueError, match="context=12"):
        model(torch.ones(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match=r"padding_mask must have shape \(b, tk\) = \(2, 5\)"):
        model(torch.ones(2, 5, dtype=torch.long), padding_mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(TypeError):
        model(
            torch.ones(2, 5, dtype=torch.long), torch.ones(2, 5, dtype=torch.bool)
        )  # the mask is keyword-only


def test_learns_a_toy_task_with_the_training_loop():
    """Is token 5 in the sequence? Needs the whole sequence; a 1-block classifier learns it quickly."""
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(6, 20, (512, 10), generator=gen)
    labels = torch.randint(0, 2, (512,), generator=gen)
    where = torch.randint(0, 10, (512,), generator=gen)
    tokens[labels == 1, where[labels == 1]] = 5
    mask = torch.ones_like(tokens, dtype=torch.bool)
    batches = [
        {
            "tokens": tokens[i : i + 64],
            "padding_mask": mask[i : i + 64],
            "labels": labels[i : i + 64],
            "index": torch.arange(i, i + 64),
        }
        for i in range(0, 512, 64)
    ]
    torch.manual_seed(0)
    model = Classifier(vocab_size=20, num_classes=2, emb=16, heads=2, depth=1, context=10)
    train(
        model, batches, classification_loss, TrainConfig(steps=40, lr=1e-2, warmup_steps=10, progress=False)
    )
    assert predict_labels(model, batches).accuracy > 0.95


# --- metrics ---------------------------------------------------------------------------------------
def test_accuracy():
    logits = torch.tensor([[2.0, 1.0], [0.0, 3.0], [1.0, 0.0]])
    assert accuracy(logits, torch.tensor([0, 1, 1])) == pytest.approx(2 / 3)
    assert accuracy(torch.tensor([1, 1, 0]), torch.tensor([1, 0, 0])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="do not match"):
        accuracy(logits, torch.tensor([0, 1]))


def test_predict_restores_the_data_order_and_finds_confident_mistakes():
    model = small()
    seqs = [torch.randint(3, 50, (n,)) for n in (3, 8, 5, 2, 7)]
    labels = torch.tensor([0, 1, 2, 0, 1])
    order = [[3, 0], [4, 2, 1]]  # batches in some shuffled, length-sorted order
    batches = []
    for index in order:
        tokens, mask = pad_batch([seqs[i] for i in index])
        batches.append(
            {"tokens": tokens, "padding_mask": mask, "labels": labels[index], "index": torch.tensor(index)}
        )
    got = predict_labels(model, batches)
    expected = torch.cat([model(s[None]).softmax(-1) for s in seqs])
    torch.testing.assert_close(got.probs, expected, **TOL)
    torch.testing.assert_close(got.labels, labels)

    made_up = Predictions(
        probs=torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]),
        labels=torch.tensor([1, 1, 1, 0]),
    )
    assert made_up.accuracy == pytest.approx(0.25)
    assert made_up.most_confidently_wrong(2).tolist() == [0, 3]
