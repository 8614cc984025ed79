"""Attention and everything that shapes it (chapters 02-05, 11): the bottom floor of the package.

- :mod:`~fromscratch.attention.dot_product`: ``basic_self_attention`` (ch. 02) and
  ``scaled_dot_product_attention`` (ch. 03);
- :mod:`~fromscratch.attention.core`: ``SelfAttention`` (ch. 04: multi-head; self and cross attention;
  grouped-query heads; the KV cache);
- :mod:`~fromscratch.attention.masks`: ``causal_mask``, ``padding_mask`` and their checks (True = may attend);
  ``local_mask`` (a grid of patches) and ``graph_mask`` (an adjacency matrix), ch. 13;
- :mod:`~fromscratch.attention.positions`: position vectors added to embeddings (learned, sinusoidal, ch. 05)
  and positions inside attention (RoPE, ALiBi, relative offsets, ch. 11); 2-D positions of patches (ch. 13);
- :mod:`~fromscratch.attention.patches`: ``patchify``, ``unpatchify``: images cut into patch tokens (ch. 13);
- :mod:`~fromscratch.attention.cache`: the caller-owned ``KVCache`` (ch. 11);
- :mod:`~fromscratch.attention.sparse`: Child et al.'s strided and fixed patterns (ch. 11).

Imports nothing from the rest of the package.
"""

from fromscratch.attention.cache import KVCache
from fromscratch.attention.core import KINDS, ChunkedLinear, SelfAttention
from fromscratch.attention.dot_product import basic_self_attention, scaled_dot_product_attention
from fromscratch.attention.masks import (
    causal_mask,
    check_attn_mask,
    check_mask,
    check_padding_mask,
    graph_mask,
    local_mask,
    padding_mask,
)
from fromscratch.attention.patches import check_patch, patchify, unpatchify
from fromscratch.attention.positions import (
    ALiBi,
    GridPositionEmbedding,
    PositionEmbedding,
    PositionEncoding,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    check_length,
    relative_offsets,
    rotate,
    sinusoidal_encoding,
)
from fromscratch.attention.relative_bias import RelativeBias, relative_buckets
from fromscratch.attention.schemes import SCHEMES, PositionParts, Scheme, position_parts
from fromscratch.attention.sparse import PATTERNS, dense_sparse_attention, sparse_attention, sparse_mask

__all__ = [
    "SCHEMES",
    "PositionParts",
    "RelativeBias",
    "Scheme",
    "position_parts",
    "relative_buckets",
    "KINDS",
    "PATTERNS",
    "ALiBi",
    "ChunkedLinear",
    "GridPositionEmbedding",
    "KVCache",
    "PositionEmbedding",
    "PositionEncoding",
    "RotaryEmbedding",
    "SelfAttention",
    "alibi_bias",
    "alibi_slopes",
    "basic_self_attention",
    "causal_mask",
    "check_attn_mask",
    "check_length",
    "check_patch",
    "check_mask",
    "check_padding_mask",
    "dense_sparse_attention",
    "graph_mask",
    "local_mask",
    "padding_mask",
    "patchify",
    "relative_offsets",
    "rotate",
    "scaled_dot_product_attention",
    "sinusoidal_encoding",
    "sparse_attention",
    "sparse_mask",
    "unpatchify",
]
