"""A sparse autoencoder pulls features out of superposition (Bricken et al. 2023; chapter 18).

Activations ``x (b, d)`` that mix more sparse features than they have dimensions are encoded into
``latents > d`` non-negative codes, few of them on, and decoded back as a sum of dictionary
directions: ``z = ReLU(W_enc (x - b_dec) + b_enc)``, ``x̂ = W_dec z + b_dec``. Sparsity comes from an
L1 penalty on ``z`` (Bricken et al.) or from keeping only the ``k`` largest codes (top-k, Gao et al.
2024). The decoder's columns are unit vectors (normalised in the forward pass, so any trainer keeps
them so): a code's size is the feature's strength, and L1 cannot shrink codes by growing the
decoder. :func:`recovered_share` says how many planted features the dictionary found.

Directions are columns throughout: ``W_dec (d, latents)``, a toy model's ``W (m, n)``, the planted
``directions (d, n)``. Shape legend: ``b`` batch, ``d`` activation width, ``n`` planted features.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["SparseAutoencoder", "planted_activations", "recovered_share", "sae_loss", "train_sae"]


class SparseAutoencoder(nn.Module):
    """``SparseAutoencoder(dims, latents, k=None)``: L1-sparse codes, or top-``k`` codes when ``k`` is given.

    ``forward(x (b, d))`` -> ``(x̂ (b, d), z (b, latents))``; :attr:`decoder` ``(d, latents)``, unit columns.
    """

    def __init__(self, dims: int, latents: int, *, k: int | None = None) -> None:
        super().__init__()
        if k is not None and not 0 < k <= latents:
            raise ValueError(f"k (codes kept per input) must be in 1..latents={latents}; got {k}.")
        self.k = k
        self.raw_decoder = nn.Parameter(F.normalize(torch.randn(dims, latents), dim=0))  # (d, latents)
        self.encoder = nn.Linear(dims, latents)
        with torch.no_grad():
            self.encoder.weight.copy_(self.raw_decoder.T)  # start as the decoder's transpose
            self.encoder.bias.zero_()
        self.bias = nn.Parameter(torch.zeros(dims))  # b_dec: subtracted before encoding, added after

    @property
    def decoder(self) -> Tensor:
        """The dictionary: ``(d, latents)``, each column a unit direction."""
        return F.normalize(self.raw_decoder, dim=0)  # (d, latents)

    def encode(self, x: Tensor) -> Tensor:
        """``x (b, d)`` -> codes ``z (b, latents)``, non-negative (top-k: at most ``k`` non-zero per row)."""
        z = F.relu(self.encoder(x - self.bias))  # (b, latents)
        if self.k is not None:
            top = z.topk(self.k, dim=-1)  # (b, k) values and indices
            z = torch.zeros_like(z).scatter(-1, top.indices, top.values)  # (b, latents)
        return z

    def decode(self, z: Tensor) -> Tensor:
        """codes ``z (b, latents)`` -> ``x̂ (b, d)``."""
        return z @ self.decoder.T + self.bias  # (b, d)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        z = self.encode(x)  # (b, latents)
        return self.decode(z), z


def sae_loss(sae: SparseAutoencoder, x: Tensor, l1: float = 0.0) -> Tensor:
    """Squared reconstruction error summed over ``d`` plus ``l1 · Σ|z|``, both averaged over the batch:
    ``x (b, d)`` -> a scalar (a top-k autoencoder takes ``l1=0``)."""
    reconstruction, z = sae(x)  # (b, d), (b, latents)
    return (reconstruction - x).pow(2).sum(dim=1).mean() + l1 * z.abs().sum(dim=1).mean()


def train_sae(
    sae: SparseAutoencoder,
    activations: Tensor,
    *,
    l1: float = 0.0,
    steps: int = 1000,
    batch: int = 256,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Train ``sae`` in place with Adam on random batches of ``activations (N, d)``; returns the loss
    of every step. ``b_dec`` starts at the activations' mean. Top-k needs a few hundred steps, L1 a few
    thousand (d = 32, 64 planted features: seconds on a CPU)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        sae.bias.copy_(activations.mean(dim=0))
    optimizer = torch.optim.Adam(sae.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        rows = torch.randint(0, activations.size(0), (batch,), generator=generator)  # (batch,)
        loss = sae_loss(sae, activations[rows], l1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def planted_activations(
    samples: int, features: int, dims: int, active: float, *, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Synthetic activations with known features: ``features`` random unit directions in ``dims``
    dimensions, each on in a sample with probability ``active / features`` (so about ``active`` at
    once) with a strength uniform in [0, 1]. Returns ``(activations (samples, d), directions (d, n))``."""
    directions = F.normalize(torch.randn(dims, features, generator=generator), dim=0)  # (d, n)
    on = torch.rand(samples, features, generator=generator) < active / features  # (N, n)
    strength = torch.rand(samples, features, generator=generator) * on  # (N, n)
    return strength @ directions.T, directions  # (N, d), (d, n)


def recovered_share(decoder: Tensor, features: Tensor, threshold: float = 0.9) -> float:
    """The share of planted features that some dictionary direction matches at cosine >= ``threshold``.

    ``decoder (d, latents)`` and ``features (d, n)``: directions as columns (``sae.decoder``, the
    planted ``directions`` or a toy model's ``W``). Each feature takes its best-matching direction.
    """
    if decoder.dim() != 2 or features.dim() != 2 or decoder.size(0) != features.size(0):
        raise ValueError(
            f"decoder (d, latents) and features (d, n) must be matrices of the same d, directions as "
            f"columns; got {tuple(decoder.shape)} and {tuple(features.shape)} (transpose a (n, d) one)."
        )
    cosines = F.normalize(features.detach(), dim=0).T @ F.normalize(decoder.detach(), dim=0)  # (n, latents)
    return (cosines.max(dim=1).values >= threshold).float().mean().item()
