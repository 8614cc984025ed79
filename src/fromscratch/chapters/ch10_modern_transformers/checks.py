"""Checkers for chapter 10's exercises (a BPE merge step, BERT's masking, sentence embeddings).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs come from private generators with fixed seeds, so checking never changes the
notebook's random numbers.

>>> def my_merge(ids, pair, new_id):
...     out, i = [], 0
...     while i < len(ids):
...         if ids[i : i + 2] == list(pair):
...             out, i = out + [new_id], i + 2
...         else:
...             out, i = out + [ids[i]], i + 1
...     return out
>>> check_merge(my_merge)
✓ my_merge matches the reference on 5 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from fromscratch.chapters import checking
from fromscratch.models.classifier import mean_over_tokens
from fromscratch.tokenizers import merge
from fromscratch.tokenizers.special import IGNORE

__all__ = ["check_mask_tokens", "check_merge", "check_sentence_embedding"]


def check_merge(candidate: Callable[[list[int], tuple[int, int], int], list[int]]) -> bool | None:
    """Exercise 10.1. Expects ``(ids, pair, new_id) -> ids``: every occurrence of ``pair``, scanning left
    to right without overlaps, replaced by ``new_id`` (``fromscratch.tokenizers.merge``)."""
    inputs = [
        ([1, 2, 3, 1, 2, 2], (1, 2), 9),
        ([5, 5, 5, 5, 5], (5, 5), 7),  # overlapping occurrences: left to right
        ([4, 2, 4], (2, 4), 256),  # the pair at the end
        ([], (1, 2), 3),
        ([1, 3, 1, 3], (3, 1), 300),
    ]
    return checking.check_function(candidate, merge, inputs=inputs)


def _reference_sentence_embedding(hidden: Tensor, padding_mask: Tensor) -> Tensor:
    return F.normalize(mean_over_tokens(hidden, padding_mask), dim=-1)  # (b, e)


def check_sentence_embedding(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 10.3. Expects ``(hidden (b, t, e), padding_mask (b, t)) -> (b, e)``: the mean of the
    hidden states of the real tokens only, scaled to length 1 (sentence-transformers' recipe)."""
    generator = torch.Generator().manual_seed(10)
    inputs = []
    for b, t, e, lengths in [(2, 5, 8, [5, 2]), (3, 4, 6, [1, 4, 3]), (1, 3, 4, [3])]:
        hidden = torch.randn(b, t, e, generator=generator) * 3 + 1
        mask = torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]  # (b, t)
        inputs.append((hidden, mask))
    return checking.check_function(candidate, _reference_sentence_embedding, inputs=inputs)


def check_mask_tokens(candidate: Callable[..., tuple[Tensor, Tensor]]) -> bool | None:
    """Exercise 10.2. Expects ``(ids (b, t), mask_id, vocab_size, generator) -> (inputs, labels)``: each
    token is chosen with probability 0.15; a chosen one becomes ``mask_id`` (80 %), a random id in
    ``0..vocab_size-1`` (10 %) or stays (10 %); ``labels`` hold the original id where chosen, -100
    elsewhere. Checked on 200,000 tokens: the proportions within 1 percentage point."""
    name = getattr(candidate, "__name__", "your function")
    generator = torch.Generator().manual_seed(10)
    ids = torch.randint(0, 1000, (200, 1000), generator=generator)
    mask_id = 1000
    try:
        out = candidate(ids.clone(), mask_id, 1000, torch.Generator().manual_seed(11))
    except NotImplementedError:
        return checking.not_attempted(name)
    except Exception as error:  # the learner's code may fail in any way; say how, kindly
        print(f"✗ {name} raised {error.__class__.__name__}: {error}.")
        return False
    if checking.is_stub(out):
        return checking.not_attempted(name)
    if not (isinstance(out, tuple) and len(out) == 2 and all(isinstance(x, Tensor) for x in out)):
        print(f"✗ {name} should return two tensors (inputs, labels), got {type(out).__name__}.")
        return False
    inputs, labels = out
    if inputs.shape != ids.shape or labels.shape != ids.shape:
        print(f"✗ inputs and labels should both have the shape of ids {tuple(ids.shape)}.")
        return False
    chosen = labels != IGNORE
    n = int(chosen.sum())
    problems = []
    if not torch.equal(labels[chosen], ids[chosen]):
        problems.append("labels should hold the original ids at the chosen positions")
    if not torch.equal(inputs[~chosen], ids[~chosen]):
        problems.append("tokens that were not chosen must stay as they are (and get label -100)")
    if abs(n / ids.numel() - 0.15) > 0.01:
        problems.append(f"{n / ids.numel():.1%} of the tokens were chosen, not 15 %")
    if n:
        masked = ((inputs == mask_id) & chosen).sum().item() / n
        kept = ((inputs == ids) & chosen).sum().item() / n
        for what, got, want in (
            ("[MASK]", masked, 0.8),
            ("kept", kept, 0.1),
            ("random", 1 - masked - kept, 0.1),
        ):
            if abs(got - want) > 0.01:
                problems.append(f"{got:.1%} of the chosen tokens are {what}, not {want:.0%}")
    if problems:
        print(f"✗ {name}: " + "; ".join(problems) + ".")
        return False
    print(f"✓ {name}: {n:,} of {ids.numel():,} tokens chosen; 80 / 10 / 10 within a point.")
    return True
