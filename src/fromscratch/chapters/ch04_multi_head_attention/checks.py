"""Checkers for chapter 04's exercises (multi-head attention).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
The expected values come from the package's ``SelfAttention`` and ``count_parameters``. Test
modules and inputs are drawn from private seeds, so checking an answer never changes the
notebook's random numbers.

>>> check_wide_parameters(524_416)
✓ the parameter count is right.
True
>>> check_paper_shapes({"W_Q": ..., "W_K": ..., "W_V": ..., "W_O": ..., "parameters": ...})
… the paper's shapes: not attempted yet.
  Fill in the cell above, run it, then run this cell again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from fromscratch.attention import KINDS, SelfAttention, WideSelfAttention
from fromscratch.chapters import checking
from fromscratch.utils import count_parameters

__all__ = ["check_multi_head", "check_wide_parameters", "check_paper_shapes", "check_standard_copy"]

PAPER_KEYS = ("W_Q", "W_K", "W_V", "W_O", "parameters")


def _module(seed: int, emb: int, heads: int, kind: str = "standard") -> SelfAttention:
    """A ``SelfAttention`` with weights drawn from ``seed``, leaving the global random state alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return KINDS[kind](emb, heads)


def _inputs(seed: int, *shapes: tuple[int, int, int]) -> list[Tensor]:
    """Random batches ``(b, t, e)`` of the given shapes, the same at every call."""
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=generator) for shape in shapes]


def check_multi_head(candidate: Callable[[SelfAttention, Tensor], Any]) -> bool | None:
    """Exercise 4.1. Expects ``my_multi_head(attention, x)``: the output ``(b, t, e)`` of a standard
    ``SelfAttention`` ``attention`` on ``x (b, t, e)``, computed from its submodules
    (``to_queries``, ``to_keys``, ``to_values``, ``unify_heads``); checked on two modules."""
    x1, x2, x3 = _inputs(1, (2, 5, 12), (1, 1, 12), (3, 4, 8))
    small, other = _module(1, 12, 3), _module(2, 8, 4)
    inputs = [(small, x1), (small, x2), (other, x3)]
    with torch.no_grad():
        return checking.check_function(candidate, lambda attention, x: attention(x), inputs=inputs)


def check_wide_parameters(answer: Any) -> bool | None:
    """Exercise 4.2. Expects the number of parameters (an int) of a wide ``SelfAttention`` with
    ``e = 128`` and ``h = 8``, the blog's IMDb classifier, ``unify_heads``' bias included."""
    with torch.device("meta"):  # shapes only: no memory, no random numbers
        wide = WideSelfAttention(128, 8)
    return checking.check_value(answer, count_parameters(wide), atol=0, name="the parameter count")


def _paper_answer() -> dict[str, Any]:
    """The paper's shapes (rows, columns as in ``x @ W``) and weight count, read off our module."""
    with torch.device("meta"):
        paper = SelfAttention(512, 8)  # d_model = 512, 8 standard heads of d_k = d_v = 64
    s = paper.emb // paper.heads  # 64: the width of one head
    shapes = {
        f"W_{role}": tuple(layer.weight[:s].T.shape)  # head 0's rows of our (out, in) weight
        for role, layer in zip("QKV", (paper.to_queries, paper.to_keys, paper.to_values), strict=True)
    }
    weights = sum(p.numel() for name, p in paper.named_parameters() if name.endswith("weight"))
    return {**shapes, "W_O": tuple(paper.unify_heads.weight.T.shape), "parameters": weights}


def check_paper_shapes(answer: Any) -> bool | None:
    """Exercise 4.3. Expects a dict with the shapes, as ``(rows, columns)`` in the paper's ``x W``
    orientation, of one head's ``W_Q``, ``W_K``, ``W_V`` and of ``W_O`` for ``d_model = 512`` and
    8 heads of 64, and ``"parameters"``: the number of weights of the whole layer (no biases)."""
    name = "the paper's shapes"
    if checking.is_stub(answer):
        return checking.not_attempted(name)
    if not isinstance(answer, dict) or set(answer) != set(PAPER_KEYS):
        print(f"✗ {name}: give a dict with exactly the keys {', '.join(PAPER_KEYS)}.")
        return False
    missing = [key for key in PAPER_KEYS if checking.is_stub(answer[key])]
    if len(missing) == len(PAPER_KEYS):
        return checking.not_attempted(name)
    if missing:
        return checking.not_attempted(f"{name} ({', '.join(missing)} still to fill in)")
    expected = _paper_answer()
    for key in PAPER_KEYS[:4]:
        try:
            got = tuple(int(n) for n in answer[key])
        except (TypeError, ValueError):
            print(f"✗ {name}: {key} must be a shape (rows, columns), got {answer[key]!r}.")
            return False
        if got == expected[key][::-1] and got != expected[key]:
            print(
                f"✗ {name}: {key} = {got} is (out, in), nn.Linear's layout. The paper multiplies "
                f"x @ {key}, with one row per input feature: give (rows, columns) of that matrix."
            )
            return False
        if got != expected[key]:
            print(f"✗ {name}: {key} is not right yet: got {got}.")
            return False
    count = answer["parameters"]
    if not isinstance(count, (int, float)) or count != expected["parameters"]:
        print(f"✗ {name}: the shapes are right, the number of weights is not yet: got {count!r}.")
        return False
    print(f"✓ {name} are right: four shapes and {expected['parameters']:,} weights.")
    return True


def check_standard_copy(candidate: Callable[[SelfAttention], Any]) -> bool | None:
    """Exercise 4.4. Expects ``my_standard_copy(narrow)``: a new standard ``SelfAttention`` that
    computes exactly what the given narrow one computes (block-diagonal copies of its weights)."""
    name = getattr(candidate, "__name__", "your function")
    narrow = _module(4, 8, 2, "narrow")
    try:
        copy = candidate(narrow)
    except NotImplementedError:
        return checking.not_attempted(name)
    except Exception as error:  # the learner's code may fail in any way; say how, kindly
        print(f"✗ {name} raised {error.__class__.__name__}: {error}.")
        return False
    if checking.is_stub(copy):
        return checking.not_attempted(name)
    if type(copy) is not SelfAttention:
        print(f"✗ {name} must return a new SelfAttention (standard heads), got {copy!r}.")
        return False
    with torch.no_grad():
        return checking.check_function(
            copy, narrow, inputs=[(x,) for x in _inputs(4, (2, 5, 8), (1, 3, 8))], name=name
        )
