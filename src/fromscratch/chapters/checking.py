"""Checkers a learner calls on their own answer to an exercise (every chapter).

Every exercise in the chapters has four parts:

1. the **statement** (a markdown cell);
2. a **learner cell** with a stub to fill in, e.g. ``def my_attention(x): ...`` or ``my_rmse = ...``;
3. a **check cell** that runs a checker of this package on the learner's answer, e.g.
   ``checks.check_basic_attention(my_attention)``. While the stub is untouched it says
   "not attempted yet" (never an error); then ✓, or ✗ with what differs;
4. the **solution**, in its own cell tagged ``solution`` (collapsed in the book and in Colab, left out
   of slide decks), under other names than the learner's, ending in the same checker, so CI runs it.

A checker returns True (right), False (wrong) or None (not attempted yet) and never raises on a
learner's mistake, so a notebook keeps running. Each chapter's checkers live in
``fromscratch.chapters.checking.chNN``; they are built on the two general ones below.

>>> import torch
>>> def double(x):
...     return 2 * x
>>> check_function(double, lambda x: x + x, inputs=[(torch.ones(3),)])
✓ double matches the reference on 1 test input.
True
>>> def my_double(x):
...     ...  # your code here
>>> check_function(my_double, lambda x: x + x, inputs=[(torch.ones(3),)])
… my_double: not attempted yet.
  Fill in the cell above, run it, then run this cell again.
>>> check_value(0.95, 0.93, atol=0.01, name="test RMSE")
✗ test RMSE is not right yet: expected 0.93, got 0.95.
False
>>> check_value(..., 0.93, name="test RMSE")
… test RMSE: not attempted yet.
  Fill in the cell above, run it, then run this cell again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

__all__ = ["check_function", "check_value", "is_stub", "not_attempted", "refuses"]


def is_stub(answer: Any) -> bool:
    """True for an answer the learner has not given yet: ``...`` (Ellipsis) or ``None``."""
    return answer is Ellipsis or answer is None


def not_attempted(name: str) -> None:
    """Say that the exercise is waiting for the learner; the checkers return this (None)."""
    print(f"… {name}: not attempted yet.\n  Fill in the cell above, run it, then run this cell again.")


def refuses(candidate: Callable, names: set[str]) -> bool:
    """True (and says so) when ``candidate``'s own code calls one of the package's ``names``."""
    code = getattr(candidate, "__code__", None)
    called = sorted(set(code.co_names if code is not None else ()) & names)
    if called:
        print(
            f"✗ {candidate.__name__} calls the package's {called[0]}: write it yourself, from the statement."
        )
    return bool(called)


def _close(got: Any, expected: Any, atol: float, rtol: float) -> tuple[bool, str]:
    """Whether ``got`` equals ``expected`` (tensors and numbers up to the tolerances), and why not."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, f"expected a sequence of {len(expected)} items, got {type(got).__name__}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            ok, why = _close(g, e, atol, rtol)
            if not ok:
                return False, f"item {i}: {why}"
        return True, ""
    if isinstance(got, torch.Tensor) and not isinstance(expected, torch.Tensor):
        if got.numel() != 1:
            return False, f"expected one number, got a tensor of shape {tuple(got.shape)}"
        got = got.item()
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return False, f"expected a tensor, got {type(got).__name__}"
        if got.shape != expected.shape:
            return False, f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}"
        try:
            torch.testing.assert_close(got.to(expected.dtype), expected, atol=atol, rtol=rtol)
        except AssertionError as error:
            return False, str(error).splitlines()[0] + " (values differ)"
        return True, ""
    try:
        ok = abs(float(got) - float(expected)) <= atol + rtol * abs(float(expected))
    except (TypeError, ValueError):
        ok = got == expected
    return ok, "" if ok else f"expected {expected!r}, got {got!r}"


def check_function(
    candidate: Callable,
    reference: Callable,
    inputs: Iterable[Sequence[Any]],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    name: str | None = None,
) -> bool | None:
    """Call ``candidate`` and ``reference`` on each argument tuple in ``inputs``; compare the results.

    Returns True when every result matches (tensors with ``torch.testing.assert_close`` at
    ``atol``/``rtol``), False at the first mismatch or error (saying which input and why), and None
    while ``candidate`` is still a stub (it returns ``...`` or None, or raises NotImplementedError).
    """
    name = name or getattr(candidate, "__name__", "your function")
    inputs = list(inputs)
    if not inputs:
        raise ValueError("check_function needs at least one input tuple to call the functions on.")
    for n, args in enumerate(inputs, start=1):
        try:
            got = candidate(*args)
        except NotImplementedError:
            return not_attempted(name)
        except Exception as error:  # the learner's code may fail in any way; say how, kindly
            print(f"✗ {name} raised {error.__class__.__name__}: {error} (on test input {n}).")
            return False
        if is_stub(got):
            return not_attempted(name)
        ok, why = _close(got, reference(*args), atol, rtol)
        if not ok:
            print(f"✗ {name} differs from the reference on test input {n}: {why}.")
            return False
    print(f"✓ {name} matches the reference on {len(inputs)} test input{'s' if len(inputs) > 1 else ''}.")
    return True


def check_value(
    answer: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 0.0, name: str = "your answer"
) -> bool | None:
    """Compare a number, tensor, string or sequence with the expected one (None while ``answer`` is
    ``...``).
    """
    if is_stub(answer):
        return not_attempted(name)
    ok, why = _close(answer, expected, atol, rtol)
    print(f"✓ {name} is right." if ok else f"✗ {name} is not right yet: {why}.")
    return ok
