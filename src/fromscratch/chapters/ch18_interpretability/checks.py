"""Checkers for chapter 18's exercises (an induction score from attention weights, a zero-ablation with
``patch``, a sparse autoencoder's loss).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what differs)
or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``. An answer
that only calls the package's own function is turned down: the exercise is to write it.

>>> import torch
>>> def my_induction_score(weights, period):
...     t = weights.size(-1)
...     return torch.stack([weights[:, :, i, i - period + 1] for i in range(period, t)], -1).mean((0, 2))
>>> check_induction_score(my_induction_score)
✓ my_induction_score matches the reference on 4 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from fromscratch.chapters import checking
from fromscratch.chapters.ch18_interpretability.toy import AttentionOnly, AttentionOnlyConfig
from fromscratch.interp import SparseAutoencoder, induction_score, patch, sae_loss

__all__ = ["check_induction_score", "check_sae_loss", "check_zero_ablation", "zero_ablated"]


def _weights(b: int, h: int, t: int, seed: int) -> Tensor:
    """Random causal attention weights ``(b, h, t, t)``: each row sums to 1 over the keys it may see."""
    scores = torch.randn(b, h, t, t, generator=torch.Generator().manual_seed(seed))
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)


def check_induction_score(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 18.1. Expects ``(weights (b, h, t, t), period) -> (h,)``: per head, the mean weight from
    query ``i`` to key ``i - period + 1`` over ``i = period .. t - 1`` and the batch."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"induction_score"}):
        return False
    inputs = [(_weights(2, 3, 16, 0), 8), (_weights(1, 4, 20, 1), 10), (_weights(3, 2, 13, 2), 6)]
    inputs.append((_weights(1, 2, 8, 3), 2))  # the shortest period: one key back
    return checking.check_function(candidate, induction_score, inputs=inputs, atol=1e-6)


def zero_ablated(model: nn.Module, tokens: Tensor, name: str) -> Tensor:
    """The reference: the logits of ``model`` on ``tokens`` with the module ``name``'s output zeroed."""
    with torch.no_grad(), patch(model, {name: torch.zeros_like}):
        return model(tokens)


def check_zero_ablation(candidate: Callable[[nn.Module, Tensor, str], Tensor]) -> bool | None:
    """Exercise 18.2. Expects ``(model, tokens, name) -> logits``: the model's logits with the output of
    its module ``name`` replaced by zeros, through :func:`~fromscratch.interp.patch`, hooks removed after."""
    torch.manual_seed(18)
    model = AttentionOnly(AttentionOnlyConfig(vocab_size=20, context=16, emb=16, heads=2, depth=2)).eval()
    tokens = torch.randint(0, 20, (2, 12), generator=torch.Generator().manual_seed(0))
    inputs = [(model, tokens, "blocks.0.attention"), (model, tokens, "blocks.1.attention")]
    inputs.append((model, tokens, "blocks.1.attention.unify_heads"))
    result = checking.check_function(candidate, zero_ablated, inputs=inputs, atol=1e-6)
    if result and any(m._forward_hooks or m._forward_pre_hooks for m in model.modules()):
        print("✗ a hook was left on the model: open patch with `with`, so it is removed afterwards.")
        return False
    return result


def check_sae_loss(candidate: Callable[[SparseAutoencoder, Tensor, float], Tensor]) -> bool | None:
    """Exercise 18.3. Expects ``(sae, x (b, d), l1) -> scalar``: the squared reconstruction error summed
    over ``d`` plus ``l1`` times the sum of the codes' absolute values, both averaged over the batch."""
    if not checking.is_stub(candidate) and checking.refuses(candidate, {"sae_loss"}):
        return False
    generator = torch.Generator().manual_seed(183)
    torch.manual_seed(183)
    sae, topk = SparseAutoencoder(8, 24), SparseAutoencoder(8, 24, k=3)
    x = torch.randn(32, 8, generator=generator)
    inputs = [(sae, x, 0.0), (sae, x, 0.1), (topk, x[:5], 0.0), (sae, x[:1], 1.0)]
    with torch.no_grad():
        return checking.check_function(candidate, sae_loss, inputs=inputs, atol=1e-5)
