"""Runs of chapters 01-07: MovieLens, attention, the IMDb classifier, the enwik8 generator.

A run that trains holds its model's config and a :class:`~fromscratch.training.TrainConfig`, so a
chapter writes ``Classifier(prof.imdb.model)`` and ``train(model, batches, loss, prof.imdb.train)``;
what is no part of the model or the training loop (the data selection, the batch size, how much to
evaluate) stays a plain field.
"""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.models import ClassifierConfig, GeneratorConfig
from fromscratch.tokenizers.words import SPECIALS
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


def _movielens(factors: int, epochs: int, batch_size: int, max_ratings: int | None) -> MovieLensRun:
    """A MovieLens run: lr 3e-2 with linear warm-up and decay to 0, no weight decay (the L2 penalty is
    in the loss), no clipping, float32 (dot products of short vectors gain nothing from mixed precision)."""
    train = TrainConfig(epochs=epochs, lr=3e-2, warmup_steps=100, grad_clip=None, precision="fp32")
    return MovieLensRun(
        factors, train, batch_size, l2=0.1, max_ratings=max_ratings, known_movies=300, plot_movies=30, top_k=8
    )


MOVIELENS_RUNS = {
    # smoke: a 20,000-rating sample and a few epochs, only to prove the code runs (seconds)
    "smoke": _movielens(factors=8, epochs=3, batch_size=2048, max_ratings=20_000),
    # cpu: all ratings; test RMSE 1.123 (global mean), 0.940 (biases), 0.90-0.91 (f = 32); about a minute
    "cpu": _movielens(factors=32, epochs=20, batch_size=4096, max_ratings=None),
    "gpu": _movielens(factors=64, epochs=40, batch_size=4096, max_ratings=None),
}


# --- chapters 02-04: attention ---------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionRun:
    """The sizes of chapters 02-04's experiments: the scaling curves and the timing table."""

    scaling_dims: tuple[int, ...]  # head widths d for chapter 03's "why we scale" curves
    scaling_samples: int  # random query/key sets averaged per d
    scaling_keys: int  # keys each random query attends over
    timing_lengths: tuple[int, ...]  # sequence lengths for the teaching-vs-fast timing table
    timing_repeats: int  # timed runs per length (after one warm-up run)
    timing_batch: int  # sequences per timed batch
    timing_emb: int  # embedding width e of the timed SelfAttention
    timing_heads: int  # heads h of the timed SelfAttention


def _attention(
    samples: int, lengths: tuple[int, ...], repeats: int, batch: int, emb: int, heads: int
) -> AttentionRun:
    """An attention run: head widths d = 2 .. 1024 with 16 keys for the scaling curves, then the timings."""
    dims = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    return AttentionRun(dims, samples, 16, lengths, repeats, batch, emb, heads)


ATTENTION_RUNS = {
    "smoke": _attention(samples=200, lengths=(16, 64), repeats=2, batch=2, emb=32, heads=4),
    "cpu": _attention(samples=2_000, lengths=(64, 256, 1024), repeats=10, batch=4, emb=128, heads=8),
    "gpu": _attention(samples=2_000, lengths=(256, 1024, 4096), repeats=20, batch=4, emb=256, heads=8),
}


# --- chapters 05-06: the transformer block and the IMDb classifier ---------------------------------
@dataclass(frozen=True)
class ImdbRun:
    model: ClassifierConfig  # the transformer; its max_len also truncates the reviews, V = words + 3 specials
    train: TrainConfig  # epochs, peak AdamW lr (blog: 1e-4) after warm-up, linear decay to 0, weight decay
    batch_size: int  # reviews per step (blog: 4)
    train_reviews: int | None  # use only this many training reviews (None: all 25,000)
    valid_reviews: int  # held out of the training reviews for learning curves
    test_reviews: int | None  # evaluate on this many test reviews (None: all 25,000)
    evals: int  # validation evaluations during a training run

    @property
    def vocab_words(self) -> int:
        """The most frequent training-split words kept (blog: 50,000): the model's vocabulary less
        the special tokens ``<pad>``, ``<unk>``, ``<cls>``."""
        return self.model.vocab_size - len(SPECIALS)


def _classifier(words: int, **fields) -> ClassifierConfig:
    """The classifier of a vocabulary of ``words`` words plus the special tokens."""
    return ClassifierConfig(vocab_size=words + len(SPECIALS), **fields)


IMDB_RUNS = {
    "smoke": ImdbRun(
        model=_classifier(2_000, emb=32, heads=2, depth=1, max_len=64, dropout=0.0),
        train=TrainConfig(epochs=1, lr=3e-3, warmup_steps=5, weight_decay=0.0),
        batch_size=32,
        train_reviews=512,
        valid_reviews=64,
        test_reviews=256,
        evals=2,
    ),
    # cpu: 87.2 % test accuracy after 3 epochs, about 4 minutes on 2 cores (chapter 06, section 6.10)
    "cpu": ImdbRun(
        model=_classifier(20_000, emb=64, heads=4, depth=1, max_len=512, dropout=0.1),
        train=TrainConfig(epochs=3, lr=4e-3, warmup_steps=100, weight_decay=0.01),
        batch_size=64,
        train_reviews=None,
        valid_reviews=1_000,
        test_reviews=None,
        evals=6,
    ),
    # gpu: the blog's model (depth 6, length 512, e = 128, 8 heads, 50,000 words)
    "gpu": ImdbRun(
        model=_classifier(50_000, emb=128, heads=8, depth=6, max_len=512, dropout=0.1),
        train=TrainConfig(epochs=6, lr=3e-4, warmup_steps=1_000, weight_decay=0.01),
        batch_size=32,
        train_reviews=None,
        valid_reviews=1_000,
        test_reviews=None,
        evals=12,
    ),
}


# --- chapter 07: masking and the enwik8 generator --------------------------------------------------
@dataclass(frozen=True)
class Enwik8Run:
    data_bytes: int | None  # read only the first bytes of enwik8 (None: all 100M, standard split)
    model: GeneratorConfig  # the causal generator (blog: e = 256, 8 heads, 12 blocks, context 256)
    train: TrainConfig  # steps (blog: ~170K in ~24 h), peak AdamW lr (blog: Adam, 1e-4), warm-up, eval_every
    batch_size: int  # blog: 32
    eval_bytes: int  # held-out bytes scored for bits per byte
    demo: TrainConfig  # the with / without mask comparison (section 7.2): steps, lr, warm-up of a tenth
    demo_context: int  # context of that comparison (short: copying is found sooner)
    sample_bytes: int  # length of each generated sample


def _demo(steps: int, lr: float) -> TrainConfig:
    """Section 7.2's short runs: ``steps`` steps at the main run's ``lr``, warmed up over a tenth of them."""
    return TrainConfig(steps=steps, lr=lr, warmup_steps=steps // 10)


ENWIK8_RUNS = {
    # smoke: the mirror's 1,000,000-byte prefix, a one-block model; seconds on 2 cores.
    "smoke": Enwik8Run(
        data_bytes=1_000_000,
        model=GeneratorConfig(emb=64, heads=4, depth=1, context=32),
        train=TrainConfig(steps=200, lr=5e-3, warmup_steps=20, eval_every=50),
        batch_size=16,
        eval_bytes=4_000,
        demo=_demo(steps=200, lr=5e-3),
        demo_context=16,
        sample_bytes=120,
    ),
    # cpu: the full enwik8 (standard split); about 0.13 s a step on 2 free cores: ~10 minutes.
    "cpu": Enwik8Run(
        data_bytes=None,
        model=GeneratorConfig(emb=128, heads=4, depth=2, context=128),
        train=TrainConfig(steps=4_000, lr=2e-3, warmup_steps=100, eval_every=500),
        batch_size=32,
        eval_bytes=100_000,
        demo=_demo(steps=200, lr=2e-3),
        demo_context=16,
        sample_bytes=300,
    ),
    # gpu: the blog's model (12 blocks, emb 256, context 256, batch 32); the blog trained 170K batches.
    # 35,000 steps: about 25 min on a T4 by benchmarks/gpu_plan.py (50,000 would take 36)
    "gpu": Enwik8Run(
        data_bytes=None,
        model=GeneratorConfig(emb=256, heads=8, depth=12, context=256),
        train=TrainConfig(steps=35_000, lr=3e-4, warmup_steps=1_000, eval_every=2_500),
        batch_size=32,
        eval_bytes=1_000_000,
        demo=_demo(steps=1_000, lr=3e-4),
        demo_context=32,
        sample_bytes=600,
    ),
}
