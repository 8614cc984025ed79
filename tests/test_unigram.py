"""The unigram baseline of masked-LM pretraining: the entropy of the masked tokens, counted."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fromscratch.data.pretraining import MaskedBatches
from fromscratch.metrics.unigram import masked_token_counts, unigram_mlm_loss
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
    batches = MaskedBatches(seqs, 100, mask_id=6, vocab_size=6, max_len=8, seed=0)
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert unigram_mlm_loss(batches, 7) == pytest.approx(expected, abs=0.02)
    assert masked_token_counts(batches, 7)[2] == 0  # <cls> is never masked
