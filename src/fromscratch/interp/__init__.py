"""Interpretability on the course's own models (chapter 18): read and rewrite what modules compute
(:mod:`~fromscratch.interp.hooks`), score heads from their attention weights
(:mod:`~fromscratch.interp.heads`), one head at a time (:mod:`~fromscratch.interp.per_head`), the
logit lens (:mod:`~fromscratch.interp.lens`), linear probes (:mod:`~fromscratch.interp.probes`), the
toy model of superposition (:mod:`~fromscratch.interp.superposition`) and sparse autoencoders
(:mod:`~fromscratch.interp.sae`).

A floor above ``models``: it may import ``models``, ``blocks``, ``attention`` and ``utils``; only
``chapters`` imports it.
"""

from fromscratch.interp.heads import induction_score, previous_token_score, repeated_tokens
from fromscratch.interp.hooks import module_named, patch, record
from fromscratch.interp.lens import block_names, unembed
from fromscratch.interp.per_head import ablate_heads, patch_heads, record_heads
from fromscratch.interp.probes import LinearProbe, fit_probe
from fromscratch.interp.sae import (
    SparseAutoencoder,
    planted_activations,
    recovered_share,
    sae_loss,
    train_sae,
)
from fromscratch.interp.superposition import ToyModel, represented, sparse_features, toy_loss, train_toy

__all__ = [
    "LinearProbe",
    "SparseAutoencoder",
    "ToyModel",
    "ablate_heads",
    "block_names",
    "fit_probe",
    "induction_score",
    "module_named",
    "patch",
    "patch_heads",
    "planted_activations",
    "previous_token_score",
    "record",
    "record_heads",
    "recovered_share",
    "repeated_tokens",
    "represented",
    "sae_loss",
    "sparse_features",
    "toy_loss",
    "train_sae",
    "train_toy",
    "unembed",
]
