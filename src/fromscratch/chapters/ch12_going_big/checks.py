"""Checkers for chapter 12's exercises (going big: memory, accumulation, checkpointing).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs and models come from private generators with fixed seeds, so checking an answer never
changes the notebook's random numbers.

>>> def my_attention_bytes(b, h, t, bytes_per_element):
...     return b * h * t * t * bytes_per_element
>>> check_attention_bytes(my_attention_bytes)
✓ my_attention_bytes matches the reference on 4 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from fromscratch.blocks import TransformerBlock
from fromscratch.chapters import checking
from fromscratch.models import Generator, GeneratorConfig
from fromscratch.training.losses import next_token_loss
from fromscratch.training.memory import (
    T4_BYTES,
    attention_matrix_bytes,
    estimate_memory,
    fits,
    measure_activations,
)

__all__ = [
    "check_accumulated_gradients",
    "check_attention_bytes",
    "check_checkpointed_block",
    "check_largest_batch",
]


def _reference_attention_bytes(b: int, h: int, t: int, bytes_per_element: int) -> int:
    return attention_matrix_bytes(b, t, heads=h, bytes_per_element=bytes_per_element)


def check_attention_bytes(candidate: Callable[[int, int, int, int], int]) -> bool | None:
    """Exercise 12.1. Expects ``(b, h, t, bytes_per_element) -> bytes`` of the attention weights
    ``(b, h, t, t)``; checked on the blog's example (16, 1, 1000, 4) and three others."""
    inputs = [(16, 1, 1000, 4), (16, 4, 1000, 4), (32, 8, 256, 2), (1, 12, 4096, 2)]
    return checking.check_function(candidate, _reference_attention_bytes, inputs=inputs, atol=0, rtol=0)


def _small_generator() -> Generator:
    with torch.random.fork_rng(devices=[]):  # leave the notebook's random state alone
        torch.manual_seed(12)
        return Generator(vocab_size=32, emb=16, heads=2, depth=1, context=8)


def _gradients(fn: Callable, k: int, tokens: Tensor):
    """The flattened gradients ``fn(model, loss_fn, tokens, k)`` leaves in a fresh small model
    (``...``: a stub).
    """
    model = _small_generator()
    result = fn(model, next_token_loss, tokens, k)
    grads = [p.grad for p in model.parameters()]
    if all(g is None for g in grads):
        if checking.is_stub(result):
            return ...  # the untouched stub
        raise ValueError("no parameter has a gradient: call .backward() on each micro-batch's loss")
    if any(g is None for g in grads):
        raise ValueError("some parameters have no gradient")
    return torch.cat([g.flatten() for g in grads])


def _reference_accumulation(model: nn.Module, loss_fn: Callable, tokens: Tensor, k: int) -> None:
    for micro in tokens.chunk(k):  # k micro-batches of b / k sequences
        (loss_fn(model, micro) / k).backward()  # gradients add up in p.grad


def check_accumulated_gradients(candidate: Callable[[nn.Module, Callable, Tensor, int], None]) -> bool | None:
    """Exercise 12.2. Expects ``(model, loss_fn, tokens (b, t + 1), k) -> None`` that leaves in every
    ``p.grad`` the gradient of the mean loss over the whole batch, computed as ``k`` micro-batches of
    ``b / k`` sequences (a backward pass each). Checked against one backward pass on the whole batch."""
    name = getattr(candidate, "__name__", "your function")
    g = torch.Generator().manual_seed(12)
    inputs = [(k, torch.randint(0, 32, (8, 9), generator=g)) for k in (2, 4)]

    def whole(k: int, tokens: Tensor) -> Tensor:
        return _gradients(lambda model, loss_fn, x, _: loss_fn(model, x).backward(), 1, tokens)

    return checking.check_function(
        lambda k, tokens: _gradients(candidate, k, tokens),
        whole,
        inputs=inputs,
        atol=1e-6,
        rtol=1e-4,
        name=name,
    )


def _block() -> TransformerBlock:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(12)
        return TransformerBlock(16, 2, causal=True)


def check_checkpointed_block(candidate: Callable[[nn.Module, Tensor], Tensor]) -> bool | None:
    """Exercise 12.3. Expects ``(block, x (b, t, e)) -> block(x)`` computed with gradient checkpointing:
    the same output and input gradient as ``block(x)``, and autograd keeps at most the input."""
    name = getattr(candidate, "__name__", "your function")
    x = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(12), requires_grad=True)
    block = _block()
    try:
        got = candidate(block, x)
    except NotImplementedError:
        return checking.not_attempted(name)
    except Exception as error:  # the learner's code may fail in any way; say how, kindly
        print(f"✗ {name} raised {error.__class__.__name__}: {error}.")
        return False
    if checking.is_stub(got):
        return checking.not_attempted(name)

    def output_and_gradient(fn: Callable) -> tuple[Tensor, Tensor]:
        xx = x.detach().clone().requires_grad_()
        out = fn(block, xx)
        out.sum().backward()
        return out.detach(), xx.grad

    if not checking.check_function(
        lambda: output_and_gradient(candidate),
        lambda: output_and_gradient(lambda b, v: b(v)),
        inputs=[()],
        name=name,
    ):
        return False
    saved = measure_activations(block, lambda: candidate(block, x).sum()).bytes
    if saved > x.numel() * 4:
        print(
            f"✗ {name} keeps {saved:,} bytes for the backward pass; a checkpointed block keeps only its "
            f"input ({x.numel() * 4:,} bytes): "
            "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)."
        )
        return False
    plain = measure_activations(block, lambda: block(x).sum()).bytes
    print(f"✓ {name} keeps {saved:,} bytes for the backward pass instead of {plain:,}.")
    return True


def largest_batch(config: GeneratorConfig, device_bytes: float, precision: str = "fp32") -> int:
    """The largest batch whose estimated training step fits ``device_bytes`` by the course's one rule
    (``memory.fits``: the step's peak and the CUDA context within 80 % of it), by doubling and halving.
    """
    if not fits(estimate_memory(config, 1, precision=precision), device_bytes):
        return 0
    low, high = 1, 2
    while fits(estimate_memory(config, high, precision=precision), device_bytes):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (
            (middle, high)
            if fits(estimate_memory(config, middle, precision=precision), device_bytes)
            else (low, middle)
        )
    return low


def check_largest_batch(answer: int) -> bool | None:
    """Exercise 12.4. Expects the largest batch of the blog's enwik8 generator (``GeneratorConfig()``,
    context 256, fp32, teaching path off) whose estimated training step fits a T4 with ``fits``."""
    return checking.check_value(
        answer, largest_batch(GeneratorConfig(), T4_BYTES), atol=0, name="the largest batch"
    )
