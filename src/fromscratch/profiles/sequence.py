"""Chapter 08's run: recurrence, convolution and self-attention side by side.

One set of model sizes serves the whole chapter: the transformer (``emb``, ``heads``, ``depth``)
sets the parameter budget, and the GRU (``rnn_depth`` layers) and the CNN (``cnn_depth`` blocks of
``kernel``-wide convolutions) get the width that matches it (:meth:`SequenceRun.configs`). The bag of
embeddings has only its embedding and head. Then three experiments: step times over ``t`` (8.1),
the synthetic match task over the distance ``d`` (8.2), and IMDb at one budget and one clock (8.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fromscratch.models import SequenceClassifierConfig
from fromscratch.tokenizers.words import SPECIALS

if TYPE_CHECKING:
    from fromscratch.recipes.sequence_tasks import TaskSize


@dataclass(frozen=True)
class SequenceRun:
    # --- the four models (every section)
    emb: int  # e: embedding width of all four models
    heads: int  # attention heads of the transformer
    depth: int  # transformer blocks; the transformer's parameter count is everyone's budget
    rnn_depth: int  # stacked GRU layers (one direction); their width is sized to the budget
    cnn_depth: int  # residual convolution blocks; their channels are sized to the budget
    kernel: int  # positions per convolution window (odd, centred): reach (kernel - 1) // 2 per block
    # --- 8.1 what recurrence costs: the time of one training step
    timing_lengths: tuple[int, ...]  # sequence lengths t timed (the issue: 64 ... 2048 on a CPU)
    timing_batch: int  # sequences per timed step, the same at every t
    timing_repeats: int  # timed steps per (model, t) after one warm-up step; the median is kept
    timing_vocab: int  # vocabulary of the random tokens timed (small: the embedding is not the point)
    # --- 8.2 what convolution cannot see: the synthetic match task
    task_length: int  # t: tokens per sequence
    task_distances: tuple[int, ...]  # distances d between the two compared tokens (each < task_length)
    task_vocab: int  # token ids 1..task_vocab-1 (0 is <pad>)
    task_symbols: int  # the compared pair is drawn from ids 1..task_symbols, the filler from the others
    task_train: int  # training sequences per distance (one fixed, seeded set)
    task_test: int  # held-out sequences per distance, scored for accuracy
    task_steps: int  # optimiser steps per (model, d)
    task_batch: int  # sequences per step
    task_lr: float  # peak AdamW learning rate (10 % warm-up, then linear decay to 0)
    map_length: int  # t of the gradient-reachability heatmaps
    # --- 8.4 IMDb: four models, one parameter budget, one clock
    imdb_vocab_words: int  # most frequent training words kept (the model adds <pad>, <unk>, <cls>)
    imdb_max_len: int  # reviews truncated to this many tokens
    imdb_batch: int  # reviews per step
    imdb_lr: float  # peak AdamW learning rate, the same for the four models
    imdb_warmup: int  # linear warm-up steps (at most a tenth of a model's steps)
    imdb_seconds: float  # training seconds per model (wall clock, evaluations left out)
    imdb_train_reviews: int | None  # training reviews (None: all 25,000), minus the validation ones
    imdb_valid_reviews: int  # held out of the training reviews for the learning curves
    imdb_test_reviews: int | None  # test reviews scored at the end (None: all 25,000)
    imdb_evals: int  # validation points on each learning curve

    def transformer(self, *, vocab_size: int, max_len: int) -> SequenceClassifierConfig:
        """The transformer of this run, whose parameter count is the budget of the other models."""
        return SequenceClassifierConfig(
            vocab_size=vocab_size,
            num_classes=2,
            encoder="transformer",
            emb=self.emb,
            heads=self.heads,
            depth=self.depth,
            max_len=max_len,
            kernel=self.kernel,
        )

    def configs(self, *, vocab_size: int, max_len: int) -> dict[str, SequenceClassifierConfig]:
        """``{"bag": ..., "rnn": ..., "cnn": ..., "transformer": ...}`` at one parameter budget:
        ``SequenceClassifier(prof.sequence.configs(vocab_size=V, max_len=t)["rnn"])``."""
        from fromscratch.recipes.sequence_compare import budget_configs  # it imports the training loop

        return budget_configs(
            self.transformer(vocab_size=vocab_size, max_len=max_len),
            rnn={"depth": self.rnn_depth, "cell": "gru"},
            cnn={"depth": self.cnn_depth, "kernel": self.kernel},
        )

    @property
    def task(self) -> TaskSize:
        """The match task's sizes for :func:`~fromscratch.recipes.sequence_tasks.distance_sweep`."""
        from fromscratch.recipes.sequence_tasks import TaskSize

        return TaskSize(
            length=self.task_length,
            vocab=self.task_vocab,
            symbols=self.task_symbols,
            train=self.task_train,
            test=self.task_test,
            steps=self.task_steps,
            batch=self.task_batch,
            lr=self.task_lr,
        )

    @property
    def imdb_vocab_size(self) -> int:
        """Token ids of the IMDb models: ``imdb_vocab_words`` plus the special tokens."""
        return self.imdb_vocab_words + len(SPECIALS)


# fmt: off
SEQUENCE_RUNS = {
    # smoke: every experiment at toy size, only to prove the code runs (seconds)
    "smoke": SequenceRun(emb=16, heads=2, depth=1, rnn_depth=1, cnn_depth=2, kernel=3,
                         timing_lengths=(16, 32, 64), timing_batch=2, timing_repeats=1, timing_vocab=64,
                         task_length=16, task_distances=(2, 8, 15), task_vocab=16, task_symbols=4, task_train=256,
                         task_test=128, task_steps=10, task_batch=32, task_lr=3e-3, map_length=16,
                         imdb_vocab_words=2_000, imdb_max_len=64, imdb_batch=32, imdb_lr=3e-3, imdb_warmup=5,
                         imdb_seconds=1.0, imdb_train_reviews=512, imdb_valid_reviews=64, imdb_test_reviews=256,
                         imdb_evals=2),
    # cpu: the measurements the chapter quotes (2 cores; about 8 minutes for the whole chapter)
    "cpu": SequenceRun(emb=64, heads=4, depth=2, rnn_depth=1, cnn_depth=2, kernel=5,
                       timing_lengths=(64, 128, 256, 512, 1024, 2048), timing_batch=4, timing_repeats=3,
                       timing_vocab=256,
                       task_length=32, task_distances=(2, 4, 8, 16, 31), task_vocab=16, task_symbols=4,
                       task_train=4_096, task_test=1_000, task_steps=1_000, task_batch=64, task_lr=3e-3,
                       map_length=32,
                       imdb_vocab_words=20_000, imdb_max_len=256, imdb_batch=64, imdb_lr=3e-3, imdb_warmup=30,
                       imdb_seconds=45.0, imdb_train_reviews=None, imdb_valid_reviews=1_000,
                       imdb_test_reviews=5_000, imdb_evals=6),
    # gpu: longer sequences, where attention's t² shows even on a GPU; longer IMDb budgets
    "gpu": SequenceRun(emb=128, heads=8, depth=4, rnn_depth=2, cnn_depth=4, kernel=5,
                       timing_lengths=(64, 128, 256, 512, 1024, 2048, 4096, 8192), timing_batch=8,
                       timing_repeats=10, timing_vocab=256,
                       task_length=128, task_distances=(2, 4, 8, 16, 32, 64, 127), task_vocab=16, task_symbols=4,
                       task_train=16_384, task_test=2_000, task_steps=3_000, task_batch=128, task_lr=1e-3,
                       map_length=64,
                       imdb_vocab_words=50_000, imdb_max_len=512, imdb_batch=64, imdb_lr=1e-3, imdb_warmup=200,
                       imdb_seconds=300.0, imdb_train_reviews=None, imdb_valid_reviews=1_000,
                       imdb_test_reviews=None, imdb_evals=10),
}
# fmt: on
