"""Linear probes: is a property written in a residual stream, readable by one direction? (chapter 18)

A **probe** is logistic regression on a model's activations: ``P(y = 1 | x) = σ(w · (x − μ) / s + c)``,
fitted on activations whose labels are known and scored on others. The features are standardised first
(``μ``, ``s``: each dimension's mean and spread on the training activations), so one weight decay suits
every layer, whatever its scale. A probe that reads a property well says the model *wrote* it there in a
linear form; it does not say the model *uses* it: that is what adding the probe's :meth:`direction` to
the stream (**steering**, with :func:`~fromscratch.interp.patch`) tests.

Shape legend: ``n`` examples, ``e`` activation width.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["LinearProbe", "fit_probe"]


class LinearProbe(nn.Module):
    """Logistic regression on standardised activations: ``probe(x (n, e))`` -> logits ``(n,)`` of
    ``y = 1``."""

    def __init__(self, mean: Tensor, scale: Tensor):
        super().__init__()
        self.register_buffer("mean", mean)  # (e,): the training activations' mean ...
        self.register_buffer("scale", scale)  # (e,): ... and standard deviation, per dimension
        self.linear = nn.Linear(mean.numel(), 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear((x - self.mean) / self.scale).squeeze(-1)  # (n,)

    def direction(self) -> Tensor:
        """The unit vector ``(e,)`` in the activations' own space along which the probe's logit grows
        fastest: ``w / s``, normalised (the standardisation undone)."""
        raw = self.linear.weight[0].detach() / self.scale  # (e,)
        return raw / raw.norm()


def fit_probe(x: Tensor, y: Tensor, *, weight_decay: float = 1e-2, steps: int = 200) -> LinearProbe:
    """Fit a :class:`LinearProbe` to activations ``x (n, e)`` and labels ``y (n,)`` (0/1 or bool).

    Minimises the mean binary cross-entropy plus ``weight_decay · |w|²`` (not on the bias), a convex
    problem, by L-BFGS to convergence (at most ``steps`` iterations). With more dimensions than examples
    (576 numbers per token against a few hundred reviews) the data are usually separable and only the
    weight decay keeps ``w`` finite: it must be positive.
    """
    if x.dim() != 2 or y.shape != x.shape[:1]:
        raise ValueError(
            f"fit_probe: x must be (n, e) and y (n,); got {tuple(x.shape)} and {tuple(y.shape)}."
        )
    if weight_decay <= 0:
        raise ValueError(
            f"weight_decay must be > 0 (it keeps w finite on separable data); got {weight_decay}."
        )
    target = y.float()
    if target.min() == target.max():
        raise ValueError("fit_probe: every label is the same; a probe needs examples of both classes.")
    x = x.float()
    mean, scale = x.mean(0), x.std(0).clamp_min(1e-6)  # (e,), (e,): a constant dimension stays 0
    probe = LinearProbe(mean, scale)
    nn.init.zeros_(probe.linear.weight)
    nn.init.zeros_(probe.linear.bias)
    optimizer = torch.optim.LBFGS(
        probe.linear.parameters(), max_iter=steps, line_search_fn="strong_wolfe", tolerance_grad=1e-9
    )

    def loss() -> Tensor:
        optimizer.zero_grad()
        value = F.binary_cross_entropy_with_logits(probe(x), target)
        value = value + weight_decay * probe.linear.weight.pow(2).sum()
        value.backward()
        return value

    with torch.enable_grad():
        optimizer.step(loss)
    return probe.requires_grad_(False)
