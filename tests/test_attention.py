"""Tests of fromscratch.attention against PyTorch's own attention (oracles) and its promises."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

from fromscratch.attention import (
    KINDS,
    SelfAttention,
    WideSelfAttention,
    basic_self_attention,
    causal_mask,
    fused_attention,
    padding_mask,
    scaled_dot_product_attention,
)

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def explicit(module, x, **masks):
    """The teaching path: the output and the one ``(b, h, t, t)`` tensor the module appended."""
    weights = []
    out = module(x, **masks, attention=weights)
    assert len(weights) == 1
    return out, weights[0]


# --- basic self-attention and the helpers ----------------------------------------------------------
def test_basic_self_attention_is_softmax_x_xt_x():
    x = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]])  # (1, 3, 2)
    weights = torch.softmax(x[0] @ x[0].T, dim=1)
    expected = torch.stack([sum(weights[i, j] * x[0, j] for j in range(3)) for i in range(3)])  # a loop
    assert_close(basic_self_attention(x), expected[None])


def test_basic_self_attention_rejects_2d_input():
    with pytest.raises(ValueError, match=r"\(b, t, e\)"):
        basic_self_attention(torch.randn(3, 4))


def test_causal_and_padding_masks():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert padding_mask(torch.tensor([2, 0, 3]), 3).tolist() == [[True, True, False], [False] * 3, [True] * 3]
    with pytest.raises(ValueError, match="0..3"):
        padding_mask(torch.tensor([4]), 3)


# --- scaled dot-product attention vs torch.nn.functional ------------------------------------------
@st.composite
def qkv_and_mask(draw):
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    tq, tk, d, dv = (draw(st.integers(1, 7)) for _ in range(4))
    seed = draw(st.integers(0, 2**16))
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(*lead, n, m, generator=g) for n, m in ((tq, d), (tk, d), (tk, dv)))
    mask = None
    if draw(st.booleans()):
        shape = draw(st.sampled_from([(tq, tk), (1, tk), (tq, 1)]))
        mask = torch.rand(*shape, generator=g) < 0.7
        mask[..., 0] = True  # F.sdpa's contract for fully masked rows varies by version; tested below
    return q, k, v, mask


@SETTINGS
@given(qkv_and_mask())
def test_sdpa_matches_torch(case):
    q, k, v, mask = case
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-5, rtol=1e-4)
    assert weights.shape == (*q.shape[:-1], k.shape[-2])
    assert_close(weights.sum(-1), torch.ones(q.shape[:-1]))
    if mask is not None:
        assert (weights[..., ~mask.expand(weights.shape[-2:])] == 0).all()


def test_sdpa_scale_is_one_over_sqrt_d():
    q, k = torch.ones(1, 4), torch.tensor([[1.0, 1, 1, 1], [0, 0, 0, 0]])
    _, weights = scaled_dot_product_attention(q, k, torch.eye(2))
    score = 4 / math.sqrt(4)  # q.k = 4, scaled by 1/sqrt(4)
    assert_close(weights, torch.softmax(torch.tensor([[score, 0.0]]), dim=-1))


@SETTINGS
@given(qkv_and_mask(), st.booleans())
def test_fused_attention_equals_the_written_out_one(case, with_bias):
    q, k, v, mask = case
    if mask is not None:
        mask = mask.clone()
        mask[..., 0, :] = False  # a query with no key at all: zeros, not NaN, on both paths
    bias = torch.randn(q.shape[-2], k.shape[-2]) if with_bias else None
    out = fused_attention(q, k, v, mask, bias=bias)
    assert torch.isfinite(out).all()
    assert_close(out, scaled_dot_product_attention(q, k, v, mask, bias=bias)[0], atol=1e-5, rtol=1e-4)


def test_sdpa_fully_masked_row_gives_zeros_and_finite_gradients():
    q, k, v = (torch.randn(2, 3, 4, requires_grad=True) for _ in range(3))
    mask = torch.tensor([[True, False, True], [False, False, False], [True, True, True]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert (out[:, 1] == 0).all() and (weights[:, 1] == 0).all()
    out.sum().backward()
    for tensor in (q, k, v):
        assert torch.isfinite(tensor.grad).all()
    assert (q.grad[:, 1] == 0).all()


@pytest.mark.parametrize(
    "bad",
    [
        lambda: scaled_dot_product_attention(
            torch.randn(2, 3, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 4)
        ),
        lambda: scaled_dot_product_attention(
            torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 6, 4)
        ),
        lambda: scaled_dot_product_attention(torch.randn(3, 4), torch.randn(1, 5, 4), torch.randn(1, 5, 4)),
        lambda: scaled_dot_product_attention(
            torch.randn(3, 4),
            torch.randn(5, 4),
            torch.randn(5, 4),
            attn_mask=torch.ones(5, 3, dtype=torch.bool),
        ),
        lambda: scaled_dot_product_attention(
            torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 4), attn_mask=torch.ones(3, 5)
        ),
    ],
)
def test_sdpa_wrong_shapes_raise(bad):
    with pytest.raises(ValueError, match=r"\(\.\.\., tq|mask must be boolean"):
        bad()


# --- SelfAttention ---------------------------------------------------------------------------------
def test_parameter_counts_of_the_three_kinds():
    e, h = 16, 4
    count = {kind: sum(p.numel() for p in Kind(e, h).parameters()) for kind, Kind in KINDS.items()}
    assert count == {
        "standard": 3 * e * e + e * e + e,
        "wide": 3 * e * e * h + e * h * e + e,
        "narrow": 3 * h * (e // h) ** 2 + e * e + e,
    }


def test_narrow_heads_see_only_their_chunk():
    torch.manual_seed(0)
    attention = KINDS["narrow"](8, 2)
    x = torch.randn(1, 4, 8)
    _, before = explicit(attention, x)
    x2 = x.clone()
    x2[..., 4:] = torch.randn(1, 4, 4)  # change the second chunk only
    _, after = explicit(attention, x2)
    assert_close(after[:, 0], before[:, 0])  # head 0 cannot tell
    assert not torch.allclose(after[:, 1], before[:, 1])


MASKS = {  # keyword arguments of SelfAttention.forward
    "none": lambda b, h, t: {},
    "key padding (b, t)": lambda b, h, t: dict(padding_mask=padding_mask(torch.randint(0, t + 1, (b,)), t)),
    "pattern (t, t)": lambda b, h, t: dict(attn_mask=torch.rand(t, t) < 0.6),
    "pattern (b, 1, t, t)": lambda b, h, t: dict(attn_mask=torch.rand(b, 1, t, t) < 0.6),
    "pattern (b, h, t, t)": lambda b, h, t: dict(attn_mask=torch.rand(b, h, t, t) < 0.6),
    "pattern (1, 1, t, t)": lambda b, h, t: dict(attn_mask=torch.rand(1, 1, t, t) < 0.6),
    "key padding and pattern": lambda b, h, t: dict(
        padding_mask=padding_mask(torch.randint(0, t + 1, (b,)), t), attn_mask=torch.rand(t, t) < 0.6
    ),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("causal", [False, True])
def test_fast_path_equals_teaching_path(kind, mask_name, causal):
    torch.manual_seed(1)
    b, h, t, e = 3, 2, 6, 8
    attention = KINDS[kind](e, h, causal=causal)
    masks = MASKS[mask_name](b, h, t)
    x = torch.randn(b, t, e, requires_grad=True)
    target = torch.randn(b, t, e)
    grads = []
    for explicit in (True, False):
        attention.zero_grad()
        x.grad = None
        out = attention(x, **masks, attention=[]) if explicit else attention(x, **masks)
        assert torch.isfinite(out).all()
        (out * target).sum().backward()
        grads.append((out.detach(), x.grad.clone(), [p.grad.clone() for p in attention.parameters()]))
    (out1, gx1, gp1), (out2, gx2, gp2) = grads
    assert_close(out2, out1, atol=1e-5, rtol=1e-4)
    assert_close(gx2, gx1, atol=1e-5, rtol=1e-4)
    for g2, g1 in zip(gp2, gp1, strict=True):
        assert torch.isfinite(g1).all()
        assert_close(g2, g1, atol=1e-5, rtol=1e-4)


@SETTINGS
@given(
    kind=st.sampled_from(list(KINDS)),
    b=st.integers(1, 3),
    t=st.integers(1, 6),
    h=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**16),
)
def test_random_shapes_keep_shape_and_paths_agree(kind, b, t, h, seed):
    torch.manual_seed(seed)
    attention = KINDS[kind](4 * h, h)
    x = torch.randn(b, t, 4 * h)
    out, weights = explicit(attention, x)
    assert out.shape == x.shape and weights.shape == (b, h, t, t)
    assert_close(attention(x), out, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("kind", list(KINDS))
def test_permutation_equivariance_without_mask(kind):
    torch.manual_seed(2)
    attention = KINDS[kind](8, 2)
    x = torch.randn(2, 7, 8)
    perm = torch.randperm(7)
    assert_close(attention(x[:, perm]), attention(x)[:, perm], atol=1e-5, rtol=1e-4)
    assert_close(basic_self_attention(x[:, perm]), basic_self_attention(x)[:, perm])


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("written_out", [True, False])
def test_causal_attention_never_looks_ahead(kind, written_out):
    torch.manual_seed(3)
    t = 6
    attention = KINDS[kind](8, 2, causal=True)

    def run(x):
        return attention(x, attention=[]) if written_out else attention(x)

    x = torch.randn(1, t, 8)
    for i in range(t - 1):
        changed = x.clone()
        changed[:, i + 1 :] = torch.randn(1, t - i - 1, 8) * 10
        assert_close(run(changed)[:, : i + 1], run(x)[:, : i + 1], atol=1e-6, rtol=0)
        # and exactly zero gradient from output i to every later input
        xg = x.clone().requires_grad_(True)
        run(xg)[0, i].sum().backward()
        assert (xg.grad[0, i + 1 :] == 0).all()
        assert xg.grad[0, : i + 1].abs().sum() > 0


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("written_out", [True, False])
def test_fully_masked_sequence_gives_zero_attention_and_finite_gradients(kind, written_out):
    torch.manual_seed(4)
    attention = KINDS[kind](8, 2)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = padding_mask(torch.tensor([3, 0]), 4)  # the second sequence is all padding
    if written_out:
        out, weights = explicit(attention, x, padding_mask=mask)
        assert (weights[1] == 0).all() and (weights[0, :, :, 3] == 0).all()
    else:
        out = attention(x, padding_mask=mask)
    # attention gives zeros, so the output is unify_heads' bias alone
    assert_close(out[1], attention.unify_heads.bias.expand(4, 8).detach())
    out.sum().backward()
    assert torch.isfinite(x.grad).all() and (x.grad[1] == 0).all()
    assert all(torch.isfinite(p.grad).all() for p in attention.parameters())


def test_the_keyword_says_what_a_square_mask_means():
    """With b == t a (b, t) mask and a (t, t) pattern have the same shape: the keyword decides."""
    torch.manual_seed(5)
    attention = SelfAttention(4, 1)
    x = torch.randn(3, 3, 4)
    mask = padding_mask(torch.tensor([3, 2, 1]), 3)  # (b, t) with b == t
    _, weights = explicit(attention, x, padding_mask=mask)
    assert (weights[2, 0, :, 1:] == 0).all() and (weights[2, 0, :, 0] == 1).all()  # sequence 2 has 1 real key
    _, weights = explicit(attention, x, attn_mask=mask)
    assert (weights[:, 0, 2, 1:] == 0).all() and (
        weights[:, 0, 2, 0] == 1
    ).all()  # query 2 may see key 0 only


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: SelfAttention(10, 3), "divisible"),
        (lambda: KINDS["narrow"](10, 3), "divisible"),
        (lambda: SelfAttention(8, 2)(torch.randn(5, 8)), "not enough values to unpack"),
        (
            lambda: SelfAttention(8, 2)(
                torch.randn(2, 5, 8), padding_mask=torch.ones(2, 4, dtype=torch.bool)
            ),
            r"padding_mask must have shape \(b, tk\) = \(2, 5\)",
        ),
        (
            lambda: SelfAttention(8, 2)(
                torch.randn(2, 5, 8), padding_mask=torch.ones(5, 5, dtype=torch.bool)
            ),
            "pass a .* pattern as attn_mask",
        ),
        (lambda: SelfAttention(8, 2)(torch.randn(2, 5, 8), padding_mask=torch.ones(2, 5)), "boolean"),
        (
            lambda: SelfAttention(8, 2)(
                torch.randn(2, 5, 8), attn_mask=torch.ones(2, 5, 5, dtype=torch.bool)
            ),
            r"mask\[:, None\]",
        ),
        (
            lambda: SelfAttention(8, 2)(
                torch.randn(2, 5, 8), attn_mask=torch.ones(3, 1, 5, 5, dtype=torch.bool)
            ),
            "does not broadcast",
        ),
        (lambda: SelfAttention(8, 2)(torch.randn(2, 5, 8), attn_mask=torch.ones(5, 5)), "boolean"),
        (lambda: SelfAttention(8, 2)(torch.randn(2, 5, 8), torch.ones(2, 5, dtype=torch.bool)), None),
    ],
)
def test_self_attention_wrong_input_raises(make, match):
    with pytest.raises(TypeError if match is None else ValueError, match=match):  # masks are keyword-only
        make()


def test_a_wrong_width_fails_an_assert_inside_the_layer():
    with pytest.raises(AssertionError, match=r"\(b, t, 8\)"):
        SelfAttention(8, 2)(torch.randn(2, 5, 6))


def test_wide_heads_allow_any_head_count():
    assert WideSelfAttention(10, 3)(torch.randn(1, 2, 10)).shape == (1, 2, 10)


def test_the_three_kinds_share_one_forward():
    """Wide and narrow heads differ from SelfAttention in their projections only (chapter 04)."""
    for Kind in KINDS.values():
        assert issubclass(Kind, SelfAttention) and Kind.forward is SelfAttention.forward


def test_self_attention_stays_at_its_teaching_shape():
    """one SelfAttention for chapters 04-10, a forward of at most 45 lines, four arguments."""
    import inspect

    lines = inspect.getsource(SelfAttention.forward).splitlines()
    assert len(lines) <= 45, f"SelfAttention.forward has {len(lines)} lines"
    assert list(inspect.signature(SelfAttention).parameters) == ["emb", "heads", "causal", "qkv_bias"]


# --- attend: the one dispatch ------------------------------------------------------------------------
@pytest.mark.parametrize("tq, tk, h, hk", [(6, 6, 4, 4), (6, 6, 4, 2), (1, 7, 4, 1), (3, 7, 2, 2)])
@pytest.mark.parametrize("padded", [False, True])
def test_attend_gives_one_output_on_every_path(tq, tk, h, hk, padded):
    """The written-out path (weights wanted), the kernel's own causal pattern and the fused kernel with a
    mask agree, grouped heads included; the causal pattern is aligned at the end (the last tq positions)."""
    from fromscratch.attention.dot_product import attend
    from fromscratch.attention.grouped import expand_kv_heads

    g = torch.Generator().manual_seed(tq * tk + h + hk)
    q, k, v = (torch.randn(2, n, t, 8, generator=g) for n, t in ((h, tq), (hk, tk), (hk, tk)))
    keys = (torch.arange(tk) < torch.tensor([[tk], [tk - 2]]))[:, None, None, :] if padded else None
    weights = []
    explicit = attend(q, k, v, keys, causal=True, weights=weights)
    fast = attend(q, k, v, keys, causal=True)
    torch.testing.assert_close(fast, explicit, atol=1e-6, rtol=1e-5)
    pattern = torch.ones(tk, tk, dtype=torch.bool).tril()[tk - tq :]  # (tq, tk), end-aligned
    mask = pattern if keys is None else pattern & keys
    k, v = expand_kv_heads(k, h // hk), expand_kv_heads(v, h // hk)  # (2, h, tk, 8)
    by_hand, _ = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(explicit, by_hand, atol=1e-6, rtol=1e-5)
    assert len(weights) == 1 and weights[0].shape == (2, h, tq, tk)
    assert torch.all(weights[0].masked_select(~mask.expand_as(weights[0])) == 0)
