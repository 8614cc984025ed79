"""The toy model of superposition stores more features than dimensions when they are sparse, and a
sparse autoencoder finds planted features again (fromscratch.interp.superposition, .sae). Seeded,
seconds on one CPU thread."""

from __future__ import annotations

import pytest
import torch

from fromscratch.interp import (
    SparseAutoencoder,
    ToyModel,
    planted_activations,
    recovered_share,
    represented,
    sparse_features,
    train_sae,
    train_toy,
)

FEATURES, DIMS = 20, 5  # Elhage et al.'s first toy: 20 features in 5 dimensions, importance 0.7^i


def trained_toy(sparsity: float, seed: int = 0) -> ToyModel:
    torch.manual_seed(seed)
    model = ToyModel(FEATURES, DIMS)
    losses = train_toy(model, sparsity, steps=400, batch=256, seed=seed)
    assert losses[-1] < losses[0]
    return model


def test_sparse_features_are_stored_in_superposition_dense_ones_are_not():
    dense, sparse = trained_toy(0.0), trained_toy(0.99)
    assert abs(represented(dense.W) - DIMS) <= 1  # one feature per dimension, the most important ones
    assert represented(sparse.W) > DIMS  # more features than dimensions


@pytest.mark.parametrize(("k", "l1", "steps", "lr"), [(4, 0.0, 600, 3e-3), (None, 0.3, 2000, 1e-2)])
def test_a_sparse_autoencoder_recovers_planted_features(k, l1, steps, lr):
    generator = torch.Generator().manual_seed(0)
    activations, directions = planted_activations(20_000, 64, 32, active=3, generator=generator)  # (N, 32)
    torch.manual_seed(0)
    sae = SparseAutoencoder(32, 128, k=k)
    train_sae(sae, activations, l1=l1, steps=steps, lr=lr)
    assert recovered_share(sae.decoder, directions, threshold=0.9) >= 0.9
    torch.testing.assert_close(sae.decoder.norm(dim=0), torch.ones(128))
    _, z = sae(activations[:1000])
    assert (z > 0).float().sum(dim=1).mean() < 8  # sparse codes: a few of 128 on


def test_a_sparse_autoencoder_on_the_toy_model_finds_its_features():
    toy = trained_toy(0.99)
    stored = toy.W.detach()[:, toy.W.detach().norm(dim=0) > 0.5]  # (m, features stored)
    x = toy.hidden(sparse_features(20_000, FEATURES, 0.99, generator=torch.Generator().manual_seed(1)))
    torch.manual_seed(0)
    sae = SparseAutoencoder(DIMS, 20, k=1)
    train_sae(sae, x.detach(), steps=1000)
    assert recovered_share(sae.decoder, stored) >= 0.9


def test_recovered_share_matches_by_cosine():
    directions = torch.nn.functional.normalize(torch.randn(16, 10), dim=0)  # (d, n)
    assert recovered_share(directions * 3, directions) == 1.0  # lengths do not matter
    assert recovered_share(directions[:, :5], directions) == 0.5
    assert recovered_share(-directions, directions) == 0.0  # a direction, not a line
    with pytest.raises(ValueError, match="same d"):
        recovered_share(directions.T, directions)
