"""Benchmark: recurrence, convolution and self-attention measured side by side (chapter 08).

Three measurements, with the sizes of a run profile's ``sequence`` entry (default ``cpu``):

1. ``timing``: the time of one training step (forward, backward, AdamW update) of a GRU, a CNN and a
   transformer with the same number of parameters, on a fixed batch of random tokens, at every
   length of ``timing_lengths``; a log-log slope per model (time ~ t**slope, fitted over all
   lengths and over the longest three) and the first length at which the transformer's step is
   slower than the GRU's.
2. ``task``: the four models trained on the synthetic match task (is the token at position 0 the
   same as the token at position ``d``?) at each distance of ``task_distances``; test accuracy.
3. ``imdb``: a bag of embeddings, a GRU, a CNN and a transformer at one parameter budget, each trained
   for the same ``imdb_seconds`` of wall-clock time on the same IMDb batches; a table (parameters,
   steps, seconds, validation and test accuracy) and each learning curve against seconds.

    python benchmarks/sequence_models.py                     # all three, cpu profile (about 8 minutes)
    python benchmarks/sequence_models.py --only timing       # the step-time table only
    python benchmarks/sequence_models.py --profile smoke     # seconds: a check that the script runs
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import torch

from fromscratch.data.imdb import ReviewBatches, load_imdb
from fromscratch.metrics import predict_labels
from fromscratch.metrics.paths import conv_reach
from fromscratch.profiles import get_profile, seed_everything
from fromscratch.recipes.sequence_tasks import crossover, distance_sweep, loglog_slope, race, step_time_table


def timing(run, device: torch.device) -> None:
    configs = run.configs(vocab_size=run.timing_vocab, max_len=max(run.timing_lengths))
    del configs["bag"]  # nothing to time: it never mixes positions
    for name, config in configs.items():
        print(f"  {name}: {config}")
    lengths = run.timing_lengths
    table = step_time_table(
        configs, lengths, batch=run.timing_batch, repeats=run.timing_repeats, device=device
    )
    print(f"\nseconds per training step (forward + backward + update), batch {run.timing_batch}, median of "
          f"{run.timing_repeats}:")  # fmt: skip
    print(f"{'t':>6} " + " ".join(f"{name:>12}" for name in table))
    for i, t in enumerate(lengths):
        print(f"{t:>6} " + " ".join(f"{table[name][i]:>12.4f}" for name in table))
    last = min(3, len(lengths))
    slopes = " ".join(f"{loglog_slope(lengths, table[name]):>12.2f}" for name in table)
    print(f"{'slope':>6} {slopes}   (log-log, all lengths)")
    slopes = " ".join(f"{loglog_slope(lengths, table[name], last=last):>12.2f}" for name in table)
    print(f"{'slope':>6} {slopes}   (log-log, the longest {last})")
    t = crossover(lengths, table["transformer"], table["rnn"])
    print(f"the transformer's step is slower than the GRU's from t = {t}" if t else
          "the transformer's step is faster than the GRU's at every length timed")  # fmt: skip


def task(run, device: torch.device) -> None:
    configs = run.configs(vocab_size=run.task_vocab, max_len=run.task_length)
    size = run.task
    reach = conv_reach(run.cnn_depth, run.kernel)
    print(f"{size}\nCNN: {run.cnn_depth} blocks of kernel {run.kernel} see {reach} positions each way, so the "
          f"pooled CNN can compare tokens at most d = {2 * reach} apart")  # fmt: skip
    accuracy = distance_sweep(configs, run.task_distances, size, device=device)
    print(f"\ntest accuracy on {size.test:,} sequences after {size.steps:,} steps (0.5 is chance):")
    print(f"{'d':>4} " + " ".join(f"{name:>12}" for name in accuracy))
    for i, d in enumerate(run.task_distances):
        print(f"{d:>4} " + " ".join(f"{accuracy[name][i]:>12.3f}" for name in accuracy))


def imdb(run, device: torch.device, seed: int) -> None:
    start = time.perf_counter()
    train_set, test_set, vocab = load_imdb(
        run.imdb_vocab_words,
        run.imdb_max_len,
        train_reviews=run.imdb_train_reviews,
        test_reviews=run.imdb_test_reviews,
        seed=seed,
    )
    train_set, valid_set = train_set.hold_out(run.imdb_valid_reviews)
    print(f"data: {len(train_set):,} training, {len(valid_set):,} validation, {len(test_set):,} test reviews, "
          f"vocabulary {len(vocab):,}, max_len {run.imdb_max_len}: {time.perf_counter() - start:.1f} s")  # fmt: skip
    configs = run.configs(vocab_size=len(vocab), max_len=run.imdb_max_len)
    for name, config in configs.items():
        print(f"  {name}: {config}")

    def batches():  # the same shuffled batches, in the same order, for every model
        return ReviewBatches(train_set, run.imdb_batch, generator=torch.Generator().manual_seed(seed))

    def accuracy(model, reviews):
        return predict_labels(
            model, ReviewBatches(reviews, 4 * run.imdb_batch, shuffle=False), device=device
        ).accuracy

    results = race(
        configs,
        batches,
        seconds=run.imdb_seconds,
        lr=run.imdb_lr,
        evaluate=lambda model: {"accuracy": accuracy(model, valid_set)},
        test=lambda model: accuracy(model, test_set),
        evals=run.imdb_evals,
        warmup_steps=run.imdb_warmup,
        device=device,
        progress=False,
    )
    print(f"\nIMDb, {run.imdb_seconds:g} s of training each (evaluations not counted), lr {run.imdb_lr}:")
    print(f"{'model':<12} {'parameters':>11} {'steps':>6} {'seconds':>8} {'valid acc':>10} {'test acc':>9}")
    for name, r in results.items():
        valid = r.curve()[1][-1]
        print(
            f"{name:<12} {r.parameters:>11,} {r.steps:>6} {r.seconds:>8.1f} {valid:>10.2%} {r.test_accuracy:>9.2%}"
        )
    print("\nlearning curves (training seconds: validation accuracy):")
    for name, r in results.items():
        points = ", ".join(f"{s:.0f}: {a:.1%}" for s, a in zip(*r.curve(), strict=True))
        print(f"  {name:<12} {points}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--profile", default="cpu", help="run profile whose sequence sizes to use (default: cpu)"
    )
    parser.add_argument(
        "--only", choices=("timing", "task", "imdb"), help="run one of the three measurements"
    )
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seed_everything(args.seed)
    run = get_profile(args.profile).sequence
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = (
        torch.cuda.get_device_name() if device.type == "cuda" else platform.processor() or platform.machine()
    )
    print(f"torch {torch.__version__}, {name}, {torch.get_num_threads()} CPU threads, device {device.type}, "
          f"profile {args.profile}, load average at start {os.getloadavg()[0]:.2f}")  # fmt: skip
    start = time.perf_counter()
    if args.only in (None, "timing"):
        print("\n== step times ==")
        timing(run, device)
    if args.only in (None, "task"):
        print("\n== the match task: accuracy against the distance d ==")
        task(run, device)
    if args.only in (None, "imdb"):
        print("\n== IMDb: four models, one budget ==")
        imdb(run, device, args.seed)
    print(f"\ntotal {time.perf_counter() - start:.0f} s, load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
