"""Chapter 12's checkers: right answers pass, wrong ones fail, untouched stubs are "not attempted"."""

from __future__ import annotations

import torch
import torch.utils.checkpoint

from fromscratch.chapters.ch12_going_big import checks as ch12
from fromscratch.models import GeneratorConfig
from fromscratch.training.memory import T4_BYTES, estimate_memory, fits


def test_attention_bytes(capsys):
    def right(b, h, t, n):
        return b * h * t * t * n

    def wrong(b, h, t, n):
        return b * t * t * n  # forgets the heads

    def stub(b, h, t, n): ...

    assert ch12.check_attention_bytes(right) is True
    assert ch12.check_attention_bytes(wrong) is False
    assert ch12.check_attention_bytes(stub) is None
    assert "not attempted" in capsys.readouterr().out


def test_accumulated_gradients(capsys):
    def right(model, loss_fn, tokens, k):
        for micro in tokens.chunk(k):
            (loss_fn(model, micro) / k).backward()

    def wrong(model, loss_fn, tokens, k):
        for micro in tokens.chunk(k):
            loss_fn(model, micro).backward()  # forgets to divide by k: k times too large

    def stub(model, loss_fn, tokens, k): ...

    assert ch12.check_accumulated_gradients(right) is True
    assert ch12.check_accumulated_gradients(wrong) is False
    assert ch12.check_accumulated_gradients(stub) is None
    assert "not attempted" in capsys.readouterr().out


def test_checkpointed_block(capsys):
    def right(block, x):
        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)

    def plain(block, x):
        return block(x)  # right values, but keeps everything

    def wrong(block, x):
        return torch.utils.checkpoint.checkpoint(block, 2 * x, use_reentrant=False)

    def stub(block, x): ...

    assert ch12.check_checkpointed_block(right) is True
    assert ch12.check_checkpointed_block(plain) is False
    assert ch12.check_checkpointed_block(wrong) is False
    assert ch12.check_checkpointed_block(stub) is None


def test_largest_batch():
    best = ch12.largest_batch(GeneratorConfig(), T4_BYTES)
    assert best > 1
    assert fits(estimate_memory(GeneratorConfig(), best), T4_BYTES)
    assert not fits(estimate_memory(GeneratorConfig(), best + 1), T4_BYTES)
    assert ch12.check_largest_batch(best) is True
    assert ch12.check_largest_batch(best + 1) is False
    assert ch12.check_largest_batch(...) is None
