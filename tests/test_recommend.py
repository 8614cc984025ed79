"""Matrix factorisation: the prediction formula, RMSE by hand, learning, recovery of a planted matrix."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from fromscratch import viz
from fromscratch.chapters.ch01_dot_products import figures as ch01_figures
from fromscratch.data.movielens import Ratings
from fromscratch.models import recommender as rec
from fromscratch.training import TrainConfig, train
from fromscratch.utils import count_parameters


def hand_model() -> rec.MatrixFactorization:
    """One user, two movies, f = 2, with weights small enough to check by hand."""
    model = rec.MatrixFactorization(1, 2, 2, global_mean=3.0)
    with torch.no_grad():
        model.user_vectors.weight.copy_(torch.tensor([[1.0, 2.0]]))
        model.item_vectors.weight.copy_(torch.tensor([[0.5, -1.0], [2.0, 1.0]]))
        model.user_bias.weight.copy_(torch.tensor([[0.5]]))
        model.item_bias.weight.copy_(torch.tensor([[-0.25], [0.0]]))
    return model


def test_prediction_is_mean_plus_biases_plus_dot_product():
    model = hand_model()
    # movie 0: 3 + 0.5 - 0.25 + (0.5 - 2) = 1.75;  movie 1: 3 + 0.5 + 0 + (2 + 2) = 7.5
    got = model(torch.tensor([0, 0]), torch.tensor([0, 1]))
    torch.testing.assert_close(got, torch.tensor([1.75, 7.5]))
    # penalty of (user 0, movie 0): |p|^2 + |q|^2 + b_u^2 + b_i^2 = 5 + 1.25 + 0.25 + 0.0625
    torch.testing.assert_close(model.penalty(torch.tensor([0]), torch.tensor([0])), torch.tensor(6.5625))


def test_rmse_by_hand():
    constant = rec.MatrixFactorization(4, 4, 0, biases=False, global_mean=3.0)
    ratings = Ratings(torch.arange(4), torch.arange(4), torch.tensor([1.0, 3.0, 5.0, 4.0]))
    assert rec.rmse(constant, ratings) == pytest.approx(1.5)  # errors -2, 0, 2, 1: sqrt(9 / 4)
    two = Ratings(torch.tensor([0, 0]), torch.tensor([0, 1]), torch.tensor([2.0, 5.0]))
    # errors -0.25 and 2.5: sqrt((0.0625 + 6.25) / 2)
    assert rec.rmse(hand_model(), two) == pytest.approx(math.sqrt(3.15625), rel=1e-6)
    loss = rec.rating_loss(hand_model(), (two.user, two.item, two.rating), l2=0.1)
    penalty = (6.5625 + (5 + 5 + 0.25 + 0.0)) / 2
    torch.testing.assert_close(loss, torch.tensor(3.15625 + 0.1 * penalty))


def test_rotating_all_vectors_changes_no_prediction():
    torch.manual_seed(0)
    model = rec.MatrixFactorization(5, 7, 3, global_mean=3.5)
    users, items = torch.arange(5).repeat_interleave(7), torch.arange(7).repeat(5)
    before = model(users, items)
    rotation, _ = torch.linalg.qr(torch.randn(3, 3))  # orthogonal (3, 3)
    with torch.no_grad():
        model.user_vectors.weight.copy_(model.user_vectors.weight @ rotation)
        model.item_vectors.weight.copy_(model.item_vectors.weight @ rotation)
    torch.testing.assert_close(model(users, items), before)


def planted(n_users: int = 40, n_items: int = 30, rank: int = 2, seed: int = 0) -> tuple[Ratings, Ratings]:
    """Every rating of a planted rank-2 matrix 3 + U V^T; 80% for training, 20% held out."""
    g = torch.Generator().manual_seed(seed)
    u, v = torch.randn(n_users, rank, generator=g), torch.randn(n_items, rank, generator=g)
    full = 3.0 + u @ v.T  # (n_users, n_items)
    users, items = torch.arange(n_users).repeat_interleave(n_items), torch.arange(n_items).repeat(n_users)
    order = torch.randperm(users.numel(), generator=g)
    cut = int(0.8 * users.numel())
    ratings = Ratings(users, items, full.flatten())
    return ratings.subset(order[:cut]), ratings.subset(order[cut:])


def test_planted_low_rank_matrix_is_recovered():
    known, held_out = planted()
    torch.manual_seed(0)
    model = rec.MatrixFactorization(40, 30, 2, global_mean=known.rating.mean().item())
    before = rec.rmse(model, held_out)
    per_epoch = math.ceil(len(known) / 64)  # as chapter 01 trains: batches of 64, warm-up over one epoch
    config = TrainConfig(
        steps=60 * per_epoch, lr=0.05, warmup_steps=per_epoch, grad_clip=None, progress=False
    )
    history = train(
        model,
        known.batches(64),
        rec.rating_loss,  # l2 = 0: nothing but the squared error
        config,
        evaluate=lambda m: {"held-out RMSE": rec.rmse(m, held_out)},
    )
    losses = history.series("loss")[1]
    assert sum(losses[-10:]) / 10 < 0.01 * sum(losses[:10]) / 10  # the loss falls a hundredfold
    assert before > 1.0  # the planted ratings spread about 1.4 around their mean
    assert rec.rmse(model, known) < 0.01
    assert history.last("held-out RMSE") == pytest.approx(rec.rmse(model, held_out))
    assert rec.rmse(model, held_out) < 0.01  # ratings never seen are predicted from the learned vectors


@pytest.mark.parametrize("training", [True, False])
def test_predict_ratings_gives_the_model_back_in_its_mode(training):
    model = hand_model().train(training)
    two = Ratings(torch.tensor([0, 0]), torch.tensor([1, 0]), torch.tensor([0.0, 0.0]))
    torch.testing.assert_close(rec.predict_ratings(model, two), torch.tensor([7.5, 1.75]))
    assert model.training == training


def test_global_mean_has_nothing_to_learn():
    constant = rec.MatrixFactorization(3, 3, 0, biases=False, global_mean=3.0)
    assert count_parameters(constant) == 0  # chapter 01 evaluates it without training
    ratings = Ratings(torch.tensor([0, 2]), torch.tensor([1, 0]), torch.tensor([4.0, 1.0]))
    torch.testing.assert_close(rec.predict_ratings(constant, ratings), torch.tensor([3.0, 3.0]))


def test_biases_only_never_looks_up_its_zero_width_tables():
    """On CUDA the backward of a zero-width embedding reads memory it does not have (pytorch#189668;
    chapter 01's biases-only model crashed the GPU check with an illegal memory access)."""
    model = rec.MatrixFactorization(4, 5, 0, global_mean=3.0)
    user, item, rating = torch.tensor([0, 3]), torch.tensor([4, 1]), torch.tensor([4.0, 2.0])
    rec.rating_loss(model, (user, item, rating), l2=0.1).backward()
    assert model.user_vectors.weight.grad is None and model.item_vectors.weight.grad is None
    assert model.user_bias.weight.grad is not None
    torch.testing.assert_close(model(user, item), torch.tensor([3.0, 3.0]))


def test_recommend_by_id_and_taste_vector():
    model = hand_model()
    items, scores = rec.recommend(model, 0, k=2)
    assert items.tolist() == [1, 0]
    torch.testing.assert_close(scores, torch.tensor([7.5, 1.75]))
    assert rec.recommend(model, 0, k=2, exclude=torch.tensor([1]))[0].tolist() == [0]
    assert rec.recommend(model, 0, k=5, candidates=torch.tensor([True, False]))[0].tolist() == [0]
    # a made-up user with a taste vector and no bias: 3 + b_i + q_i . (0, 1)
    items, scores = rec.recommend(model, torch.tensor([0.0, 1.0]), k=2)
    assert items.tolist() == [1, 0]
    torch.testing.assert_close(scores, torch.tensor([4.0, 1.75]))
    with pytest.raises(ValueError, match="taste vector"):
        rec.recommend(model, torch.zeros(3), k=1)


def test_item_directions_find_the_spread():
    torch.manual_seed(0)
    model = rec.MatrixFactorization(6, 50, 3)
    line = torch.tensor([0.6, 0.0, 0.8])  # the movies lie (almost) along this line
    with torch.no_grad():
        model.item_vectors.weight.copy_(
            torch.linspace(0, 2, 50)[:, None] ** 2 * line + 0.01 * torch.randn(50, 3)
        )
    directions, coords = rec.item_directions(model, k=2)
    torch.testing.assert_close(directions @ directions.T, torch.eye(2), atol=1e-5, rtol=0)
    torch.testing.assert_close(directions[0], line, atol=0.01, rtol=0)  # sign: largest coordinate positive
    q = model.item_vectors.weight.detach()
    torch.testing.assert_close(coords, (q - q.mean(0)) @ directions.T)
    assert coords[:, 0].abs().argmax() == 49
    zero = rec.taste_vector(model, directions, [0.0, 0.0])
    torch.testing.assert_close(zero, torch.zeros(3))
    one = rec.taste_vector(model, directions, [1.0, 0.0])
    spread = (model.user_vectors.weight.detach() @ directions[0]).std()
    torch.testing.assert_close(one, spread * directions[0])


MOVIES = {"Titanic": (0.9, 0.2), "Die Hard": (-0.4, 0.9)}


def test_table_shows_its_cells_as_text_and_html():
    table = viz.table([["global mean", "1.123"]], header=["model", "test RMSE"])
    assert repr(table).splitlines()[0].split() == ["model", "test", "RMSE"]
    assert ">1.123</td>" in table._repr_html_() and "<th" in table._repr_html_()
    with pytest.raises(ValueError, match="cells"):
        viz.table([["one"]], header=["a", "b"])


def test_hand_features_plot_movies_as_dots_and_users_as_arrows():
    ax = ch01_figures.plot_hand_features(MOVIES, {"Ann": (1.0, -0.5)}).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("romance", "action")
    dots = np.concatenate([c.get_offsets() for c in ax.collections])  # one scatter per movie
    np.testing.assert_allclose(dots, [MOVIES["Titanic"], MOVIES["Die Hard"]])
    labels = [t.get_text() for t in ax.texts]
    assert labels.count("") == 1 and {"Titanic", "Die Hard", "Ann"} <= set(labels)  # one arrow, three names
    plt.close("all")


def test_score_terms_are_bars_and_their_sum_a_diamond():
    ax = ch01_figures.plot_score_terms("Ann", (1.0, -0.5), MOVIES).axes[0]
    assert ax.get_xlabel() == "contribution to the score" and "Ann" in ax.get_title()
    assert [label.get_text() for label in ax.get_yticklabels()] == ["Titanic", "Die Hard"]
    widths = [bar.get_width() for bar in ax.patches]  # romance terms, then action terms
    np.testing.assert_allclose(widths, [0.9, -0.4, -0.1, -0.45])
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 0], [0.8, -0.85])  # the dot products
    plt.close("all")


@pytest.fixture
def eight_movies():
    """An untrained 6-user, 8-movie, 3-factor model, its two learned directions and made-up titles."""
    torch.manual_seed(0)
    model = rec.MatrixFactorization(6, 8, 3)
    directions, coords = rec.item_directions(model, k=2)
    return model, directions, coords, [f"Movie {i}, The (1990)" for i in range(8)]


def test_movie_features_label_the_chosen_movies(eight_movies):
    _, _, coords, titles = eight_movies
    ax = ch01_figures.plot_movie_features(coords, titles, [0, 1, 2], background=list(range(8))).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("learned direction 1", "learned direction 2")
    assert [len(c.get_offsets()) for c in ax.collections] == [8, 3]  # faint background, labelled dots
    np.testing.assert_allclose(ax.collections[1].get_offsets(), coords[[0, 1, 2]].numpy(), rtol=1e-6)
    assert sorted(t.get_text().strip() for t in ax.texts) == ["The Movie 0", "The Movie 1", "The Movie 2"]
    with pytest.raises(ValueError, match=r"\(n_items, 2\)"):
        ch01_figures.plot_movie_features(coords[:, :1], titles, [0])
    plt.close("all")


def test_direction_ends_and_taste_tables(eight_movies):
    model, directions, coords, titles = eight_movies
    ends = ch01_figures.direction_ends(coords, titles, range(8), 2)
    assert len(ends.rows) == 4 and "The Movie" in ends.rows[0][2]
    lowest = int(coords[:, 0].argmin())
    assert ends.rows[0][2].startswith(f"The Movie {lowest}")
    static = ch01_figures.taste_table(model, titles, directions, [(0, 0), (2, 0)], k=3)
    assert len(static.rows) == 3 and static.header == ["rank", "taste (+0, +0)", "taste (+2, +0)"]
    best = rec.recommend(model, rec.taste_vector(model, directions, (2, 0)), 3)[0].tolist()
    assert [row[2] for row in static.rows] == [f"The Movie {i}" for i in best]
    explorer = ch01_figures.taste_explorer(model, titles, directions, k=3)
    slider, shown = explorer.children[0], explorer.children[-1]
    before = shown.value
    slider.value = -3.0
    assert shown.value != before and "taste (-3, +0)" in shown.value
