"""Chapter 16's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest
import math

import torch

import fromscratch.chapters.ch16_flash_attention.checks as ch16


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch16).failed == 0


def test_check_merge(capsys):
    def written_out(a, b):
        (m_a, denom_a, acc_a), (m_b, denom_b, acc_b) = a, b
        m = torch.maximum(m_a, m_b)
        wa, wb = torch.exp(m_a - m), torch.exp(m_b - m)
        return m, wa * denom_a + wb * denom_b, wa[:, None] * acc_a + wb[:, None] * acc_b

    def forgets_to_rescale(a, b):
        return torch.maximum(a[0], b[0]), a[1] + b[1], a[2] + b[2]

    assert ch16.check_merge(written_out) is True
    assert "✓" in capsys.readouterr().out
    assert ch16.check_merge(forgets_to_rescale) is False
    assert "✗" in capsys.readouterr().out
    assert ch16.check_merge(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_the_tile_backward_reference_adds_up_to_autograds_gradients():
    g = torch.Generator().manual_seed(0)
    q, k, v, dout = (torch.randn(n, 8, generator=g, dtype=torch.float64) for n in (5, 9, 9, 5))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    out = torch.softmax(leaves[0] @ leaves[1].T / math.sqrt(8), dim=-1) @ leaves[2]
    expected = torch.autograd.grad(out, leaves, dout)
    lse = torch.logsumexp(q @ k.T / math.sqrt(8), dim=-1)
    delta = (dout * out.detach()).sum(-1)
    dq = torch.zeros_like(q)
    dk, dv = [], []
    for keys in (slice(0, 4), slice(4, 9)):  # two tiles of keys
        tq, tk, tv = ch16.tile_backward(q, k[keys], v[keys], dout, lse, delta)
        dq += tq
        dk.append(tk)
        dv.append(tv)
    for got, want in zip((dq, torch.cat(dk), torch.cat(dv)), expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-12, rtol=1e-10)


def test_check_tile_backward(capsys):
    def with_softmax_instead_of_lse(q, k, v, dout, lse, delta):  # the tile's own softmax: wrong weights
        scale = q.shape[-1] ** -0.5
        p = torch.softmax(q @ k.T * scale, dim=-1)
        ds = p * (dout @ v.T - delta[:, None])
        return ds @ k * scale, ds.T @ q * scale, p.T @ dout

    assert ch16.check_tile_backward(ch16.tile_backward) is True
    assert "✓" in capsys.readouterr().out
    assert ch16.check_tile_backward(with_softmax_instead_of_lse) is False
    assert "✗" in capsys.readouterr().out
    assert ch16.check_tile_backward(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_causal_tiles(capsys):
    def counted(t, block):
        n = math.ceil(t / block)
        return sum(1 for i in range(n) for j in range(n) if j <= i)

    assert ch16.check_causal_tiles(counted) is True
    assert "✓" in capsys.readouterr().out
    assert ch16.check_causal_tiles(lambda t, block: math.ceil(t / block) ** 2 // 2) is False  # the diagonal
    assert "✗" in capsys.readouterr().out
    assert ch16.check_causal_tiles(stub) is None
    assert "not attempted yet" in capsys.readouterr().out
