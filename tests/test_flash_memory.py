"""Memory, measured (chapter 16, marked ``memory``; a few seconds): a forward + backward pass of
``flash_attention`` at t = 8192 grows memory by megabytes, where naive attention needs about half a
gigabyte (three ``t x t`` fp32 tensors at once).

The meter is ``pipeline.peak_bytes``: on the CPU, every allocation and free the PyTorch profiler records
while the pass runs, summed in order. The first test checks that the meter sees the ``t x t`` tensors of
naive attention, so that a small number for ours is a measurement, not a blind spot.
"""

from __future__ import annotations

import functools

import pytest

from fromscratch.attention.flash import flash_attention
from fromscratch.chapters.ch16_flash_attention.pipeline import memory_rows, naive_attention

pytestmark = pytest.mark.memory
MiB = 2**20


def test_the_meter_sees_naive_attentions_t_by_t_tensors():
    t = 2048
    (peak,) = memory_rows({"naive": naive_attention}, [t], 64)["naive"]
    square = t * t * 4  # one (t, t) fp32 tensor: 16 MiB
    assert 2.5 * square < peak < 4 * square  # scores, weights and their gradients overlap: about 3


def test_flash_attention_at_t_8192_grows_memory_by_megabytes_not_half_a_gigabyte():
    t, d = 8192, 64
    flash = functools.partial(flash_attention, block_q=512, block_k=512)
    (peak,) = memory_rows({"flash": flash}, [t], d)["flash"]
    naive_estimate = 3 * t * t * 4  # 768 MiB: the three (t, t) tensors measured above, at t = 8192
    gradients = 3 * t * d * 4  # dq, dk, dv: 6 MiB that any attention's backward allocates
    assert gradients < peak < 32 * MiB, f"peak {peak / MiB:.1f} MiB"
    assert peak < naive_estimate / 20
