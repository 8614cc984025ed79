"""Chapter 01's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import pytest
import torch

import fromscratch.chapters.ch01_dot_products.checks as ch01
from fromscratch.data.movielens import Ratings
from fromscratch.models.recommender import MatrixFactorization, predict_ratings

MOVIES = {  # the chapter's hand-made (romance, action) features
    "Titanic": (0.9, 0.3),
    "Die Hard": (-0.5, 0.9),
    "Mr. & Mrs. Smith": (0.7, 0.8),
    "March of the Penguins": (-0.3, -0.9),
}


def stub(*args): ...  # an untouched learner cell


@pytest.fixture
def model():
    torch.manual_seed(0)
    mf = MatrixFactorization(7, 11, 3, global_mean=3.5)
    with torch.no_grad():  # biases start at zero: give them values, so a formula without them fails
        mf.user_bias.weight.normal_()
        mf.item_bias.weight.normal_()
    return mf


def test_the_module_docstring_runs():
    assert doctest.testmod(ch01).failed == 0


def test_check_dee(capsys):
    assert ch01.check_dee((0.3, -1.0), MOVIES) is True
    assert "✓" in capsys.readouterr().out
    assert ch01.check_dee((0.3, 1.0), MOVIES) is False  # likes action: Die Hard is not last
    assert "✗ Dee's ranking is not right yet" in capsys.readouterr().out
    assert ch01.check_dee((0.6, -2.0), MOVIES) is False
    assert "between -1 and 1" in capsys.readouterr().out
    assert ch01.check_dee((0.3,), MOVIES) is False
    assert "two numbers" in capsys.readouterr().out
    assert ch01.check_dee((0.0, 0.0), MOVIES) is False
    assert "tie" in capsys.readouterr().out
    assert ch01.check_dee(..., MOVIES) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_predict_by_hand(model, capsys):
    def by_hand(model, u, i):
        p, q = model.user_vectors.weight[u], model.item_vectors.weight[i]
        dot = sum(p[k] * q[k] for k in range(model.factors))
        return model.global_mean + model.user_bias.weight[u, 0] + model.item_bias.weight[i, 0] + dot

    assert ch01.check_predict_by_hand(by_hand, model) is True
    assert "✓ by_hand matches the reference on 5 test inputs" in capsys.readouterr().out
    assert ch01.check_predict_by_hand(lambda model, u, i: by_hand(model, u, i).item(), model) is True
    capsys.readouterr()  # a plain number is as good as a tensor

    def without_biases(model, u, i):
        return model.global_mean + model.user_vectors.weight[u] @ model.item_vectors.weight[i]

    assert ch01.check_predict_by_hand(without_biases, model) is False
    assert "✗ without_biases differs from the reference" in capsys.readouterr().out
    assert ch01.check_predict_by_hand(stub, model) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_rmse(capsys):
    assert ch01.check_rmse(lambda p, a: torch.sqrt(((p - a) ** 2).mean())) is True
    assert "✓" in capsys.readouterr().out
    assert ch01.check_rmse(lambda p, a: (p - a).abs().mean()) is False  # mean absolute error
    assert "✗" in capsys.readouterr().out
    assert ch01.check_rmse(lambda p, a: (p - a) ** 2) is False  # forgot the mean and the root
    assert "expected shape ()" in capsys.readouterr().out
    assert ch01.check_rmse(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_test_rmse(model, capsys):
    ratings = Ratings(
        torch.tensor([0, 1, 6, 3]), torch.tensor([2, 10, 0, 5]), torch.tensor([4.0, 1.0, 5.0, 3.0])
    )
    right = (predict_ratings(model, ratings) - ratings.rating).pow(2).mean().sqrt()
    assert ch01.check_test_rmse(right, model, ratings) is True
    assert "✓ the test RMSE is right" in capsys.readouterr().out
    assert ch01.check_test_rmse(right.item() + 0.01, model, ratings) is False
    assert "✗ the test RMSE is not right yet" in capsys.readouterr().out
    assert ch01.check_test_rmse(torch.ones(4), model, ratings) is False
    assert "must be one number" in capsys.readouterr().out
    assert ch01.check_test_rmse(..., model, ratings) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched, model):
    ch01.check_predict_by_hand(stub, model)
    ch01.check_rmse(stub)
