"""Chapter 14's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch
import torch.nn.functional as F

import fromscratch.chapters.ch14_modern_decoders.checks as ch14


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch14).failed == 0


def test_check_rms_norm(capsys):
    def by_hand(x, weight, eps=1e-5):
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight

    def layer_norm(x, weight, eps=1e-5):  # subtracts the mean: not RMSNorm
        return F.layer_norm(x, (x.size(-1),), weight, eps=eps)

    def eps_outside(x, weight, eps=1e-5):  # sqrt(mean) + eps instead of sqrt(mean + eps)
        return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps) * weight

    assert ch14.check_rms_norm(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_rms_norm(layer_norm) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_rms_norm(eps_outside) is False
    assert ch14.check_rms_norm(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_swiglu(capsys):
    def by_hand(x, w_gate, w_up, w_down):
        gate = x @ w_gate.T
        return (gate * torch.sigmoid(gate) * (x @ w_up.T)) @ w_down.T

    def swapped(x, w_gate, w_up, w_down):  # the gate on the wrong projection
        return by_hand(x, w_up, w_gate, w_down)

    def gelu(x, w_gate, w_up, w_down):
        return (F.gelu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T

    assert ch14.check_swiglu(by_hand) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_swiglu(swapped) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_swiglu(gelu) is False
    assert ch14.check_swiglu(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_expand_kv_heads(capsys):
    def by_index(k, groups):
        return k[:, torch.arange(k.size(1) * groups) // groups]

    def tiled(k, groups):  # head order 0, 1, 0, 1 instead of 0, 0, 1, 1
        return k.repeat(1, groups, 1, 1)

    assert ch14.check_expand_kv_heads(by_index) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_expand_kv_heads(tiled) is False
    assert "✗" in capsys.readouterr().out
    assert ch14.check_expand_kv_heads(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def right_layout(header):
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = header
    s, v = dim // heads, abs(vocab)
    return [
        ("token_embedding", (v, dim)),
        ("rms_att", (layers, dim)),
        ("wq", (layers, heads * s, dim)),
        ("wk", (layers, kv_heads * s, dim)),
        ("wv", (layers, kv_heads * s, dim)),
        ("wo", (layers, dim, heads * s)),
        ("rms_ffn", (layers, dim)),
        ("w1", (layers, hidden, dim)),
        ("w2", (layers, dim, hidden)),
        ("w3", (layers, hidden, dim)),
        ("rms_final", (dim,)),
        ("freq_cis", (seq_len, s)),
        *([("wcls", (v, dim))] if vocab < 0 else []),
    ]


def test_check_llama2c_layout(capsys):
    def no_rope_table(header):  # forgets the RoPE table run.c skips
        return [(n, s) for n, s in right_layout(header) if n != "freq_cis"]

    def all_heads(header):  # keys and values with every query head: no grouping
        return right_layout((*header[:4], header[3], *header[5:]))

    def always_tied(header):  # ignores the sign of vocab_size
        return right_layout((*header[:5], abs(header[5]), header[6]))

    size = 28 + 4 * sum(torch.Size(s).numel() for _, s in right_layout(ch14.LAYOUT_HEADERS[0]))
    assert ch14.check_llama2c_layout(right_layout) is True
    assert "✓" in capsys.readouterr().out
    assert ch14.check_llama2c_layout(right_layout, file_bytes=size) is True
    assert "fills its file" in capsys.readouterr().out
    assert ch14.check_llama2c_layout(right_layout, file_bytes=size + 4) is False
    assert "✗" in capsys.readouterr().out
    for wrong in (no_rope_table, all_heads, always_tied):
        assert ch14.check_llama2c_layout(wrong) is False
        assert "✗" in capsys.readouterr().out
    assert ch14.check_llama2c_layout(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_the_layout_fills_the_real_file():
    from fromscratch.data import DataError, fetch
    from fromscratch.data.pretrained import STORIES260K

    try:
        path = fetch(STORIES260K["stories260K.bin"], progressbar=False)
    except DataError:  # neither a mirror, a cached copy nor the network: nothing to compare with
        return
    assert ch14.check_llama2c_layout(right_layout, file_bytes=path.stat().st_size) is True


def test_check_pairs_from_halves(capsys):
    def by_index(x, heads):
        s = x.size(0) // heads
        m = torch.arange(s // 2)
        order = torch.stack([m, m + s // 2], dim=1).flatten()  # 0, s/2, 1, s/2 + 1, ...
        return x[(torch.arange(heads)[:, None] * s + order).flatten()]

    def halves_from_pairs(x, heads):  # the inverse: Hugging Face's order from ours
        s = x.size(0) // heads
        return x.unflatten(0, (heads, s // 2, 2)).transpose(1, 2).reshape(x.shape)

    def whole_vector(x, heads):  # ignores the heads: one reordering over all rows
        return by_index(x, 1)

    assert ch14.check_pairs_from_halves(by_index) is True
    assert "✓" in capsys.readouterr().out
    for wrong in (halves_from_pairs, whole_vector):
        assert ch14.check_pairs_from_halves(wrong) is False
        assert "✗" in capsys.readouterr().out
    assert ch14.check_pairs_from_halves(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch14.check_rms_norm(stub)
    ch14.check_swiglu(stub)
    ch14.check_expand_kv_heads(stub)
    ch14.check_llama2c_layout(stub)
    ch14.check_pairs_from_halves(stub)
