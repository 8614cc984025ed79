"""The KV cache: keys and values of earlier positions, kept for the next generation step (chapter 11).

Generating one token at a time, a causal model would recompute the keys and values of the whole
prefix at every step; they never change, so each attention layer stores them once and appends the
new position's. :class:`KVCache` is that store, one per layer, owned by the caller
(``model.new_cache()``) and passed to the attention of the models that decode step by step
(chapter 11's generator, GPT-2, the Llama) as ``cache=``. A cross-attention layer (chapter 09)
takes one too: its keys and values come from the encoder's output, the same at every step, so
they are computed on the first step and reused.
"""

from __future__ import annotations

import torch
from torch import Tensor


class KVCache:
    """The keys and values one causal attention layer has computed so far (chapter 11's KV cache).

    Pass one empty ``KVCache()`` per layer as ``cache=``: each call appends the new positions' keys
    and values ``(b, h, t, d)`` and attends over all stored (``len(cache)`` positions). An explicit
    object owned by the caller, never state kept on the module.
    """

    def __init__(self) -> None:
        self.keys: Tensor | None = None  # (b, h, t_past, d)
        self.values: Tensor | None = None  # (b, h, t_past, d)

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.size(2)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store ``k``, ``v`` ``(b, h, t, d)`` after the cached ones; return all ``(b, h, t_past + t, d)``."""
        if self.keys is not None and (k.shape[:2] != self.keys.shape[:2] or k.size(-1) != self.keys.size(-1)):
            raise ValueError(
                f"This cache holds keys of shape (b, h, t, d) = {tuple(self.keys.shape)}, the new ones are "
                f"{tuple(k.shape)}; use one fresh KVCache per layer and per batch of sequences."
            )
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=2)  # (b, h, t_past + t, d)
        self.values = (
            v if self.values is None else torch.cat([self.values, v], dim=2)
        )  # (b, h, t_past + t, d)
        return self.keys, self.values

    def select(self, rows: Tensor) -> None:
        """Keep the sequences ``rows`` ``(b',)`` (in that order, repeats allowed): beam search calls
        this when it reorders its hypotheses, so each row's cache follows its hypothesis."""
        if self.keys is not None and self.values is not None:
            self.keys, self.values = self.keys.index_select(0, rows), self.values.index_select(0, rows)
