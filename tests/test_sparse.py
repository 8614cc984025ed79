"""Sparse attention (chapter 11): the chunked implementation equals masked dense attention."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.sparse import (
    PATTERNS,
    computed_scores,
    default_block,
    dense_sparse_attention,
    pattern_parts,
    sparse_attention,
    sparse_mask,
)


@pytest.mark.parametrize("kind", PATTERNS)
@pytest.mark.parametrize(("t", "block", "summary"), [(16, 4, 1), (64, 8, 2), (12, 3, 1), (8, 8, 1)])
def test_sparse_equals_masked_dense_forward_and_backward(kind, t, block, summary):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, t, 5, dtype=torch.float64, requires_grad=True) for _ in range(3))
    grad = torch.randn(2, 3, t, 5, dtype=torch.float64)
    fast = sparse_attention(q, k, v, kind, block, summary=summary)
    fast_grads = torch.autograd.grad(fast, (q, k, v), grad)
    slow = dense_sparse_attention(q, k, v, kind, block, summary=summary)
    slow_grads = torch.autograd.grad(slow, (q, k, v), grad)
    torch.testing.assert_close(fast, slow)
    for a, b in zip(fast_grads, slow_grads, strict=True):
        torch.testing.assert_close(a, b)


def test_patterns_are_childs():
    strided = pattern_parts("strided", 8, 3)
    assert strided[0, 5].nonzero().flatten().tolist() == [3, 4, 5]  # the last 3 positions
    assert strided[1, 7].nonzero().flatten().tolist() == [1, 4, 7]  # every 3rd position back
    fixed = pattern_parts("fixed", 8, 4, summary=1)
    assert fixed[0, 6].nonzero().flatten().tolist() == [4, 5, 6]  # the own block
    assert fixed[1, 6].nonzero().flatten().tolist() == [3]  # the summary position of block 0
    for kind in PATTERNS:
        mask = sparse_mask(kind, 64, 8)
        assert torch.equal(mask, mask.tril()) and mask.diagonal().all()  # causal, each query sees itself
        two_layers = (mask.float() @ mask.float()) > 0
        assert torch.equal(two_layers, torch.ones(64, 64, dtype=torch.bool).tril())  # everything in 2 layers


@pytest.mark.parametrize("kind", PATTERNS)
def test_computed_scores_follow_the_pattern_and_grow_like_t_sqrt_t(kind):
    for t in (256, 1024, 4096):
        block = default_block(t)
        allowed = int(sparse_mask(kind, t, block).sum()) if t <= 1024 else None
        computed = computed_scores(kind, t, block)
        if allowed is not None:
            assert allowed <= computed <= 4 * allowed  # the blocks hold the pattern, and little else
        assert computed < t * t / 4
    ratio = computed_scores(kind, 4096 * 4, default_block(4096 * 4)) / computed_scores(
        kind, 4096, default_block(4096)
    )
    assert 6 < ratio < 10  # 4x longer: ~8x the work (t^1.5), not 16x (t^2)


def test_a_block_that_does_not_divide_t_says_to_pad():
    q = torch.randn(1, 1, 10, 4)
    with pytest.raises(ValueError, match="Pad the sequence to 12"):
        sparse_attention(q, q, q, "fixed", 4)
    with pytest.raises(ValueError, match="pattern must be one of"):
        sparse_mask("dilated", 8, 2)
