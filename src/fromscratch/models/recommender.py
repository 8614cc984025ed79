"""Matrix factorisation: ratings predicted by dot products of learned vectors (chapter 01).

Every user u gets a vector ``p_u`` and every movie i a vector ``q_i``, both of length f
(``factors``), plus a bias each; the predicted rating is

$$\\hat r_{ui} = \\mu + b_u + b_i + p_u^\\top q_i ,$$

with $\\mu$ the mean training rating. Nobody says what the f coordinates mean: they are learned so
that the dot products match the known ratings (Koren, Bell & Volinsky 2009), and they come out
meaning something anyway. Training minimises the squared error plus an L2 penalty on the vectors
and biases of the users and movies in each batch, with the course's one training loop
(chapter 01 calls ``fromscratch.training.train`` with :func:`rating_loss`).

Baselines, from the same class: ``factors=0`` keeps only $\\mu + b_u + b_i$ (user and movie
biases); ``factors=0, biases=False`` predicts the global mean $\\mu$ for everyone, which is already
the least-squares constant, so it needs no training.

Shapes: b ratings in a batch, f factors, n_users users, n_items movies.
"""

from __future__ import annotations

import torch
from torch import nn

from fromscratch.data.movielens import Batch, Ratings
from fromscratch.utils import evaluating


class MatrixFactorization(nn.Module):
    """$\\hat r_{ui} = \\mu + b_u + b_i + p_u^\\top q_i$ for a batch of (user, movie) index pairs.

    ``factors``: f, the length of each user and movie vector (0: biases only).
    ``biases``: learn $b_u$ and $b_i$ (False with ``factors=0``: the global-mean baseline).
    ``global_mean``: $\\mu$, a fixed buffer; pass the mean training rating.
    ``init_std``: the vectors start as small random numbers, so no direction is preferred.
    """

    def __init__(
        self,
        n_users: int,
        n_items: int,
        factors: int,
        *,
        biases: bool = True,
        global_mean: float = 0.0,
        init_std: float = 0.1,
    ):
        super().__init__()
        if factors < 0 or n_users < 1 or n_items < 1:
            raise ValueError(
                f"need n_users, n_items >= 1 and factors >= 0; got {n_users}, {n_items}, {factors}."
            )
        self.factors, self.biases = factors, biases
        self.user_vectors = nn.Embedding(n_users, factors)  # P: row u is p_u
        self.item_vectors = nn.Embedding(n_items, factors)  # Q: row i is q_i
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.user_vectors.weight, std=init_std)
        nn.init.normal_(self.item_vectors.weight, std=init_std)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)
        for table in (self.user_bias, self.item_bias):
            table.weight.requires_grad_(biases)
        self.register_buffer("global_mean", torch.tensor(float(global_mean)))

    def forward(self, user: torch.Tensor, item: torch.Tensor) -> torch.Tensor:
        """user, item: (b,) int64 indices -> predicted ratings (b,)."""
        dot = torch.zeros_like(self.global_mean)  # biases only: no vectors to multiply
        if self.factors:  # (a zero-width table is never looked up: its CUDA backward reads memory it lacks)
            p, q = self.user_vectors(user), self.item_vectors(item)  # (b, f) each
            dot = (p * q).sum(dim=-1)  # (b,)
        return self.global_mean + self.user_bias(user).squeeze(-1) + self.item_bias(item).squeeze(-1) + dot

    def penalty(self, user: torch.Tensor, item: torch.Tensor) -> torch.Tensor:
        """Mean over the batch of $|p_u|^2 + |q_i|^2 + b_u^2 + b_i^2$: a scalar."""
        parts = [self.user_vectors(user), self.item_vectors(item)] if self.factors else []  # (b, f) each
        if self.biases:
            parts += [self.user_bias(user), self.item_bias(item)]  # (b, 1) each
        if not parts:  # the global mean alone: nothing to penalise
            return torch.zeros_like(self.global_mean)
        return torch.cat(parts, dim=-1).pow(2).sum(dim=-1).mean()


def rating_loss(model: MatrixFactorization, batch: Batch, *, l2: float = 0.0) -> torch.Tensor:
    """Mean squared error of the batch's predictions plus ``l2`` times the model's penalty."""
    user, item, rating = batch  # (b,) each
    error = model(user, item) - rating  # (b,)
    return error.pow(2).mean() + l2 * model.penalty(user, item)


@torch.no_grad()
def predict_ratings(
    model: MatrixFactorization, ratings: Ratings, *, batch_size: int = 65_536
) -> torch.Tensor:
    """Predicted ratings (n,) for every (user, movie) pair of ``ratings``, on the CPU.

    The model runs in eval mode and is given back in the mode it was in.
    """
    device = model.global_mean.device
    with evaluating(model):
        out = [
            model(user.to(device), item.to(device)).cpu()
            for user, item, _ in ratings.batches(batch_size, shuffle=False)()
        ]
    return torch.cat(out) if out else torch.zeros(0)


def rmse(model: MatrixFactorization, ratings: Ratings) -> float:
    """Root mean squared error $\\sqrt{\\frac1n \\sum (\\hat r_{ui} - r_{ui})^2}$ over ``ratings``."""
    if len(ratings) == 0:
        raise ValueError("rmse needs at least one rating; the ratings given are empty.")
    return (predict_ratings(model, ratings) - ratings.rating).pow(2).mean().sqrt().item()


# --- using a trained model -------------------------------------------------------------------------
@torch.no_grad()
def item_directions(
    model: MatrixFactorization, k: int = 2, items: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The k directions along which the movie vectors spread the most (PCA of Q), and coordinates.

    The f learned coordinates have no preferred order or orientation: rotating every $p_u$ and $q_i$
    alike changes no prediction. Principal components fix one: direction 1 is where the (centred)
    movie vectors of ``items`` (default: all) vary most, direction 2 the most of what remains, and so
    on. Each direction's sign is chosen so its largest coordinate is positive.
    Returns ``directions (k, f)`` (orthonormal rows) and ``coords (n_items, k)``, every movie's
    centred vector projected on them.
    """
    q = model.item_vectors.weight.detach().float().cpu()  # (n_items, f)
    if not 1 <= k <= model.factors:
        raise ValueError(f"k must be between 1 and the model's {model.factors} factors, got {k}.")
    chosen = q if items is None else q[items]
    mean = chosen.mean(dim=0)  # (f,)
    _, _, vt = torch.linalg.svd(chosen - mean, full_matrices=False)  # vt: (f, f)
    directions = vt[:k]  # (k, f)
    coords = (q - mean) @ directions.T  # (n_items, k)
    flip = torch.sign(coords.gather(0, coords.abs().argmax(dim=0, keepdim=True)))  # (1, k)
    return directions * flip.T, coords * flip


@torch.no_grad()
def taste_vector(model: MatrixFactorization, directions: torch.Tensor, amounts) -> torch.Tensor:
    """A made-up user's vector ``(f,)``: ``amounts[j]`` steps along ``directions[j]`` (k, f).

    One step is the standard deviation of the real users' coordinates along that direction, so
    ``amounts = (2, 0)`` is a user as keen on direction 1 as an unusually keen real user.
    """
    amounts = torch.as_tensor(amounts, dtype=torch.float32)  # (k,)
    if amounts.shape != directions.shape[:1]:
        raise ValueError(
            f"give one amount per direction: {directions.shape[0]} amounts, got {tuple(amounts.shape)}."
        )
    users = model.user_vectors.weight.detach().float().cpu() @ directions.T  # (n_users, k)
    return (amounts * users.std(dim=0)) @ directions  # (f,)


@torch.no_grad()
def recommend(
    model: MatrixFactorization,
    user: int | torch.Tensor,
    k: int = 10,
    *,
    exclude: torch.Tensor | None = None,
    candidates: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The k movies with the highest predicted rating for ``user``.

    ``user``: a user index (uses $p_u$ and $b_u$) or a taste vector ``(f,)`` of a made-up user
    (no user bias). ``exclude``: movie indices never to recommend (e.g. those already rated);
    ``candidates``: (n_items,) bool, only these movies may be recommended (e.g. well-known ones).
    Returns ``items (k,)`` int64 and ``scores (k,)``, best first.
    """
    if isinstance(user, torch.Tensor) and user.dim() == 0:
        user = int(user)
    q = model.item_vectors.weight.detach().cpu()  # (n_items, f)
    scores = model.global_mean.cpu() + model.item_bias.weight.detach().cpu().squeeze(-1)  # (n_items,)
    if isinstance(user, int):
        p_u = model.user_vectors.weight[user].detach().cpu()  # (f,)
        scores = scores + model.user_bias.weight[user].detach().cpu() + q @ p_u
    else:
        if user.shape != (model.factors,):
            raise ValueError(f"a taste vector needs shape ({model.factors},), got {tuple(user.shape)}.")
        scores = scores + q @ user.float().cpu()  # (n_items,)
    allowed = torch.ones_like(scores, dtype=torch.bool) if candidates is None else candidates.cpu().clone()
    if exclude is not None:
        allowed[exclude.cpu()] = False
    scores = scores.masked_fill(~allowed, float("-inf"))
    best = scores.topk(min(k, int(allowed.sum()))).indices  # (k,)
    return best, scores[best]
