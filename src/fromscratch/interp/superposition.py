"""The toy model of superposition (Elhage et al. 2022): more features than dimensions (chapter 18).

``n`` features, each present with probability ``1 - sparsity`` (then uniform in [0, 1]), are squeezed
into ``m < n`` dimensions by ``W (m, n)`` and read back by ``ReLU(Wᵀ W x + b)``; the loss weighs
feature ``i``'s squared error by its importance ``I_i = decay^i``. Dense features: the model keeps the
``m`` most important, one per dimension, and drops the rest. Sparse features: it stores more than
``m`` of them, nearly orthogonal, and lets the ReLU filter the interference; a feature is
*represented* when its column of ``W`` has norm near 1. ``W``'s columns are what a sparse
autoencoder (:mod:`fromscratch.interp.sae`) should find again.

Shape legend: ``b`` batch, ``n`` features, ``m`` dimensions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["ToyModel", "represented", "sparse_features", "toy_loss", "train_toy"]


class ToyModel(nn.Module):
    """``x (b, n)`` -> ``ReLU(Wᵀ W x + b)`` ``(b, n)``, through ``m`` hidden dimensions: ``W (m, n)``."""

    def __init__(self, features: int, dims: int) -> None:
        super().__init__()
        if not 0 < dims <= features:
            raise ValueError(
                f"need 0 < dims <= features (m dimensions hold n features); got {dims}, {features}."
            )
        self.W = nn.Parameter(
            nn.init.xavier_normal_(torch.empty(dims, features))
        )  # (m, n): column i = feature i
        self.b = nn.Parameter(torch.zeros(features))  # (n,)

    def hidden(self, x: Tensor) -> Tensor:
        """The ``m``-dimensional code: ``x (b, n)`` -> ``W x`` ``(b, m)``."""
        return x @ self.W.T  # (b, m)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.hidden(x) @ self.W + self.b)  # (b, n)


def sparse_features(
    batch: int, features: int, sparsity: float, *, generator: torch.Generator | None = None
) -> Tensor:
    """``(batch, features)``: each entry 0 with probability ``sparsity``, else uniform in [0, 1]."""
    if not 0 <= sparsity < 1:
        raise ValueError(f"sparsity is the probability a feature is off, in [0, 1); got {sparsity}.")
    values = torch.rand(batch, features, generator=generator)  # (b, n)
    present = torch.rand(batch, features, generator=generator) >= sparsity  # (b, n)
    return values * present


def toy_loss(model: ToyModel, x: Tensor, importance: Tensor) -> Tensor:
    """The importance-weighted squared error ``Σ_i I_i (x_i - x̂_i)²``, averaged over the batch:
    ``x (b, n)``, ``importance (n,)`` -> a scalar."""
    return ((model(x) - x).pow(2) * importance).sum(dim=1).mean()


def train_toy(
    model: ToyModel,
    sparsity: float,
    *,
    decay: float = 0.7,
    steps: int = 500,
    batch: int = 1024,
    lr: float = 1e-2,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` in place with Adam on fresh :func:`sparse_features` each step, feature ``i``
    weighted by ``decay^i``; returns the loss of every step. 500 steps of n = 20: about a second."""
    generator = torch.Generator().manual_seed(seed)
    n = model.W.size(1)
    importance = decay ** torch.arange(n, dtype=torch.float32)  # (n,)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = toy_loss(model, sparse_features(batch, n, sparsity, generator=generator), importance)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def represented(W: Tensor, threshold: float = 0.5) -> int:
    """How many features a toy model stores: the columns of ``W (m, n)`` with norm above ``threshold``
    (a stored feature's is near 1, a dropped one's near 0)."""
    return int((W.detach().norm(dim=0) > threshold).sum())
