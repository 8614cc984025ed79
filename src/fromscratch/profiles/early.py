"""Runs of chapters 01-07: MovieLens, attention, the IMDb classifier, the enwik8 generator."""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.models import ClassifierConfig, GeneratorConfig
from fromscratch.tokenizers.words import SPECIALS


# --- chapter 01: matrix factorisation on MovieLens 100K -------------------------------------------
@dataclass(frozen=True)
class MovieLensRun:
    factors: int  # f: length of each user and movie vector
    epochs: int  # passes over the training ratings
    batch_size: int  # ratings per optimiser step
    lr: float  # peak Adam learning rate (linear warm-up, then linear decay to 0)
    l2: float  # penalty on the squared vectors and biases of each rating's user and movie
    max_ratings: int | None  # use only a random sample of this many ratings (None: all 100,000)
    known_movies: int  # the most-rated movies: the learned directions and recommendations use only these
    plot_movies: int  # the most-rated movies labelled by title in the learned-feature plot
    top_k: int  # recommendations shown per user


# fmt: off
MOVIELENS_RUNS = {
    # smoke: a 20,000-rating sample and a few epochs, only to prove the code runs (seconds)
    "smoke": MovieLensRun(factors=8, epochs=3, batch_size=2048, lr=3e-2, l2=0.1, max_ratings=20_000,
                           known_movies=300, plot_movies=30, top_k=8),
    # cpu: all ratings; test RMSE 1.123 (global mean), 0.940 (biases), 0.90-0.91 (f = 32); about a minute
    "cpu": MovieLensRun(factors=32, epochs=20, batch_size=4096, lr=3e-2, l2=0.1, max_ratings=None,
                         known_movies=300, plot_movies=30, top_k=8),
    "gpu": MovieLensRun(factors=64, epochs=40, batch_size=4096, lr=3e-2, l2=0.1, max_ratings=None,
                         known_movies=300, plot_movies=30, top_k=8),
}
# fmt: on


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


_SCALING_DIMS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# fmt: off
ATTENTION_RUNS = {
    "smoke": AttentionRun(scaling_dims=_SCALING_DIMS, scaling_samples=200, scaling_keys=16,
                           timing_lengths=(16, 64), timing_repeats=2, timing_batch=2, timing_emb=32, timing_heads=4),
    "cpu": AttentionRun(scaling_dims=_SCALING_DIMS, scaling_samples=2_000, scaling_keys=16,
                         timing_lengths=(64, 256, 1024), timing_repeats=10, timing_batch=4, timing_emb=128,
                         timing_heads=8),
    "gpu": AttentionRun(scaling_dims=_SCALING_DIMS, scaling_samples=2_000, scaling_keys=16,
                         timing_lengths=(256, 1024, 4096), timing_repeats=20, timing_batch=4, timing_emb=256,
                         timing_heads=8),
}
# fmt: on


# --- chapters 05-06: the transformer block and the IMDb classifier ---------------------------------
@dataclass(frozen=True)
class ImdbRun:
    vocab_words: (
        int  # most frequent training-split words kept (blog: 50,000); the model adds 3 special tokens
    )
    max_len: int  # reviews are truncated to this many tokens (blog: 512)
    emb: int  # embedding width e (blog: 128)
    heads: int  # attention heads h (blog: 8)
    depth: int  # transformer blocks (blog: 6)
    batch_size: int  # reviews per step (blog: 4)
    epochs: int  # passes over the training reviews
    lr: float  # peak AdamW learning rate after warm-up, then linear decay to 0 (blog: 1e-4)
    warmup_steps: int  # linear warm-up steps
    dropout: float  # after embeddings and each sub-layer
    weight_decay: float  # AdamW's decoupled weight decay (not on biases and norms)
    train_reviews: int | None  # use only this many training reviews (None: all 25,000)
    valid_reviews: int  # held out of the training reviews for learning curves
    test_reviews: int | None  # evaluate on this many test reviews (None: all 25,000)
    evals: int  # validation evaluations during a training run

    @property
    def model(self) -> ClassifierConfig:
        """The classifier of this run: ``Classifier(prof.imdb.model)``; its vocabulary is
        ``vocab_words`` plus the special tokens ``<pad>``, ``<unk>``, ``<cls>``."""
        return ClassifierConfig(
            vocab_size=self.vocab_words + len(SPECIALS),
            num_classes=2,
            emb=self.emb,
            heads=self.heads,
            depth=self.depth,
            max_len=self.max_len,
            dropout=self.dropout,
        )


# fmt: off
IMDB_RUNS = {
    "smoke": ImdbRun(vocab_words=2_000, max_len=64, emb=32, heads=2, depth=1, batch_size=32, epochs=1, lr=3e-3,
                      warmup_steps=5, dropout=0.0, weight_decay=0.0, train_reviews=512, valid_reviews=64,
                      test_reviews=256, evals=2),
    # cpu: 87.2 % test accuracy after 3 epochs, about 4 minutes on 2 cores (chapter 06, section 6.10)
    "cpu": ImdbRun(vocab_words=20_000, max_len=512, emb=64, heads=4, depth=1, batch_size=64, epochs=3, lr=4e-3,
                    warmup_steps=100, dropout=0.1, weight_decay=0.01, train_reviews=None, valid_reviews=1_000,
                    test_reviews=None, evals=6),
    # gpu: the blog's model (depth 6, length 512, e = 128, 8 heads, 50,000 words)
    "gpu": ImdbRun(vocab_words=50_000, max_len=512, emb=128, heads=8, depth=6, batch_size=32, epochs=6, lr=3e-4,
                    warmup_steps=1_000, dropout=0.1, weight_decay=0.01, train_reviews=None, valid_reviews=1_000,
                    test_reviews=None, evals=12),
}
# fmt: on


# --- chapter 07: masking and the enwik8 generator --------------------------------------------------
@dataclass(frozen=True)
class Enwik8Run:
    data_bytes: int | None  # read only the first bytes of enwik8 (None: all 100M, standard split)
    emb: int  # embedding width e (blog: 256)
    heads: int  # attention heads h (blog: 8)
    depth: int  # transformer blocks (blog: 12)
    context: int  # longest input in bytes (blog: 256)
    batch_size: int  # blog: 32
    steps: int  # optimiser steps (blog: ~170K over ~24 h)
    lr: float  # peak AdamW learning rate after the warm-up (blog: Adam, 1e-4)
    warmup_steps: int
    eval_bytes: int  # held-out bytes scored for bits per byte
    eval_every: int  # steps between validation measurements (the learning curve's points)
    demo_steps: int  # steps of the with / without mask comparison (section 7.2)
    demo_context: int  # context of that comparison (short: copying is found sooner)
    sample_bytes: int  # length of each generated sample

    @property
    def model(self) -> GeneratorConfig:
        """The generator of this run: ``Generator(prof.enwik8.model)``; chapter 07's short demo is
        ``Generator(prof.enwik8.model, context=prof.enwik8.demo_context, causal=False)``."""
        return GeneratorConfig(emb=self.emb, heads=self.heads, depth=self.depth, context=self.context)

    @property
    def tag(self) -> str:
        """A short name for these sizes, for checkpoint files: ``"e64-h4-d1-c32-b16-s200-1000000B"``."""
        data = "full" if self.data_bytes is None else f"{self.data_bytes}B"
        return (
            f"e{self.emb}-h{self.heads}-d{self.depth}-c{self.context}-b{self.batch_size}-s{self.steps}-{data}"
        )


# fmt: off
ENWIK8_RUNS = {
    # smoke: the mirror's 1,000,000-byte prefix, a one-block model; seconds on 2 cores.
    "smoke": Enwik8Run(data_bytes=1_000_000, emb=64, heads=4, depth=1, context=32, batch_size=16,
                        steps=200, lr=5e-3, warmup_steps=20, eval_bytes=4_000, eval_every=50,
                        demo_steps=200, demo_context=16, sample_bytes=120),
    # cpu: the full enwik8 (standard split); about 0.13 s a step on 2 free cores: ~10 minutes.
    "cpu": Enwik8Run(data_bytes=None, emb=128, heads=4, depth=2, context=128, batch_size=32,
                      steps=4_000, lr=2e-3, warmup_steps=100, eval_bytes=100_000, eval_every=500,
                      demo_steps=200, demo_context=16, sample_bytes=300),
    # gpu: the blog's model (12 blocks, emb 256, context 256, batch 32); the blog trained 170K batches.
    "gpu": Enwik8Run(data_bytes=None, emb=256, heads=8, depth=12, context=256, batch_size=32,
                      steps=50_000, lr=3e-4, warmup_steps=1_000, eval_bytes=1_000_000, eval_every=2_500,
                      demo_steps=1_000, demo_context=32, sample_bytes=600),
}
# fmt: on
