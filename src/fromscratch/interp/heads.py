"""What an attention head does, scored from its weights: previous-token and induction heads (chapter 18).

On a sequence whose second half repeats its first with period ``T`` (``repeated_tokens``), a
**previous-token head** puts its weight on position ``i - 1``; an **induction head** (Elhage et al.
2021; Olsson et al. 2022) at position ``i`` of the repeat looks back to the token that followed the
previous occurrence of token ``i``, at ``i - T + 1``, and copies it: in-context learning at its
simplest. A score is that weight averaged over the queries where it is defined and over the batch:
1 for a head that does exactly this, ``mean 1/(i + 1)`` for a causal head that spreads its weight
evenly, near 0 on a long sequence.

Weights come from a model's caller-owned list: ``weights = []; model(tokens, attention=weights)``
gives one ``(b, h, t, t)`` tensor per layer. Shape legend: ``b`` batch, ``h`` heads, ``t`` length.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["induction_score", "previous_token_score", "repeated_tokens"]


def _check(weights: Tensor) -> None:
    if weights.dim() != 4 or weights.size(-1) != weights.size(-2):
        raise ValueError(
            f"weights must be one layer's self-attention weights (b, h, t, t); got {tuple(weights.shape)}. "
            "Pass one entry of the attention=[] list, e.g. weights[layer]."
        )


def _diagonal_mean(weights: Tensor, back: int, first: int) -> Tensor:
    """Mean of ``weights[:, :, i, i - back]`` over the batch and the queries ``i = first .. t - 1``: (h,)."""
    diagonal = torch.diagonal(weights, offset=-back, dim1=-2, dim2=-1)  # (b, h, t - back): queries back..
    return diagonal[..., first - back :].float().mean(dim=(0, 2))  # (h,)


def previous_token_score(weights: Tensor) -> Tensor:
    """Per head, the mean weight from query ``i`` to key ``i - 1`` over ``i = 1 .. t - 1`` and the batch.

    weights ``(b, h, t, t)`` -> ``(h,)``, in [0, 1].
    """
    _check(weights)
    if weights.size(-1) < 2:
        raise ValueError("previous_token_score needs t >= 2 positions.")
    return _diagonal_mean(weights, back=1, first=1)


def induction_score(weights: Tensor, period: int) -> Tensor:
    """Per head, the mean weight from query ``i`` to key ``i - period + 1`` (the token after the previous
    occurrence) over the repeated positions ``i = period .. t - 1`` and the batch.

    weights ``(b, h, t, t)`` of a sequence that repeats itself every ``period`` tokens -> ``(h,)``.
    ``period=1`` would score a head attending to itself; it needs ``2 <= period < t``.
    """
    _check(weights)
    t = weights.size(-1)
    if not 2 <= period < t:
        raise ValueError(
            f"period must satisfy 2 <= period < t = {t} (the sequence repeats after `period` tokens); "
            f"got {period}."
        )
    return _diagonal_mean(weights, back=period - 1, first=period)


def repeated_tokens(
    batch: int, period: int, vocab_size: int, *, low: int = 0, generator: torch.Generator | None = None
) -> Tensor:
    """Random tokens in ``[low, vocab_size)``, then the same tokens again: int ``(batch, 2 · period)``.

    ``low`` keeps special ids out (a BOS or padding id below it). Tokens within a row are drawn
    without replacement when the vocabulary allows, so each token's previous occurrence is unique.
    """
    choices = vocab_size - low
    if choices < 2 or period < 2:
        raise ValueError(
            f"need period >= 2 and at least 2 tokens in [low, vocab_size); got {period}, {choices}."
        )
    if choices >= period:
        scores = torch.rand(batch, choices, generator=generator)  # (batch, choices)
        first = scores.argsort(dim=1)[:, :period] + low  # (batch, period): distinct within a row
    else:
        first = torch.randint(low, vocab_size, (batch, period), generator=generator)  # (batch, period)
    return torch.cat([first, first], dim=1)  # (batch, 2 · period)
