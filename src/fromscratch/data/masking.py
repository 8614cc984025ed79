"""Masked-language-model inputs (chapter 10): Devlin et al.'s (2019) corruption of a batch of ids.

A fraction ``rate`` of the real, non-special tokens is chosen; of those, 80 % become ``[MASK]``, 10 %
a random token and 10 % stay as they are; the model is scored on the chosen positions only (label
:data:`~fromscratch.tokenizers.special.IGNORE` elsewhere). Shape legend: ``b`` batch, ``t`` length.
"""

from __future__ import annotations

import torch
from torch import Tensor

from fromscratch.tokenizers.special import IGNORE


def mask_tokens(
    ids: Tensor,
    *,
    mask_id: int,
    vocab_size: int,
    special_ids: tuple[int, ...] = (),
    padding_mask: Tensor | None = None,
    rate: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """Devlin et al.'s masking: returns ``(inputs, labels)``, both ``(b, t)`` like ``ids``.

    Each real, non-special token is chosen with probability ``rate``; a chosen token is replaced by
    ``mask_id`` (80 %), by a random id drawn from ``0..vocab_size-1`` (10 %), or kept (10 %). ``labels``
    hold the original id at the chosen positions and -100 (:data:`IGNORE`) everywhere else.
    """
    if not 0 < rate < 1:
        raise ValueError(f"rate must lie strictly between 0 and 1 (BERT: 0.15), got {rate}.")
    draw = torch.rand(ids.shape, generator=generator)  # (b, t), on the CPU: reproducible anywhere
    allowed = (
        torch.ones_like(ids, dtype=torch.bool).cpu() if padding_mask is None else padding_mask.cpu().clone()
    )
    for special in special_ids:
        allowed &= ids.cpu() != special
    chosen = (draw < rate) & allowed  # (b, t)
    how = torch.rand(ids.shape, generator=generator)  # (b, t): which of the three corruptions
    random_ids = torch.randint(0, vocab_size, ids.shape, generator=generator)  # (b, t)
    chosen, how, random_ids = chosen.to(ids.device), how.to(ids.device), random_ids.to(ids.device)
    inputs = torch.where(chosen & (how < 0.8), torch.full_like(ids, mask_id), ids)
    inputs = torch.where(chosen & (how >= 0.8) & (how < 0.9), random_ids, inputs)
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    return inputs, labels


__all__ = ["mask_tokens"]
