"""Masked-LM baselines: the entropy of the masked tokens, counted, and the copy-aware floor."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fromscratch.data.masking import mask_tokens
from fromscratch.data.pretraining import MaskedBatches
from fromscratch.metrics.unigram import copy_aware_floor, entropy, masked_token_counts, unigram_mlm_loss
from fromscratch.tokenizers.special import IGNORE

_ = IGNORE


def test_a_hand_example():
    # masked labels 5, 5, 5, 7: p(5) = 3/4, p(7) = 1/4
    batches = [
        {"labels": torch.tensor([[5, _, 5], [_, _, _]])},
        {"labels": torch.tensor([[_, 7, 5]])},
    ]
    assert masked_token_counts(batches, 8).tolist() == [0, 0, 0, 0, 0, 3, 0, 1]
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))  # 0.5623 nats
    assert unigram_mlm_loss(batches, 8) == pytest.approx(expected)
    # it is the cross-entropy of always predicting those frequencies, and no fixed guess does better
    labels = torch.tensor([5, 5, 5, 7])
    frequencies = torch.tensor([1e-9] * 5 + [0.75, 1e-9, 0.25]).log().expand(4, 8)
    assert F.cross_entropy(frequencies, labels).item() == pytest.approx(expected, abs=1e-6)
    uniform = torch.zeros(4, 8)
    assert F.cross_entropy(uniform, labels).item() > expected


def test_one_token_costs_nothing_and_no_mask_is_an_error():
    assert unigram_mlm_loss([{"labels": torch.tensor([[3, 3, _]])}], 4) == 0.0
    with pytest.raises(ValueError, match="No masked positions"):
        unigram_mlm_loss([{"labels": torch.full((2, 3), IGNORE)}], 4)
    with pytest.raises(ValueError, match="vocab_size"):
        unigram_mlm_loss([{"labels": torch.tensor([[9]])}], 4)


def test_masked_batches_give_the_word_frequencies():
    # 3,000 copies of "4 4 4 5": the masking chooses real tokens uniformly, so p(4) ~ 3/4
    seqs = [torch.tensor([4, 4, 4, 5])] * 3_000
    batches = MaskedBatches(seqs, 100, mask_id=6, vocab_size=6, context=8, seed=0)
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert unigram_mlm_loss(batches, 7) == pytest.approx(expected, abs=0.02)
    assert masked_token_counts(batches, 7)[2] == 0  # <cls> is never masked


def test_mask_id_counts_only_the_positions_that_show_mask():
    batches = [{"tokens": torch.tensor([[9, 5, 9]]), "labels": torch.tensor([[5, 5, 7]])}]  # [MASK] = 9
    assert masked_token_counts(batches, 8).tolist() == [0, 0, 0, 0, 0, 2, 0, 1]
    assert masked_token_counts(batches, 8, mask_id=9).tolist() == [0, 0, 0, 0, 0, 1, 0, 1]
    assert unigram_mlm_loss(batches, 8, mask_id=9) == pytest.approx(math.log(2))


def test_copy_aware_floor_is_the_best_loss_from_the_own_token_alone():
    # Monte Carlo: corrupt many draws as BERT does, then score the best predictor that sees only the
    # input token (its empirical conditional distribution); the formula must agree
    p = torch.tensor([0.5, 0.2, 0.15, 0.1, 0.05, 0.0])
    counts = (p * 1e6).long()
    originals = torch.multinomial(p, 400_000, replacement=True, generator=torch.Generator().manual_seed(0))
    inputs, labels = mask_tokens(
        originals[None], mask_id=6, vocab_size=6, rate=0.999999, generator=torch.Generator().manual_seed(1)
    )
    chosen = labels[0] != IGNORE
    joint = torch.zeros(7, 6)
    joint.index_put_((inputs[0][chosen], labels[0][chosen]), torch.ones(int(chosen.sum())), accumulate=True)
    best = (
        -(joint * (joint / joint.sum(1, keepdim=True).clamp(min=1)).clamp(min=1e-30).log()).sum()
        / joint.sum()
    )
    floor = copy_aware_floor(counts, random_ids=6)
    assert floor == pytest.approx(best.item(), abs=0.005)
    assert floor < entropy(counts)  # copying the visible token needs no context
    # with nothing kept and nothing swapped the floor is the entropy; with no [MASK] at all it is lower still
    assert copy_aware_floor(counts, random_ids=6, masked=1.0, random=0.0) == pytest.approx(entropy(counts))
    assert copy_aware_floor(counts, random_ids=6, masked=0.0, random=0.5) < floor
    with pytest.raises(ValueError, match="random_ids"):
        copy_aware_floor(counts, random_ids=3)
    with pytest.raises(ValueError, match="shares"):
        copy_aware_floor(counts, random_ids=6, masked=0.9, random=0.2)
