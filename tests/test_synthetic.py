"""Chapter 08's synthetic long-range tasks: correct labels, seeded, balanced, clear errors."""

from __future__ import annotations

import pytest
import torch

from fromscratch.data.synthetic import match_task, recall_task, task_batches

pytestmark = pytest.mark.usefixtures("global_rng_untouched")  # the tasks draw from their own seeded generator


@pytest.mark.parametrize(("t", "d", "start"), [(8, 7, 0), (20, 5, 3), (5, 1, 0)])
def test_match_task_labels_say_whether_the_two_tokens_match(t, d, start):
    task = match_task(101, t, d, vocab_size=5, start=start)
    tokens, labels = task["tokens"], task["labels"]
    assert tokens.shape == task["padding_mask"].shape == (101, t) and task["padding_mask"].all()
    assert torch.equal(labels, (tokens[:, start] == tokens[:, start + d]).long())
    assert tokens.min() >= 1 and tokens.max() <= 4  # never <pad>
    assert sorted(torch.bincount(labels).tolist()) == [50, 51]  # balanced


@pytest.mark.parametrize(
    "make", [lambda seed: match_task(50, 10, 6, seed=seed), lambda seed: recall_task(50, 9, 4, seed=seed)]
)
def test_tasks_are_seeded(make):
    first, again, other = make(0), make(0), make(1)
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert not torch.equal(first["tokens"], other["tokens"])


@pytest.mark.parametrize(("t", "d"), [(9, 2), (9, 8), (15, 6)])
def test_recall_task_label_is_the_value_after_the_queried_key(t, d):
    keys, values = 8, 4
    task = recall_task(202, t, d, keys=keys, values=values)
    tokens, labels = task["tokens"], task["labels"]
    assert tokens.shape == (202, t)
    key_ids, value_ids = tokens[:, 0:-1:2], tokens[:, 1::2]  # (n, m) each
    assert ((key_ids >= 1) & (key_ids <= keys)).all() and (value_ids > keys).all()
    assert all(len(set(row.tolist())) == len(row) for row in key_ids)  # distinct keys in each sequence
    assert torch.equal(tokens[:, -1], tokens[:, t - 1 - d])  # the query repeats the key d positions back
    assert torch.equal(labels, tokens[:, t - d] - 1 - keys)  # ...and asks for the value after it
    counts = torch.bincount(labels, minlength=values)
    assert counts.max() - counts.min() <= 1


def test_bad_distances_say_the_limit():
    with pytest.raises(ValueError, match=r"d must lie in 1\.\.9"):
        match_task(10, 10, 10)
    with pytest.raises(ValueError, match=r"1\.\.6"):
        match_task(10, 10, 7, start=3)
    with pytest.raises(ValueError, match=r"even and lie in 2\.\.8"):
        recall_task(10, 9, 9)
    with pytest.raises(ValueError, match="even"):
        recall_task(10, 9, 3)
    with pytest.raises(ValueError, match="t must be odd"):
        recall_task(10, 10, 4)
    with pytest.raises(ValueError, match="distinct keys"):
        recall_task(10, 21, 4, keys=5)


def test_task_batches_cover_every_sequence_once():
    task = match_task(10, 6, 3)
    batches = task_batches(task, 4, generator=torch.Generator().manual_seed(0))
    assert [len(batch["labels"]) for batch in batches] == [4, 4, 2]
    assert set(batches[0]) == {"tokens", "padding_mask", "labels", "index"}
    index = torch.cat([batch["index"] for batch in batches])
    assert sorted(index.tolist()) == list(range(10))
    for batch in batches:
        assert torch.equal(batch["tokens"], task["tokens"][batch["index"]])
    in_order = task_batches(task, 4, shuffle=False)
    assert torch.equal(torch.cat([batch["labels"] for batch in in_order]), task["labels"])


@pytest.mark.parametrize("d", [1, 5, 11])
def test_match_task_symbols_stand_out_from_the_filler(d):
    task = match_task(200, 12, d, vocab_size=10, symbols=3, seed=d)
    tokens, labels = task["tokens"], task["labels"]
    pair = torch.zeros(12, dtype=torch.bool)
    pair[[0, d]] = True
    assert ((tokens[:, pair] >= 1) & (tokens[:, pair] <= 3)).all()  # the compared pair: symbols only
    assert (tokens[:, ~pair] > 3).all() and (tokens < 10).all()  # everything else: filler
    assert torch.equal(labels, (tokens[:, 0] == tokens[:, d]).long())
    assert abs(int(labels.sum()) - 100) <= 1
    with pytest.raises(ValueError, match="symbols must lie in 2..8"):
        match_task(10, 12, 3, vocab_size=10, symbols=9)
