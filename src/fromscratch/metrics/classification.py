"""How good a classifier is: accuracy, and every prediction kept for a closer look (chapter 06).

``predict_labels(model, batches)`` runs a classifier over a whole data set and returns
:class:`Predictions` (probabilities and true labels, in the data set's order), whose ``accuracy``
and ``most_confidently_wrong`` the chapter uses to read its errors.

Shapes: ``n`` examples, ``c`` classes, ``b`` batch, ``t`` length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from fromscratch.utils import evaluating


def accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The fraction of correct predictions (chapter 06).

    scores: logits or probabilities ``(n, c)`` (the prediction is the largest), or predicted
    classes ``(n,)``; labels: ``(n,)``. Returns a float in [0, 1].
    """
    predicted = scores.argmax(dim=-1) if scores.dim() == labels.dim() + 1 else scores
    if predicted.shape != labels.shape:
        raise ValueError(
            f"scores {tuple(scores.shape)} do not match labels {tuple(labels.shape)}; pass logits "
            f"(n, c) or predicted classes (n,) for labels (n,)."
        )
    if labels.numel() == 0:
        raise ValueError("accuracy of zero examples is undefined; pass at least one.")
    return (predicted == labels).float().mean().item()


@dataclass
class Predictions:
    """What a classifier said about every example of a data set, in the data set's order."""

    probs: torch.Tensor  # (n, c): softmax probabilities
    labels: torch.Tensor  # (n,): the true classes

    @property
    def predicted(self) -> torch.Tensor:
        """The most probable class of every example ``(n,)``."""
        return self.probs.argmax(dim=-1)  # (n,)

    @property
    def accuracy(self) -> float:
        return accuracy(self.probs, self.labels)

    def most_confidently_wrong(self, k: int = 5) -> torch.Tensor:
        """Indices of the ``k`` wrong predictions with the highest probability on the wrong class."""
        wrong = (self.predicted != self.labels).nonzero().flatten()  # (w,)
        confidence = self.probs[wrong].max(dim=-1).values  # (w,)
        return wrong[confidence.argsort(descending=True)[:k]]


@torch.no_grad()
def predict_labels(
    model: torch.nn.Module,
    batches: Iterable[dict[str, torch.Tensor]],
    *,
    device: torch.device | str | None = None,
) -> Predictions:
    """Run a classifier over every batch and collect probabilities in the data set's order (chapter 06).

    batches: dicts with ``tokens (b, t)``, ``padding_mask (b, t)``, ``labels (b,)`` and ``index (b,)``
    (the example's position in its data set), as ``fromscratch.data.imdb.ReviewBatches`` makes them.
    ``model(tokens, padding_mask=...)`` returns logits ``(b, c)``. The model runs in eval mode and
    is given back in the mode it was in.
    """
    device = device if device is not None else next(model.parameters()).device
    chunks = []
    with evaluating(model):
        for batch in batches:
            tokens, padding_mask = batch["tokens"].to(device), batch["padding_mask"].to(device)  # (b, t) each
            logits = model(tokens, padding_mask=padding_mask)  # (b, c)
            chunks.append((batch["index"], logits.float().softmax(dim=-1).cpu(), batch["labels"]))
    if not chunks:
        raise ValueError("predict_labels got no batches; pass a non-empty data set.")
    index, probs, labels = (torch.cat(column) for column in zip(*chunks, strict=True))
    order = index.argsort()  # back to the data set's order
    return Predictions(probs=probs[order], labels=labels[order])


__all__ = ["Predictions", "accuracy", "predict_labels"]
