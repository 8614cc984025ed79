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


@pytest.mark.parametrize(
    ("tq", "tk", "causal", "heads", "kv_heads", "d"),
    [
        (40, 40, False, 2, 2, 16),
        (40, 40, True, 4, 2, 16),  # grouped-query heads
        (20, 50, True, 2, 1, 16),  # a short query block after a long cache: aligned to the end
        (50, 20, True, 2, 2, 16),  # more queries than keys: the first 30 see none
        (33, 33, True, 2, 2, 24),  # a head width that is not a power of two
    ],
)
def test_the_triton_kernel_equals_naive_attention(tq, tk, causal, heads, kv_heads, d):
    g = torch.Generator().manual_seed(16)
    q = torch.randn(2, heads, tq, d, generator=g).to(DEVICE).requires_grad_()
    k = torch.randn(2, kv_heads, tk, d, generator=g).to(DEVICE).requires_grad_()
    v = torch.randn(2, kv_heads, tk, d, generator=g).to(DEVICE).requires_grad_()
    dout = torch.randn(2, heads, tq, d, generator=g).to(DEVICE)
    out = _kernel()(q, k, v, causal=causal, block_q=16, block_k=16)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    group = heads // kv_heads
    expected = naive_attention(
        q.double(),
        k.double().repeat_interleave(group, 1),
        v.double().repeat_interleave(group, 1),
        causal=causal,
    )
    expected_grads = torch.autograd.grad(expected, (q, k, v), dout.double())
    for got, want in zip((out, *grads), (expected, *expected_grads), strict=True):
        torch.testing.assert_close(got.double(), want.double(), atol=2e-5, rtol=1e-5)


def test_the_kernel_refuses_block_sizes_that_are_not_powers_of_two():
    q = torch.randn(1, 1, 8, 16)
    with pytest.raises(ValueError, match="power of two"):
        _kernel()(q, q, q, block_q=24)
