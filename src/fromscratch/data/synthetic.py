"""Synthetic long-range tasks whose difficulty is a distance ``d`` you choose (chapter 08).

Each task answers a question about two tokens ``d`` positions apart, so a model can only solve it
if information travels that far: a convolution stack must reach ``d``, a recurrent network must carry
a token through ``d`` steps, attention joins any two positions in one step.

- :func:`match_task`: is the token at ``start`` the same as the token ``d`` positions later?
  (``start=0, d=t-1``: is the first token equal to the last?) Two classes, half of each.
- :func:`recall_task`: associative recall. ``m`` (key, value) pairs, then one key again: which value
  followed it? ``d`` is the distance from that key back to its first appearance.

A task is one dict of tensors for ``n`` sequences, like an IMDb batch: ``tokens (n, t)`` int64,
``padding_mask (n, t)`` bool (all True: every sequence has length ``t``) and ``labels (n,)``.
:func:`task_batches` cuts it into shuffled batches, and :class:`MatchData` fixes which sequences each
distance gets and in which order every model sees them. Token id 0 is ``<pad>`` (``data.text.PAD``) and never
appears. The same ``seed`` gives the same data; labels are balanced (class counts differ by at most one).

Shape legend: ``n`` sequences, ``t`` length, ``b`` batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

Task = dict[str, Tensor]  # tokens (n, t), padding_mask (n, t), labels (n,)


def _balanced_labels(n: int, classes: int, generator: torch.Generator) -> Tensor:
    """``n`` labels in ``0..classes-1``, each class ``n // classes`` or one more times, shuffled: ``(n,)``."""
    return (torch.arange(n) % classes)[torch.randperm(n, generator=generator)]  # (n,)


def _task(tokens: Tensor, labels: Tensor) -> dict[str, Tensor]:
    return {"tokens": tokens, "padding_mask": torch.ones_like(tokens, dtype=torch.bool), "labels": labels}


def match_task(
    n: int, t: int, d: int, *, vocab_size: int = 16, start: int = 0, symbols: int | None = None, seed: int = 0
) -> dict[str, Tensor]:
    """``n`` random sequences of ``t`` tokens; label 1 when ``tokens[start] == tokens[start + d]``, else 0.

    Tokens are drawn uniformly from ``1..vocab_size-1`` (0 is ``<pad>``); exactly ``n // 2`` sequences
    (or one more) are negatives, whose token at ``start + d`` is another id. ``symbols``: draw the two
    compared tokens from ids ``1..symbols`` and every other token from ``symbols+1..vocab_size-1``,
    so the pair stands out from the filler and only the distance between them makes the task hard
    (None: every token from the whole vocabulary). Returns ``tokens (n, t)``, ``padding_mask (n, t)``
    and ``labels (n,)``. A model needs ``num_classes=2`` and ``vocab_size``.
    """
    if not 0 <= start < t:
        raise ValueError(f"start must lie in 0..{t - 1} for sequences of t={t} tokens; got {start}.")
    if not 1 <= d <= t - 1 - start:
        raise ValueError(
            f"d must lie in 1..{t - 1 - start}: with t={t} and start={start} the last position is "
            f"{t - 1}; got d={d}. Use t > start + d."
        )
    if vocab_size < 3:
        raise ValueError(f"vocab_size must be at least 3 (<pad> and two different tokens); got {vocab_size}.")
    if symbols is not None and not 2 <= symbols <= vocab_size - 2:
        raise ValueError(
            f"symbols must lie in 2..{vocab_size - 2} (two symbols to compare, one filler id); got {symbols}."
        )
    generator = torch.Generator().manual_seed(seed)
    pool = vocab_size - 1 if symbols is None else symbols  # ids 1..pool for the compared pair
    if symbols is None:
        tokens = torch.randint(1, vocab_size, (n, t), generator=generator)  # (n, t)
    else:
        tokens = torch.randint(symbols + 1, vocab_size, (n, t), generator=generator)  # (n, t): filler only
        tokens[:, start] = torch.randint(1, symbols + 1, (n,), generator=generator)
    labels = _balanced_labels(n, 2, generator)  # (n,)
    first = tokens[:, start]  # (n,)
    shift = torch.randint(1, pool, (n,), generator=generator)  # (n,): a nonzero step among the pool's ids
    other = (first - 1 + shift) % pool + 1  # (n,): an id in 1..pool other than `first`
    tokens[:, start + d] = torch.where(labels == 1, first, other)
    return _task(tokens, labels)


def recall_task(
    n: int, t: int, d: int, *, keys: int = 16, values: int = 8, seed: int = 0
) -> dict[str, Tensor]:
    """Associative recall: ``m = (t - 1) // 2`` pairs ``key value``, then a query key; label: its value.

    Layout ``k_0 v_0 k_1 v_1 ... k_{m-1} v_{m-1} q`` (``t = 2m + 1``, so ``t`` is odd). The keys of a
    sequence are distinct; the query ``q`` (position ``t - 1``) repeats the key at position
    ``t - 1 - d``, so ``d`` is even, from 2 (the last pair) to ``t - 1`` (the first). Key ``i`` has
    id ``1 + i`` (``i < keys``), value ``j`` has id ``1 + keys + j`` (``j < values``): a model needs
    ``vocab_size = 1 + keys + values`` and ``num_classes = values``. The label is the value's index
    ``j``, balanced over the ``values`` classes. Returns ``tokens (n, t)``, ``padding_mask (n, t)``,
    ``labels (n,)``.
    """
    if t < 3 or t % 2 == 0:
        raise ValueError(
            f"t must be odd and at least 3 (m key-value pairs and one query: t = 2m + 1); got {t}."
        )
    m = (t - 1) // 2
    if d % 2 or not 2 <= d <= t - 1:
        raise ValueError(
            f"d must be even and lie in 2..{t - 1} (the query at position {t - 1} looks back to a key at an "
            f"even position); got d={d}. Use t > d."
        )
    if keys < m or values < 1:
        raise ValueError(
            f"{m} pairs need at least {m} distinct keys and one value; got keys={keys}, values={values}."
        )
    generator = torch.Generator().manual_seed(seed)
    key_ids = torch.rand(n, keys, generator=generator).argsort(dim=1)[:, :m] + 1  # (n, m): distinct per row
    value_ids = torch.randint(0, values, (n, m), generator=generator) + 1 + keys  # (n, m)
    labels = _balanced_labels(n, values, generator)  # (n,)
    pair = (t - 1 - d) // 2  # the pair the query asks about
    value_ids[:, pair] = labels + 1 + keys
    pairs = torch.stack([key_ids, value_ids], dim=2).view(n, 2 * m)  # (n, m, 2) -> (n, t - 1)
    tokens = torch.cat([pairs, key_ids[:, pair, None]], dim=1)  # (n, t)
    return _task(tokens, labels)


def task_batches(
    task: dict[str, Tensor],
    batch_size: int,
    *,
    shuffle: bool = True,
    generator: torch.Generator | None = None,
) -> list[dict[str, Tensor]]:
    """The ``n`` sequences of ``task`` in batches of ``batch_size`` (the last may be smaller).

    Each batch is a dict like an IMDb batch: ``tokens (b, t)``, ``padding_mask (b, t)``,
    ``labels (b,)`` and ``index (b,)`` (rows of ``task``). shuffle=True draws the order from
    ``generator`` (default: PyTorch's global one); shuffle=False keeps the order of ``task``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive; got {batch_size}.")
    n = len(task["labels"])
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)  # (n,)
    return [
        {key: value[index] for key, value in task.items()} | {"index": index}
        for index in order.split(batch_size)
    ]


@dataclass(frozen=True)
class MatchData:
    """The match task's data at one distance ``d``: the same sequences, in the same order, for every model."""

    length: int  # t: tokens per sequence
    vocab: int  # token ids 1..vocab-1 (0 is <pad>)
    symbols: int | None  # the compared pair from ids 1..symbols, the filler from the rest (None: all alike)
    train_size: int  # training sequences per distance (one fixed, seeded set)
    test_size: int  # held-out sequences per distance, scored for accuracy
    batch: int  # sequences per step

    def split(self, d: int) -> tuple[Task, Task]:
        """``(training, test)`` sequences for distance ``d``, seeded by ``d`` (the test set by 10,000 + d)."""
        sizes = {"vocab_size": self.vocab, "symbols": self.symbols}
        training = match_task(self.train_size, self.length, d, **sizes, seed=d)
        return training, match_task(self.test_size, self.length, d, **sizes, seed=10_000 + d)

    def batches(self, training: Task) -> Callable[[], Iterator[Task]]:
        """Shuffled batches of ``training`` for :func:`~fromscratch.training.train`: a new order each
        epoch, drawn from one generator seeded 0, so every model gets the same sequence of batches."""
        order = torch.Generator().manual_seed(0)
        return lambda: iter(task_batches(training, self.batch, generator=order))


__all__ = ["MatchData", "Task", "match_task", "recall_task", "task_batches"]
