"""T5's relative position bias (Raffel et al. 2020): a learned number per head for each *bucket* of offsets.

Like ALiBi it adds a ``(h, tq, tk)`` term to every layer's attention scores and leaves the embeddings
alone, but the term is learned: each head has one value per bucket of the offset ``i - j``. Offsets
smaller than ``buckets / 4`` get a bucket each; larger ones share buckets whose width grows
logarithmically up to ``max_distance``, and everything farther shares the last bucket, so a model trained
on short inputs meets no new bucket on long ones. Half the buckets count keys before the query, half
keys after it (a causal mask hides those anyway). The table starts at zero: at first no head prefers
any distance.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from fromscratch.attention.positions import relative_offsets


def relative_buckets(offsets: Tensor, buckets: int = 32, max_distance: int = 128) -> Tensor:
    """The bucket of each offset ``i - j`` (int ``(tq, tk)``): ``0 .. buckets - 1``, same shape.

    Keys before the query (``i - j >= 0``) fill the first ``buckets // 2``, keys after it the rest; in
    each half, offsets below ``buckets // 4`` have their own bucket and the others share log-spaced ones.
    """
    half = buckets // 2
    after = (offsets < 0).long() * half  # keys after the query: the second half
    distance = offsets.abs()
    exact = half // 2
    logs = (
        exact
        + (
            torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact) * (half - exact)
        ).long()
    )
    far = torch.where(distance < exact, distance, logs.clamp(max=half - 1))
    return after + far  # (tq, tk)


class RelativeBias(nn.Module):
    """``bias(tq, tk)``: the learned ``(h, tq, tk)`` term added to every layer's scores (the queries are
    the last ``tq`` of ``tk`` positions, as with a KV cache)."""

    def __init__(self, heads: int, *, buckets: int = 32, max_distance: int = 128) -> None:
        super().__init__()
        if buckets < 8 or buckets % 4:
            raise ValueError(f"buckets must be a multiple of 4, at least 8; got {buckets}.")
        self.buckets, self.max_distance = buckets, max_distance
        self.table = nn.Embedding(buckets, heads)  # (buckets, h)
        nn.init.zeros_(self.table.weight)

    def forward(self, tq: int, tk: int) -> Tensor:
        offsets = relative_offsets(tq, tk, self.table.weight.device)  # (tq, tk)
        return self.table(relative_buckets(offsets, self.buckets, self.max_distance)).permute(2, 0, 1)


__all__ = ["RelativeBias", "relative_buckets"]
