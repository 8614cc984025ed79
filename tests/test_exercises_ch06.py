"""Chapter 06's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch
import torch.nn.functional as F

import fromscratch.chapters.ch06_imdb_classifier.checks as ch06
from fromscratch.metrics import accuracy


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch06).failed == 0


def test_check_mean_pool(capsys):
    def loops(x, padding_mask):
        return torch.stack([x[row][padding_mask[row]].mean(dim=0) for row in range(len(x))])

    assert ch06.check_mean_pool(loops) is True
    assert "✓" in capsys.readouterr().out
    assert ch06.check_mean_pool(lambda x, padding_mask: x.mean(dim=1)) is False
    assert "✗" in capsys.readouterr().out  # counts the padding in the mean

    def divides_by_t(x, padding_mask):
        return (x * padding_mask[..., None]).sum(dim=1) / x.shape[1]

    assert ch06.check_mean_pool(divides_by_t) is False
    assert "✗ divides_by_t differs" in capsys.readouterr().out
    assert ch06.check_mean_pool(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_accuracy_by_stars(capsys):
    def by_stars(predictions, ratings, stars):
        chosen = torch.isin(ratings, torch.tensor(stars))
        return accuracy(predictions.probs[chosen], predictions.labels[chosen])

    assert ch06.check_accuracy_by_stars(by_stars) is True
    assert "✓ by_stars matches the reference on 3 test inputs" in capsys.readouterr().out

    def everything(predictions, ratings, stars):  # ignores the ratings
        return predictions.accuracy

    def first_star_only(predictions, ratings, stars):
        chosen = ratings == stars[0]
        return accuracy(predictions.probs[chosen], predictions.labels[chosen])

    for wrong in (everything, first_star_only):
        assert ch06.check_accuracy_by_stars(wrong) is False
        assert f"✗ {wrong.__name__} differs" in capsys.readouterr().out
    assert ch06.check_accuracy_by_stars(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_pad_batch(capsys):
    def padded(seqs):
        t = max(len(s) for s in seqs)
        tokens = torch.stack([F.pad(s, (0, t - len(s))) for s in seqs])
        return tokens, tokens != 0

    assert ch06.check_pad_batch(padded) is True
    assert "✓" in capsys.readouterr().out

    def blocked_is_true(seqs):  # nn.MultiheadAttention's polarity: True = padding
        tokens, mask = padded(seqs)
        return tokens, ~mask

    assert ch06.check_pad_batch(blocked_is_true) is False
    assert "item 1" in capsys.readouterr().out  # the mask is wrong, the tokens are right
    assert ch06.check_pad_batch(lambda seqs: padded(seqs)[0]) is False
    assert "✗" in capsys.readouterr().out  # forgets the mask
    assert ch06.check_pad_batch(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch06.check_mean_pool(stub)
    ch06.check_accuracy_by_stars(stub)
    ch06.check_pad_batch(stub)
