"""The Triton kernel of chapter 16 (``attention/flash_triton.py``), forward and backward, equal to naive
attention. Without a GPU it runs under Triton's interpreter (``TRITON_INTERPRET=1``, NumPy on the CPU);
without the optional extra ``triton`` (``pip install -e '.[triton]'``) these tests skip."""

from __future__ import annotations

import os

import pytest
import torch

from fromscratch.chapters.ch16_flash_attention.pipeline import naive_attention

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # read when triton is first imported
triton = pytest.importorskip("triton", reason="triton is not installed (the optional extra `triton`)")
if not torch.cuda.is_available() and not triton.knobs.runtime.interpret:
    pytest.skip("triton was imported before TRITON_INTERPRET=1 was set", allow_module_level=True)


def _kernel():
    from fromscratch.attention.flash_triton import triton_flash_attention  # after TRITON_INTERPRET

    return triton_flash_attention


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# |got - want| <= atol + rtol * |want| against fp64. fp32 multiplies in IEEE fp32 on a GPU too (no TF32);
# fp16 keeps 11 bits of the products' inputs and of what the kernels store, bf16 8 bits.
TOLERANCES = {torch.float32: (2e-5, 1e-5), torch.float16: (5e-3, 5e-3), torch.bfloat16: (4e-2, 4e-2)}


def _check_against_naive(tq, tk, causal, heads, kv_heads, d, *, dtype=torch.float32, block_q=16, block_k=16):
    """The kernel's output and gradients of q, k, v against naive attention in fp64 on the same inputs."""
    g = torch.Generator().manual_seed(16)
    q = torch.randn(2, heads, tq, d, generator=g).to(DEVICE, dtype).requires_grad_()
    k = torch.randn(2, kv_heads, tk, d, generator=g).to(DEVICE, dtype).requires_grad_()
    v = torch.randn(2, kv_heads, tk, d, generator=g).to(DEVICE, dtype).requires_grad_()
    dout = torch.randn(2, heads, tq, d, generator=g).to(DEVICE, dtype)
    out = _kernel()(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    group = heads // kv_heads
    expected = naive_attention(
        q.double(),
        k.double().repeat_interleave(group, 1),
        v.double().repeat_interleave(group, 1),
        causal=causal,
    )
    expected_grads = torch.autograd.grad(expected, (q, k, v), dout.double())
    atol, rtol = TOLERANCES[dtype]
    for got, want in zip((out, *grads), (expected, *expected_grads), strict=True):
        assert got.dtype == dtype
        torch.testing.assert_close(got.double(), want.double(), atol=atol, rtol=rtol)


@pytest.mark.parametrize(
    ("tq", "tk", "causal", "heads", "kv_heads", "d"),
    [
        (40, 40, False, 2, 2, 16),
        (40, 40, True, 4, 2, 16),  # grouped-query heads
        (20, 50, True, 2, 1, 16),  # a short query block after a long cache: aligned to the end
        (50, 20, True, 2, 2, 16),  # more queries than keys: the first 30 see none
        (33, 33, True, 2, 2, 24),  # a head width that is not a power of two
        (30, 50, False, 2, 2, 16),  # full attention, fewer queries than keys
        (50, 30, False, 2, 1, 16),  # full attention, more queries than keys
    ],
)
def test_the_triton_kernel_equals_naive_attention(tq, tk, causal, heads, kv_heads, d):
    _check_against_naive(tq, tk, causal, heads, kv_heads, d)


@pytest.mark.parametrize(("block_q", "block_k"), [(16, 32), (32, 16)])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_query_and_key_blocks_of_different_sizes(block_q, block_k, causal):
    _check_against_naive(45, 61, causal, 4, 2, 16, block_q=block_q, block_k=block_k)


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float16,
        pytest.param(
            torch.bfloat16,
            marks=pytest.mark.skipif(
                not torch.cuda.is_available(),
                reason="Triton 3.9's CPU interpreter computes bf16 tl.dot wrongly (a 16 x 16 product is off "
                "by 1e10); this case runs on CUDA",
            ),
        ),
    ],
    ids=["fp16", "bf16"],
)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_kernel_in_half_precision(dtype, causal):
    _check_against_naive(40, 56, causal, 4, 2, 24, dtype=dtype, block_q=16, block_k=32)


def test_the_kernel_refuses_block_sizes_that_are_not_powers_of_two():
    q = torch.randn(1, 1, 8, 16)
    with pytest.raises(ValueError, match="power of two"):
        _kernel()(q, q, q, block_q=24)
