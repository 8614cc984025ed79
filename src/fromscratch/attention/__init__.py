"""Attention and everything that shapes it (chapters 02-05, 11, 13): the bottom floor of the package.

- :mod:`~fromscratch.attention.dot_product`: ``basic_self_attention`` (ch. 02),
  ``scaled_dot_product_attention`` and its fused twin ``fused_attention`` (ch. 03); ``attend``, the
  one choice between them every attention layer makes;
- :mod:`~fromscratch.attention.core`: ``SelfAttention``, the multi-head attention of chapters 04-10;
- :mod:`~fromscratch.attention.kinds`: the blog's wide and narrow heads beside the standard ones (ch. 04);
- :mod:`~fromscratch.attention.masks`: ``causal_mask``, ``padding_mask`` and their checks (True = may
  attend); ``local_mask`` (a grid of patches) and ``graph_mask`` (an adjacency matrix), ch. 13;
- :mod:`~fromscratch.attention.positions`: position vectors added to embeddings (learned, sinusoidal,
  ch. 05), RoPE and ALiBi (ch. 11), 2-D positions of patches (ch. 13);
  :mod:`~fromscratch.attention.relative_bias`: T5's learned bias per bucket of distance (ch. 11);
- :mod:`~fromscratch.attention.cache`: the caller-owned ``KVCache`` (ch. 11);
- :mod:`~fromscratch.attention.sparse`: Child et al.'s strided and fixed patterns (ch. 11);
- :mod:`~fromscratch.attention.grouped`: grouped-query heads' sharing, written out (ch. 14);
- :mod:`~fromscratch.attention.flash`: FlashAttention's tiles, forward and backward, in PyTorch;
  :mod:`~fromscratch.attention.flash_cost`: their FLOPs and bytes counted; ``flash_triton``: the same
  loops as a Triton kernel (ch. 16).

Imports nothing from the rest of the package.
"""

from fromscratch.attention.cache import KVCache
from fromscratch.attention.core import SelfAttention
from fromscratch.attention.dot_product import (
    attend,
    basic_self_attention,
    fused_attention,
    scaled_dot_product_attention,
)
from fromscratch.attention.kinds import KINDS, ChunkedLinear, NarrowSelfAttention, WideSelfAttention
from fromscratch.attention.masks import (
    causal_mask,
    check_attn_mask,
    check_mask,
    check_padding_mask,
    graph_mask,
    local_mask,
    padding_mask,
)
from fromscratch.attention.positions import (
    ALiBi,
    GridPositionEmbedding,
    PositionEmbedding,
    PositionEncoding,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    check_length,
    check_tokens,
    relative_offsets,
    rotate,
    sinusoidal_encoding,
)
from fromscratch.attention.relative_bias import RelativeBias, relative_buckets
from fromscratch.attention.sparse import PATTERNS, dense_sparse_attention, sparse_attention, sparse_mask

__all__ = [
    "KINDS",
    "PATTERNS",
    "ALiBi",
    "ChunkedLinear",
    "GridPositionEmbedding",
    "KVCache",
    "NarrowSelfAttention",
    "PositionEmbedding",
    "PositionEncoding",
    "RelativeBias",
    "RotaryEmbedding",
    "SelfAttention",
    "WideSelfAttention",
    "alibi_bias",
    "attend",
    "alibi_slopes",
    "basic_self_attention",
    "causal_mask",
    "check_attn_mask",
    "check_length",
    "check_tokens",
    "check_mask",
    "check_padding_mask",
    "dense_sparse_attention",
    "fused_attention",
    "graph_mask",
    "local_mask",
    "padding_mask",
    "relative_buckets",
    "relative_offsets",
    "rotate",
    "scaled_dot_product_attention",
    "sinusoidal_encoding",
    "sparse_attention",
    "sparse_mask",
]
