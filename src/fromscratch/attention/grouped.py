"""Grouped-query attention (GQA): fewer key/value heads than query heads (chapter 14).

Multi-head attention gives every one of its ``h`` heads its own queries, keys and values. During
generation the keys and values of every earlier position sit in the KV cache (chapter 11), and for
large models that cache, not the weights, limits how many sequences fit on a device. Ainslie et
al. (2023) keep ``h`` query heads but only ``hk`` key/value heads: query head ``j`` reads key/value
head ``j // (h / hk)``, so each group of ``h / hk`` consecutive query heads shares one. ``hk = h`` is
ordinary multi-head attention, ``hk = 1`` is multi-query attention (Shazeer 2019), and the cache
shrinks by exactly ``h / hk``.

The Llama's attention (:mod:`fromscratch.models.llama`) takes ``kv_heads=hk``; its cache holds
``(b, hk, t, s)`` keys and values. :func:`expand_kv_heads` is the written-out form of the sharing
(the explicit attention path does it; the fast path hands the ``hk`` heads to
``F.scaled_dot_product_attention`` with ``enable_gqa=True``, PyTorch >= 2.5).

Shape legend: ``b`` batch, ``h`` query heads, ``hk`` key/value heads, ``t`` length, ``d`` head width.
"""

from __future__ import annotations

from collections.abc import Iterable

from torch import Tensor


def expand_kv_heads(x: Tensor, groups: int) -> Tensor:
    """Repeat each key/value head ``groups`` times, next to itself: ``(b, hk, t, d) -> (b, hk·groups, t, d)``.

    Query head ``j`` then finds its shared head at index ``j``: output head ``j`` is input head
    ``j // groups``. ``groups = 1`` returns ``x`` itself.
    """
    if groups == 1:
        return x
    return x.repeat_interleave(groups, dim=1)  # (b, hk·groups, t, d)


def cache_bytes(caches: Iterable) -> int:
    """Bytes held by the keys and values of a model's KV cache (one ``KVCache`` per block)."""
    total = 0
    for cache in caches:
        for tensor in (cache.keys, cache.values):
            if tensor is not None:
                total += tensor.numel() * tensor.element_size()
    return total


__all__ = ["cache_bytes", "expand_kv_heads"]
