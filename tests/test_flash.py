"""FlashAttention from scratch (chapter 16): the online softmax, the merge identity, and tiled attention equal
to naive attention in float64 (values and the gradients of q, k, v) for every shape the loops must handle."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fromscratch.attention.flash import (
    Partial,
    flash_attention,
    flash_backward,
    flash_forward,
    merge,
    online_softmax,
    tile_partial,
)
from fromscratch.attention.flash_cost import attention_cost
from fromscratch.chapters.ch16_flash_attention.pipeline import naive_attention

TOL = 1e-10  # float64: the tiles only change the order of the additions


def _qkv(b, h, tq, tk, d=8, dv=5, *, h_kv=None, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    h_kv = h_kv or h
    q = torch.randn(b, h, tq, d, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(b, h_kv, tk, d, generator=g, dtype=dtype, requires_grad=True)
    v = torch.randn(b, h_kv, tk, dv, generator=g, dtype=dtype, requires_grad=True)
    dout = torch.randn(b, h, tq, dv, generator=g, dtype=dtype)
    return q, k, v, dout


def _value_and_grads(attention, q, k, v, dout):
    out = attention(q, k, v)
    return (out, *torch.autograd.grad(out, (q, k, v), dout))


def _largest_difference(first, second):
    return max((a - b).abs().max().item() for a, b in zip(first, second, strict=True))


# --- online softmax and the merge ------------------------------------------------------------------
@pytest.mark.parametrize("block", [1, 3, 16, 100])
def test_online_softmax_equals_torch_softmax_in_float64(block):
    x = torch.randn(4, 6, 37, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 10
    x[0, 0, 5:] = -math.inf  # masked entries get exactly zero weight
    got = online_softmax(x, block=block)
    assert (got - torch.softmax(x, dim=-1)).abs().max().item() < 1e-15
    assert (got[0, 0, 5:] == 0).all()


def test_online_softmax_of_a_fully_masked_row_is_zeros_not_nan():
    x = torch.full((2, 5), -math.inf, dtype=torch.float64)
    x[1] = torch.arange(5.0)
    got = online_softmax(x, block=2)
    assert (got[0] == 0).all() and torch.allclose(got[1], torch.softmax(x[1], -1))


def test_merging_two_disjoint_sets_of_keys_equals_one_partial_over_all_keys():
    g = torch.Generator().manual_seed(2)
    scores = torch.randn(3, 7, 40, generator=g, dtype=torch.float64) * 5  # (..., tq, tk)
    v = torch.randn(3, 40, 4, generator=g, dtype=torch.float64)  # (..., tk, dv)
    keys = torch.randperm(40, generator=g)  # any split, not only neighbours
    a, b = keys[:13], keys[13:]
    merged = merge(tile_partial(scores[..., a], v[:, a]), tile_partial(scores[..., b], v[:, b]))
    whole = tile_partial(scores, v)
    assert _largest_difference(merged, whole) < 1e-13  # the same (m, denom, acc)
    out, lse = merged.finish()
    assert (out - torch.softmax(scores, -1) @ v).abs().max().item() < 1e-14
    assert (lse - torch.logsumexp(scores, -1)).abs().max().item() < 1e-13


def test_merge_is_symmetric_and_the_empty_partial_changes_nothing():
    g = torch.Generator().manual_seed(3)
    s1, s2 = (torch.randn(5, 6, generator=g, dtype=torch.float64) for _ in range(2))
    v1, v2 = (torch.randn(6, 3, generator=g, dtype=torch.float64) for _ in range(2))
    p1, p2 = tile_partial(s1, v1), tile_partial(s2, v2)
    assert _largest_difference(merge(p1, p2), merge(p2, p1)) == 0
    empty = Partial.empty(torch.zeros(5, dtype=torch.float64), 3)
    assert _largest_difference(merge(empty, p1), p1) == 0


# --- tiled attention against naive attention -------------------------------------------------------
CASES = [  # (tq, tk, block_q, block_k): lengths that are not multiples of the blocks, tq != tk both ways
    (37, 37, 16, 16),
    (37, 37, 13, 7),
    (37, 100, 16, 32),
    (100, 37, 32, 16),
    (64, 64, 64, 64),
    (1, 50, 64, 8),  # one query over a cache of keys (decoding)
    (50, 1, 8, 64),
    (11, 9, 1, 1),  # blocks of one
    (30, 45, 128, 256),  # blocks larger than t
]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(("tq", "tk", "block_q", "block_k"), CASES)
def test_flash_attention_equals_naive_attention_in_float64(tq, tk, block_q, block_k, causal):
    q, k, v, dout = _qkv(2, 3, tq, tk)
    ours = _value_and_grads(
        lambda *x: flash_attention(*x, causal=causal, block_q=block_q, block_k=block_k), q, k, v, dout
    )
    naive = _value_and_grads(lambda *x: naive_attention(*x, causal=causal), q, k, v, dout)
    assert _largest_difference(ours, naive) < TOL


def test_causal_queries_that_see_no_key_get_zeros_and_zero_gradients():
    q, k, v, dout = _qkv(1, 2, 9, 4)  # tq > tk: aligned to the end, queries 0..4 see no key
    out, dq, dk, dv = _value_and_grads(
        lambda *x: flash_attention(*x, causal=True, block_q=4, block_k=2), q, k, v, dout
    )
    assert (out[..., :5, :] == 0).all() and (dq[..., :5, :] == 0).all()
    assert all(torch.isfinite(x).all() for x in (out, dq, dk, dv))
    _, lse = flash_forward(q, k, v, causal=True, block_q=4, block_k=2)
    assert (lse[..., :5] == -math.inf).all() and torch.isfinite(lse[..., 5:]).all()


def test_grouped_query_heads_read_each_key_value_head_for_their_group():
    q, k, v, dout = _qkv(2, 6, 21, 21, h_kv=2)  # 3 query heads per key/value head
    ours = _value_and_grads(lambda *x: flash_attention(*x, causal=True, block_q=8, block_k=8), q, k, v, dout)
    naive = _value_and_grads(
        lambda q, k, v: naive_attention(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1), causal=True),
        q,
        k,
        v,
        dout,
    )
    assert _largest_difference(ours, naive) < TOL


def test_flash_attention_equals_pytorchs_fused_attention_in_float32():
    q, k, v, dout = _qkv(2, 4, 70, 70, d=16, dv=16, dtype=torch.float32)
    for causal in (False, True):
        ours = _value_and_grads(lambda *x, c=causal: flash_attention(*x, causal=c), q, k, v, dout)
        theirs = _value_and_grads(
            lambda *x, c=causal: F.scaled_dot_product_attention(*x, is_causal=c), q, k, v, dout
        )
        assert _largest_difference(ours, theirs) < 1e-5


def test_causal_with_fewer_queries_than_keys_is_aligned_bottom_right_not_as_sdpas_is_causal():
    """The course's causal mask ends at the last key (a KV-cache step): PyTorch's ``causal_lower_right``.
    ``F.scaled_dot_product_attention(is_causal=True)`` aligns it top-left instead when ``tq != tk``."""
    from torch.nn.attention.bias import causal_lower_right

    q, k, v, dout = _qkv(2, 3, 5, 9, d=8, dv=8)
    ours = _value_and_grads(lambda *x: flash_attention(*x, causal=True, block_q=2, block_k=4), q, k, v, dout)
    bottom_right = _value_and_grads(
        lambda *x: F.scaled_dot_product_attention(*x, attn_mask=causal_lower_right(5, 9)), q, k, v, dout
    )
    assert _largest_difference(ours, bottom_right) < TOL
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert (ours[0] - top_left).abs().max() > 0.1  # query 0 sees key 0 only, not keys 0..4


def test_the_forward_keeps_only_q_k_v_the_output_and_the_log_sum_exp():
    q, k, v, _ = _qkv(1, 2, 48, 40)
    saved = []

    def pack(tensor):
        saved.append(tuple(tensor.shape))
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        flash_attention(q, k, v, causal=True, block_q=16, block_k=16)
    # q, k, v, out and lse (one number per query), each with the group of query heads as a dim
    assert sorted(saved) == sorted(
        [(1, 2, 1, 48, 8), (1, 2, 1, 40, 8), (1, 2, 1, 40, 5), (1, 2, 1, 48, 5), (1, 2, 1, 48)]
    )


def test_the_backward_functions_reproduce_autograds_gradients_from_out_and_lse_alone():
    q, k, v, dout = _qkv(1, 2, 23, 31)
    with torch.no_grad():
        out, lse = flash_forward(q, k, v, block_q=8, block_k=8)
        grads = flash_backward(q, k, v, out, lse, dout, block_q=5, block_k=6)  # any blocks will do
    naive = _value_and_grads(naive_attention, q, k, v, dout)
    assert _largest_difference((out, *grads), naive) < TOL


def test_bad_shapes_and_blocks_raise_a_value_error_that_says_what_to_do():
    q, k, v, _ = _qkv(1, 4, 8, 8, h_kv=3)
    with pytest.raises(ValueError, match="multiple of h_kv"):
        flash_attention(q, k, v)
    with pytest.raises(ValueError, match="4-D"):
        flash_attention(q[0], k[0], v[0])
    q, k, v, _ = _qkv(1, 2, 8, 8)
    with pytest.raises(ValueError, match="at least 1"):
        flash_attention(q, k, v, block_q=0)


# --- counting the work -----------------------------------------------------------------------------
def test_tiles_do_the_same_flops_as_naive_attention_and_move_fewer_bytes_the_larger_the_blocks():
    t, d = 4096, 64
    naive, naive_b = (
        attention_cost(t, t, d, block_q=None),
        attention_cost(t, t, d, block_q=None, backward=True),
    )
    tiled = attention_cost(t, t, d)
    assert tiled.flops == naive.flops == 4 * t * t * d and tiled.tiles == (t // 64) ** 2
    # q read and out, lse written once; k and v read once per query block: 2 t d (t / block_q) numbers
    assert tiled.bytes == 4 * (2 * t * d + t + 2 * t * d * (t // 64))
    assert naive.bytes == 4 * (4 * t * t + 4 * t * d)  # s written, read; p written, read; q, k, v, out
    ratios = [naive.bytes / attention_cost(t, t, d, block_q=bq).bytes for bq in (64, 128, 256)]
    assert 1.9 < ratios[0] < 2.1 and 3.8 < ratios[1] < 4.1 and 7.5 < ratios[2] < 8.1
    tiled_b = attention_cost(t, t, d, backward=True)
    assert (tiled.flops + tiled_b.flops) * 12 == (naive.flops + naive_b.flops) * 14  # recomputing s
    assert 1.7 < naive_b.bytes / tiled_b.bytes < 1.8  # q, dout and dq move once per tile
    assert naive_b.bytes / attention_cost(t, t, d, block_k=256, backward=True).bytes > 6


def test_causal_attention_computes_the_tiles_on_and_below_the_diagonal_only():
    for t, block in ((256, 64), (100, 32), (1000, 128)):
        n = -(-t // block)
        assert attention_cost(t, t, 8, causal=True, block_q=block, block_k=block).tiles == n * (n + 1) // 2
    square = attention_cost(512, 512, 64, causal=True)
    assert square.flops < 0.6 * attention_cost(512, 512, 64).flops
    assert attention_cost(1, 300, 8, causal=True).tiles == 5  # one query sees every key
    assert attention_cost(300, 1, 8, causal=True, block_q=100).tiles == 1  # only the last block sees one


# --- the chapter's pictures ------------------------------------------------------------------------
def test_the_tile_pictures_step_through_every_tile_with_and_without_the_mask():
    from fromscratch.chapters.ch16_flash_attention import figures

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(12, 4, generator=g, dtype=torch.float64) for _ in range(3))
    for backward in (False, True):
        shown = figures.tile_frames(q, k, v, block=4, index=1, backward=backward)
        assert len(shown) == 2 * 4  # causal no/yes x steps 0..3
    kinds = figures._kinds(12, 12, 4, causal=True)
    assert kinds.tolist() == [[1, 0, 0], [2, 1, 0], [2, 2, 1]]  # masked on the diagonal, skipped above
