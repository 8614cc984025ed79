"""Chapter 13's small pieces around :func:`~fromscratch.training.train`: the loss of a labelled batch,
scoring a model on a whole test set, and the test accuracy recorded while training runs.

- :func:`labelled_loss`: cross-entropy of ``model(*inputs)`` against the labels, for batches
  ``(inputs..., labels)``: images and their classes, sets and their answers, nodes and their sides;
- :func:`predict` / :func:`accuracy_on`: logits of a whole data set in chunks, and its accuracy;
- :func:`accuracy_during_training`: an ``evaluate=`` for ``train`` that scores a fixed test subset,
  so ``history.series("accuracy", x="seconds")`` is accuracy against training time.

Shapes: ``n`` examples, ``b`` batch, ``c`` classes.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.metrics import accuracy
from fromscratch.tokenizers.special import IGNORE
from fromscratch.utils import evaluating

__all__ = ["accuracy_during_training", "labelled_loss", "predict", "accuracy_on"]


def labelled_loss(model: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
    """Cross-entropy, in nats, of ``model(*inputs)`` against ``labels`` for a batch ``(*inputs, labels)``.

    Logits ``(b, c)`` with labels ``(b,)``, or one answer per element, ``(b, n, c)`` with ``(b, n)``;
    labels equal to ``IGNORE`` (-100) do not count (e.g. the unlabelled nodes of a graph).
    """
    *inputs, labels = batch
    logits = model(*inputs)  # (b, c) or (b, n, c)
    return F.cross_entropy(logits.flatten(0, -2).float(), labels.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def predict(model: nn.Module, *inputs: Tensor, batch_size: int = 500) -> Tensor:
    """``model(*inputs)`` over a whole data set, ``batch_size`` examples at a time, in eval mode.

    inputs: tensors whose first dimension is the ``n`` examples, on the model's device or the CPU.
    Returns the logits ``(n, c)`` on the CPU.
    """
    device = next(model.parameters()).device
    chunks = []
    with evaluating(model):
        for start in range(0, len(inputs[0]), batch_size):
            part = [x[start : start + batch_size].to(device) for x in inputs]
            chunks.append(model(*part).float().cpu())  # (b, c)
    return torch.cat(chunks)  # (n, c)


def accuracy_on(model: nn.Module, *inputs: Tensor, labels: Tensor, batch_size: int = 500) -> float:
    """The fraction of the ``n`` examples ``inputs`` whose most likely class is ``labels (n,)``."""
    return accuracy(predict(model, *inputs, batch_size=batch_size), labels)


def accuracy_during_training(
    *inputs: Tensor, labels: Tensor, batch_size: int = 500
) -> Callable[[nn.Module], dict[str, float]]:
    """``train(..., evaluate=accuracy_during_training(images, labels=labels))``: at each evaluation,
    the accuracy on these examples (keep them few: evaluations pause the clock but not the wall)."""

    def evaluate(model: nn.Module) -> dict[str, float]:
        return {"accuracy": accuracy_on(model, *inputs, labels=labels, batch_size=batch_size)}

    return evaluate
