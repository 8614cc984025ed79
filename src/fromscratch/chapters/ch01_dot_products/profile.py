"""Run sizes of chapter 01 (matrix factorisation on MovieLens 100K): smoke, cpu and gpu."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.training import TrainConfig


# --- chapter 01: matrix factorisation on MovieLens 100K -------------------------------------------
@dataclass(frozen=True)
class MovieLensRun:
    factors: int  # f: length of each user and movie vector
    train: TrainConfig  # epochs, peak Adam lr, longest warm-up (the chapter caps it at one epoch); fp32
    batch_size: int  # ratings per optimiser step
    l2: float  # penalty on the squared vectors and biases of each rating's user and movie
    max_ratings: int | None  # use only a random sample of this many ratings (None: all 100,000)
    known_movies: int  # the most-rated movies: the learned directions and recommendations use only these
    plot_movies: int  # the most-rated movies labelled by title in the learned-feature plot
    top_k: int  # recommendations shown per user


# smoke: a 20,000-rating sample and a few epochs, only to prove the code runs (seconds)
SMOKE = MovieLensRun(
    factors=8,
    # lr 3e-2 with linear warm-up and decay to 0, no weight decay (the L2 penalty is in the loss), no
    # clipping, float32 (dot products of short vectors gain nothing from mixed precision)
    train=TrainConfig(epochs=3, lr=3e-2, warmup_steps=100, grad_clip=None, precision="fp32"),
    batch_size=2048,
    l2=0.1,
    max_ratings=20_000,
    known_movies=300,
    plot_movies=30,
    top_k=8,
)
# cpu: all ratings; test RMSE 1.123 (global mean), 0.940 (biases), 0.90-0.91 (f = 32); about a minute
CPU = replace(SMOKE, factors=32, train=replace(SMOKE.train, epochs=20), batch_size=4096, max_ratings=None)
GPU = replace(CPU, factors=64, train=replace(CPU.train, epochs=40))

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
