"""Checkers a learner calls on their own answer to an exercise (every chapter).

Each check prints friendly feedback and returns True or False; it never raises on a wrong answer,
so a notebook keeps running. Chapters compare against the package's own implementation:

    exercises.check_function(my_attention, fromscratch.attention.basic_self_attention,
                             inputs=[(torch.randn(2, 5, 4),)])
    exercises.check_value(my_rmse, 0.93, tol=0.01, name="test RMSE")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch


def _close(got: Any, expected: Any, atol: float, rtol: float) -> tuple[bool, str]:
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, f"expected a sequence of {len(expected)} items, got {type(got).__name__}"
        for i, (g, e) in enumerate(zip(got, expected)):
            ok, why = _close(g, e, atol, rtol)
            if not ok:
                return False, f"item {i}: {why}"
        return True, ""
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


def check_function(candidate: Callable, reference: Callable, inputs: Iterable[Sequence[Any]], *,
                   atol: float = 1e-5, rtol: float = 1e-4, name: str | None = None) -> bool:
    """Call ``candidate`` and ``reference`` on each argument tuple in ``inputs``; compare the results."""
    name = name or getattr(candidate, "__name__", "your function")
    for n, args in enumerate(inputs, start=1):
        try:
            got = candidate(*args)
        except Exception as error:  # the learner's code may fail in any way; say how, kindly
            print(f"✗ {name} raised {error.__class__.__name__}: {error} (on test input {n}).")
            return False
        ok, why = _close(got, reference(*args), atol, rtol)
        if not ok:
            print(f"✗ {name} differs from the reference on test input {n}: {why}.")
            return False
    print(f"✓ {name} matches the reference on {n} test input{'s' if n > 1 else ''}.")
    return True


def check_value(answer: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 0.0, name: str = "your answer") -> bool:
    """Compare a number, tensor or sequence with the expected one."""
    ok, why = _close(answer, expected, atol, rtol)
    print(f"✓ {name} is right." if ok else f"✗ {name} is not right yet: {why}.")
    return ok
