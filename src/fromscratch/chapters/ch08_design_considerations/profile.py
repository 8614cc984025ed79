"""Chapter 08's run: recurrence, convolution and self-attention side by side.

The run holds the three model configs: the transformer sets the parameter budget, and the GRU and
the CNN get the width that matches it (:meth:`SequenceRun.configs`, which also adds the bag of
embeddings: only its embedding and head). They are the IMDb models of 8.4; ``configs`` resizes their
vocabulary and length for the other experiments. Then three experiments: step times over ``t``
(8.1), the synthetic match task over the distance ``d`` (8.2, ``task_train``: a number of steps),
and IMDb at one parameter budget and one clock (8.4, ``imdb_train``: a number of minutes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.data.synthetic import MatchData
from fromscratch.models import SequenceClassifierConfig, budget_configs
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class SequenceRun:
    # --- the models (every section), sized for IMDb (8.4); configs() resizes them for 8.1 and 8.2
    transformer: SequenceClassifierConfig  # its parameter count is everyone's budget
    rnn: SequenceClassifierConfig  # stacked GRU layers, one direction; configs() sizes their width
    cnn: SequenceClassifierConfig  # residual blocks of centred kernel-wide convolutions; width sized
    # --- 8.1 what recurrence costs: the time of one training step
    timing_lengths: tuple[int, ...]  # sequence lengths t timed (the issue: 64 ... 2048 on a CPU)
    timing_batch: int  # sequences per timed step, the same at every t
    timing_repeats: int  # timed steps per (model, t) after one warm-up step; the median is kept
    timing_vocab: int  # vocabulary of the random tokens timed (small: the embedding is not the point)
    # --- 8.2 what convolution cannot see: the synthetic match task
    task: MatchData  # t, vocabulary, symbols, training and test sequences per distance, batch
    task_distances: tuple[int, ...]  # distances d between the two compared tokens (each < task.length)
    task_train: TrainConfig  # per (model, d): steps, peak AdamW lr, 10 % warm-up, linear decay to 0
    map_length: int  # t of the gradient-reachability heatmaps
    # --- 8.4 IMDb: four models, one parameter budget, one clock
    imdb_vocab_words: int  # most frequent training words kept (the model adds <pad>, <unk>, <cls>)
    imdb_max_len: int  # reviews truncated to this many tokens
    imdb_batch: int  # reviews per step
    imdb_train_reviews: int | None  # training reviews (None: all 25,000), minus the validation ones
    imdb_valid_reviews: int  # held out of the training reviews for the learning curves
    imdb_test_reviews: int | None  # test reviews scored at the end (None: all 25,000)
    imdb_train: TrainConfig  # the same for the four: minutes of training steps, lr, warm-up, eval_every
    imdb_seeds: int  # the race run from seeds 0..n-1 (initial weights, batch order): mean and spread

    def configs(self, *, vocab_size: int, context: int) -> dict[str, SequenceClassifierConfig]:
        """``{"bag": ..., "rnn": ..., "cnn": ..., "transformer": ...}`` at one parameter budget:
        ``SequenceClassifier(prof.ch08.configs(vocab_size=V, context=t)["rnn"])``."""
        transformer, rnn, cnn = (
            replace(c, vocab_size=vocab_size, context=context) for c in (self.transformer, self.rnn, self.cnn)
        )
        return budget_configs(transformer, rnn=rnn, cnn=cnn)

    def task_configs(self) -> dict[str, SequenceClassifierConfig]:
        """8.2's models for the match task: :meth:`configs` at the task's sizes, plus ``"dilated cnn"``,
        the same CNN with block ``l``'s taps spaced ``2**l`` apart (the same weights, a longer reach)."""
        configs = self.configs(vocab_size=self.task.vocab, context=self.task.length)
        return {**configs, "dilated cnn": replace(configs["cnn"], dilated=True)}


# smoke: every experiment at toy size, only to prove the code runs (seconds)
# The transformer sets the sizes; the GRU and the CNN are its config with the encoder swapped.
_TRANSFORMER = SequenceClassifierConfig(
    vocab_size=2_000 + len(SPECIALS), emb=16, heads=2, depth=1, context=64
)
SMOKE = SequenceRun(
    transformer=_TRANSFORMER,
    rnn=replace(_TRANSFORMER, encoder="rnn", depth=1, cell="gru"),
    cnn=replace(_TRANSFORMER, encoder="cnn", depth=2, kernel=3),
    timing_lengths=(16, 32, 64),
    timing_batch=2,
    timing_repeats=1,
    timing_vocab=64,
    task=MatchData(length=16, vocab=16, symbols=4, train_size=256, test_size=128, batch=32),
    task_distances=(2, 8, 15),
    # 10 % of the steps warm-up; twenty short runs, no progress bars
    task_train=TrainConfig(steps=10, lr=3e-3, warmup_steps=1, progress=False),
    map_length=16,
    imdb_vocab_words=2_000,
    imdb_max_len=64,
    imdb_batch=32,
    imdb_train_reviews=512,
    imdb_valid_reviews=64,
    imdb_test_reviews=256,
    imdb_train=TrainConfig(minutes=1 / 60, lr=3e-3, warmup_steps=5, eval_every=10),
    imdb_seeds=2,  # two: the spread's code runs too
)
# cpu: real measurements on 2 cores (the race's 3 seeds take 9 of the chapter's minutes)
_CPU_SIZES = dict(vocab_size=20_000 + len(SPECIALS), emb=64, heads=4, context=256)  # the three models'
CPU = replace(
    SMOKE,
    transformer=replace(SMOKE.transformer, **_CPU_SIZES, depth=2),
    rnn=replace(SMOKE.rnn, **_CPU_SIZES),
    cnn=replace(SMOKE.cnn, **_CPU_SIZES, kernel=5),
    timing_lengths=(64, 128, 256, 512, 1024, 2048),
    timing_batch=4,
    timing_repeats=3,
    timing_vocab=256,
    task=replace(SMOKE.task, length=32, train_size=4_096, test_size=1_000, batch=64),
    task_distances=(2, 4, 8, 16, 31),
    task_train=replace(SMOKE.task_train, steps=1_000, warmup_steps=100),
    map_length=32,
    imdb_vocab_words=20_000,
    imdb_max_len=256,
    imdb_batch=64,
    imdb_train_reviews=None,
    imdb_valid_reviews=1_000,
    imdb_test_reviews=5_000,
    # 45 s of training steps per model, one config for all four. On 2 shared cores the GRU takes
    # 15-95 steps in that time (load 4 to 2.6), the bag 600-2,400: hence a warm-up of 5 steps, and
    # validation every 25 steps (a few points for the GRU, about 100 passes of 0.3 s for the bag)
    imdb_train=replace(SMOKE.imdb_train, minutes=0.75, eval_every=25),
    imdb_seeds=3,  # 3 x 4 x 45 s: the race's lesson with its spread (seeds 1-2 validate once)
)
# gpu: longer sequences, where attention's t² shows even on a GPU; longer IMDb budgets
_GPU_SIZES = dict(vocab_size=50_000 + len(SPECIALS), emb=128, heads=8, context=512)  # the three models'
GPU = replace(
    CPU,
    transformer=replace(CPU.transformer, **_GPU_SIZES, depth=4),
    rnn=replace(CPU.rnn, **_GPU_SIZES, depth=2),
    cnn=replace(CPU.cnn, **_GPU_SIZES, depth=4),
    timing_lengths=(64, 128, 256, 512, 1024, 2048, 4096, 8192),
    timing_batch=8,
    timing_repeats=10,
    task=replace(CPU.task, length=128, train_size=16_384, test_size=2_000, batch=128),
    task_distances=(2, 4, 8, 16, 32, 64, 127),
    task_train=replace(CPU.task_train, steps=3_000, lr=1e-3, warmup_steps=300),
    map_length=64,
    imdb_vocab_words=50_000,
    imdb_max_len=512,
    imdb_test_reviews=None,
    # a T4: ~26 min in all
    imdb_train=replace(CPU.imdb_train, minutes=4, lr=1e-3, warmup_steps=200, eval_every=200),
    imdb_seeds=1,  # one run each: 3 seeds would add 32 minutes on a Colab GPU
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
