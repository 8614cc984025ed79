"""Checkers for chapter 15's exercises (a Q4_1 block, a sequence's log-probability, contextual calibration,
the DPO loss).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking an answer never changes
the notebook's random numbers. An answer that only calls the package's own function is turned down:
the exercise is to write it.

>>> import torch
>>> def my_logprob(logits, labels):
...     scored = labels != -100
...     logp = torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp(min=0)[..., None])[..., 0]
...     return (logp * scored).sum(-1)
>>> check_sequence_logprob(my_logprob)
✓ my_logprob matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.interop.quant import quantize_q4_1
from fromscratch.tokenizers.special import IGNORE
from fromscratch.training.dpo import dpo_loss, sequence_logprobs

__all__ = ["check_calibrate", "check_dpo_loss", "check_quantize_q4_1", "check_sequence_logprob"]


def _calls(candidate: Callable, names: set[str]) -> str | None:
    """The package function among ``names`` that ``candidate``'s own code calls, if any."""
    code = getattr(candidate, "__code__", None)
    used = set(code.co_names) if code is not None else set()
    found = sorted(used & names)
    return found[0] if found else None


def _refuse(candidate: Callable, names: set[str]) -> bool:
    called = _calls(candidate, names)
    if called:
        print(f"✗ {candidate.__name__} calls the package's {called}: write it yourself, from the statement.")
    return bool(called)


def check_quantize_q4_1(candidate: Callable[[Tensor], Tensor]) -> bool | None:
    """Exercise 15.1. Expects a function ``x (32,) float32 -> (20,) uint8``: one Q4_1 block, byte for byte
    as llama.cpp writes it (``d = (max - min) / 15`` and ``m = min`` as little-endian float16, then
    ``q = round((x - m) / d)`` with the float32 ``d``, numbers ``j`` and ``j + 16`` in the low and high
    nibble of byte ``j``)."""
    if not checking.is_stub(candidate) and _refuse(candidate, {"quantize_q4_1", "quantize"}):
        return False
    generator = torch.Generator().manual_seed(151)
    inputs = [
        (torch.randn(32, generator=generator),),
        (torch.rand(32, generator=generator) * 5 + 2,),
        (torch.randn(32, generator=generator) * 0.02,),  # a weight-sized block
    ]
    return checking.check_function(candidate, quantize_q4_1, inputs=inputs, atol=0, rtol=0)


def check_sequence_logprob(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 15.2. Expects a function ``(logits (b, t, V), labels (b, t)) -> (b,)``: per row, the sum of
    ``log softmax(logits[i])[labels[i]]`` over the positions whose label is not ``IGNORE`` (-100)."""
    if not checking.is_stub(candidate) and _refuse(candidate, {"sequence_logprobs", "answer_logprobs"}):
        return False
    generator = torch.Generator().manual_seed(152)

    def case(b: int, t: int, vocab: int) -> tuple[Tensor, Tensor]:
        labels = torch.randint(vocab, (b, t), generator=generator)
        labels[torch.rand(b, t, generator=generator) < 0.5] = IGNORE
        return torch.randn(b, t, vocab, generator=generator) * 3, labels

    inputs = [case(2, 5, 7), case(3, 8, 11), case(1, 4, 5)]
    return checking.check_function(candidate, sequence_logprobs, inputs=inputs, atol=1e-5)


def _calibrate(logits: Tensor, content_free: Tensor) -> Tensor:
    from fromscratch.chapters.ch15_assistant.assistant_imdb import calibrate

    return calibrate(logits, content_free).argmax(-1)


def check_calibrate(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 15.3. Expects a function ``(logits (n, 2), content_free (m, 2)) -> (n,)``: the answers after
    contextual calibration: each row's two probabilities divided by the mean probabilities of the
    content-free rows, the larger one's index."""
    if not checking.is_stub(candidate) and _refuse(candidate, {"calibrate"}):
        return False
    generator = torch.Generator().manual_seed(153)
    inputs = [
        (
            torch.randn(12, 2, generator=generator),
            torch.randn(3, 2, generator=generator) + torch.tensor([0, 2.0]),
        ),
        (torch.randn(20, 2, generator=generator) * 2, torch.randn(1, 2, generator=generator)),
        # content-free rows that disagree: the mean of their probabilities is not that of their logits
        (
            torch.randn(16, 2, generator=generator) * 0.5 + torch.tensor([1.0, 0.0]),
            torch.tensor([[4.0, 0], [0, 1]]),
        ),
    ]
    return checking.check_function(candidate, _calibrate, inputs=inputs)


def _dpo_loss(pc: Tensor, pr: Tensor, rc: Tensor, rr: Tensor, beta: float) -> Tensor:
    return dpo_loss(pc, pr, rc, rr, beta=beta)


def check_dpo_loss(candidate: Callable[..., Tensor]) -> bool | None:
    """Exercise 15.4. Expects a function ``(policy_chosen, policy_rejected, reference_chosen,
    reference_rejected, beta) -> scalar``, each of the four ``(n,)`` sequence log-probabilities: the mean
    over the pairs of ``-log σ(β [(π_w - ref_w) - (π_l - ref_l)])``."""
    if not checking.is_stub(candidate) and _refuse(candidate, {"dpo_loss", "preference_loss"}):
        return False
    generator = torch.Generator().manual_seed(154)

    def case(n: int, beta: float, scale: float) -> tuple:
        return (*(torch.randn(n, generator=generator) * scale - 20 for _ in range(4)), beta)

    # margins of tens of nats; the last case's β · margin is ±110 and more: log σ written out overflows
    far = (torch.tensor([-5.0, -80.0]), torch.tensor([-60.0, -2.0]), torch.full((2,), -30.0))
    inputs = [case(5, 0.1, 10.0), case(8, 0.5, 3.0), (*far, far[2], 2.0)]
    return checking.check_function(candidate, _dpo_loss, inputs=inputs, atol=1e-5)
