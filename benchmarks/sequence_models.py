"""Benchmark: recurrence, convolution and self-attention measured side by side (chapter 08).

Four measurements, with the sizes of a run profile's ``sequence`` entry (default ``cpu``):

1. ``timing``: the time of one training step (forward, backward, AdamW update) of a GRU, a CNN and a
   transformer with the same number of parameters, on a fixed batch of random tokens, at every
   length of ``timing_lengths``; a log-log slope per model (time ~ t**slope, fitted over all
   lengths and over the longest three) and the first length at which the transformer's step is
   slower than the GRU's.
2. ``task``: the four models trained on the synthetic match task (is the token at position 0 the
   same as the token at position ``d``?) at each distance of ``task_distances``; test accuracy.
3. ``imdb``: a bag of embeddings, a GRU, a CNN and a transformer at one parameter budget, each trained
   for the same minutes of training steps (``imdb_train``, a ``TrainConfig(minutes=...)``) on the
   same IMDb batches; a table (parameters, steps, seconds, validation and test accuracy) and each
   learning curve against seconds (the history records the training seconds at each evaluation).
4. ``race`` (only when asked for): the same race at several budgets (``--budgets``, minutes), each
   model at its best of several peak learning rates (``--lrs``), picked on the validation reviews;
   only the picked run is scored on the test reviews. One line per run, then one table. With
   ``--picked`` the rates are given instead, and ``--seeds`` repeats each model from several seeds
   (mean and spread of validation and test accuracy).
   (``--lrs`` with ``--only task`` prints the match task's table once per learning rate.)

    python benchmarks/sequence_models.py                     # all three, cpu profile (about 8 minutes)
    python benchmarks/sequence_models.py --only timing       # the step-time table only
    python benchmarks/sequence_models.py --profile smoke     # seconds: a check that the script runs
    python benchmarks/sequence_models.py --only race         # 45 s and 3 min, 3 lrs each (about 50 minutes)
    python benchmarks/sequence_models.py --only race --budgets 3 --picked bag=1e-2 rnn=1e-2 cnn=1e-2 \
        transformer=3e-3 --seeds 0 1 2                      # the picked rates from 3 seeds (about 40 minutes)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import replace

import torch

from fromscratch.chapters import get_profile, seed_everything
from fromscratch.chapters.ch08_design_considerations.pipeline import crossover, step_time_table, task_accuracy
from fromscratch.data.imdb import ReviewBatches, load_imdb
from fromscratch.metrics import predict_labels
from fromscratch.metrics.paths import conv_reach
from fromscratch.models import SequenceClassifier
from fromscratch.training import train
from fromscratch.training.losses import classification_loss
from fromscratch.utils import count_parameters, loglog_slope


def timing(run, device: torch.device) -> None:
    configs = run.configs(vocab_size=run.timing_vocab, context=max(run.timing_lengths))
    del configs["bag"]  # nothing to time: it never mixes positions
    for name, config in configs.items():
        print(f"  {name}: {config}")
    lengths = run.timing_lengths
    table = step_time_table(
        configs, lengths, batch=run.timing_batch, repeats=run.timing_repeats, device=device
    )
    print(
        f"\nseconds per training step (forward + backward + update), batch {run.timing_batch}, "
        f"median of {run.timing_repeats}:"
    )
    print(f"{'t':>6} " + " ".join(f"{name:>12}" for name in table))
    for i, t in enumerate(lengths):
        print(f"{t:>6} " + " ".join(f"{table[name][i]:>12.4f}" for name in table))
    last = min(3, len(lengths))
    slopes = " ".join(f"{loglog_slope(lengths, table[name]):>12.2f}" for name in table)
    print(f"{'slope':>6} {slopes}   (log-log, all lengths)")
    slopes = " ".join(f"{loglog_slope(lengths, table[name], last=last):>12.2f}" for name in table)
    print(f"{'slope':>6} {slopes}   (log-log, the longest {last})")
    t = crossover(lengths, table["transformer"], table["rnn"])
    if t:
        print(f"the transformer's step is slower than the GRU's from t = {t}")
    else:
        print("the transformer's step is faster than the GRU's at every length timed")


def task(run, device: torch.device, lrs: list[float] | None = None, distances=None) -> None:
    """Every model on the match task at each distance; one table per peak learning rate in ``lrs``
    (default: the profile's one). No rate is picked: each table shows what that rate gives every model."""
    configs = run.task_configs()  # the four, plus the dilated CNN
    cnn = configs["cnn"]
    reach = conv_reach(cnn.depth, cnn.kernel)
    print(f"{run.task}\n{run.task_train}")
    print(
        f"CNN: {cnn.depth} blocks of kernel {cnn.kernel} see {reach} positions each way, so the "
        f"pooled CNN can compare tokens at most d = {2 * reach} apart"
    )
    for lr in lrs or [run.task_train.lr]:
        config = replace(run.task_train, lr=lr, progress=False)
        print(
            f"\ntest accuracy on {run.task.test_size:,} sequences after {config.steps:,} steps at lr {lr:g} "
            "(0.5 is chance):"
        )
        print(f"{'d':>4} " + " ".join(f"{name:>12}" for name in configs), flush=True)
        for d in distances or run.task_distances:
            training, test = run.task.split(d)  # the same sequences and batches for every model
            scores = []
            for model_config in configs.values():
                torch.manual_seed(0)
                model = SequenceClassifier(model_config)
                train(model, run.task.batches(training), classification_loss, config, device=device)
                scores.append(task_accuracy(model, test, device=device))
            print(f"{d:>4} " + " ".join(f"{score:>12.3f}" for score in scores), flush=True)


def imdb_data(run, seed: int):
    """Chapter 08's IMDb split: (training, validation, test reviews, vocabulary)."""
    start = time.perf_counter()
    train_set, test_set, vocab = load_imdb(
        run.imdb_vocab_words,
        run.imdb_max_len,
        train_reviews=run.imdb_train_reviews,
        test_reviews=run.imdb_test_reviews,
        seed=seed,
    )
    train_set, valid_set = train_set.hold_out(run.imdb_valid_reviews)
    print(
        f"data: {len(train_set):,} training, {len(valid_set):,} validation, {len(test_set):,} test "
        f"reviews, vocabulary {len(vocab):,}, context {run.imdb_max_len}: "
        f"{time.perf_counter() - start:.1f} s"
    )
    return train_set, valid_set, test_set, vocab


def imdb(run, device: torch.device, seed: int) -> None:
    train_set, valid_set, test_set, vocab = imdb_data(run, seed)
    configs = run.configs(vocab_size=len(vocab), context=run.imdb_max_len)
    for name, config in configs.items():
        print(f"  {name}: {config}")
    config = replace(run.imdb_train, progress=False)
    print(f"  every model: {config}")

    def accuracy(model, reviews):
        batches = ReviewBatches(reviews, 4 * run.imdb_batch, shuffle=False)
        return predict_labels(model, batches, device=device).accuracy

    rows, curves = [], {}
    for name, model_config in configs.items():
        torch.manual_seed(0)
        model = SequenceClassifier(model_config)
        order = torch.Generator().manual_seed(seed)  # the same batches, in the same order, for every model
        history = train(
            model,
            ReviewBatches(train_set, run.imdb_batch, generator=order),
            classification_loss,
            config,
            device=device,
            evaluate=lambda m: {"accuracy": accuracy(m, valid_set)},
        )
        curves[name] = history.series("accuracy", x="seconds")
        steps, seconds, valid = history.series("loss")[0][-1], curves[name][0][-1], curves[name][1][-1]
        rows.append((name, count_parameters(model), steps, seconds, valid, accuracy(model, test_set)))
    minutes = run.imdb_train.minutes
    print(
        f"\nIMDb, {60 * minutes:g} s of training each (evaluations not counted), lr {config.lr}, "
        f"warm-up {config.warmup_steps} steps, validation every {config.eval_every} steps:"
    )
    print(f"{'model':<12} {'parameters':>11} {'steps':>6} {'seconds':>8} {'valid acc':>10} {'test acc':>9}")
    for name, parameters, steps, seconds, valid, test in rows:
        print(f"{name:<12} {parameters:>11,} {steps:>6} {seconds:>8.1f} {valid:>10.2%} {test:>9.2%}")
    print("\nlearning curves (training seconds: validation accuracy):")
    for name, (seconds, accuracies) in curves.items():
        points = ", ".join(f"{s:.0f}: {a:.1%}" for s, a in zip(seconds, accuracies, strict=True))
        print(f"  {name:<12} {points}")


def race(
    run,
    device: torch.device,
    seed: int,
    budgets: list[float],
    lrs: list[float],
    seeds: list[int] | None = None,
    picked: dict[str, float] | None = None,
) -> None:
    """The IMDb race at several budgets, each model at its best peak learning rate for that budget.

    Every (budget, model, lr) trains from the same initial weights on the same batches; the lr is
    picked on the validation reviews, and only the picked run is scored on the test reviews.
    ``picked`` (``{"bag": 1e-2, ...}``) skips the pick and uses these rates; ``seeds`` then trains each
    model at its rate from every seed (initial weights and batch order; the reviews stay those of
    ``seed``) and prints the mean, the spread and every seed's validation and test accuracy."""
    train_set, valid_set, test_set, vocab = imdb_data(run, seed)
    configs = run.configs(vocab_size=len(vocab), context=run.imdb_max_len)

    def accuracy(model, reviews):
        batches = ReviewBatches(reviews, 4 * run.imdb_batch, shuffle=False)
        return predict_labels(model, batches, device=device).accuracy

    def one_run(model_config, minutes: float, lr: float, init: int, order_seed: int):
        config = replace(run.imdb_train, minutes=minutes, lr=lr, eval_every=None, progress=False)
        torch.manual_seed(init)
        model = SequenceClassifier(model_config)
        order = torch.Generator().manual_seed(order_seed)
        batches = ReviewBatches(train_set, run.imdb_batch, generator=order)
        history = train(
            model,
            batches,
            classification_loss,
            config,
            device=device,
            evaluate=lambda m: {"accuracy": accuracy(m, valid_set)},
        )
        return history.series("loss")[0][-1], history.last("accuracy"), history.last("seconds"), model

    if picked:
        seeded_race(configs, budgets, picked, seeds or [seed], one_run, accuracy, test_set)
        return
    summary = []
    for minutes in budgets:
        for name, model_config in configs.items():
            best = None  # (validation accuracy, lr, steps, seconds, model)
            for lr in lrs:
                try:
                    steps, valid, seconds, model = one_run(model_config, minutes, lr, 0, seed)
                except FloatingPointError:  # this lr diverged: it cannot be the pick
                    print(f"budget={60 * minutes:g}s model={name} lr={lr:g} diverged", flush=True)
                    continue
                print(
                    f"budget={60 * minutes:g}s model={name} lr={lr:g} steps={steps} seconds={seconds:.1f} "
                    f"valid={valid:.4f} load={os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                if best is None or valid > best[0]:
                    best = (valid, lr, steps, seconds, model)
            valid, lr, steps, seconds, model = best
            summary.append((60 * minutes, name, lr, steps, seconds, valid, accuracy(model, test_set)))
            print(f"budget={60 * minutes:g}s model={name} picked lr={lr:g} test={summary[-1][-1]:.4f}")
    tried = ", ".join(f"{lr:g}" for lr in lrs)
    print(f"\nIMDb at equal time, each model at its best of lr {tried} (picked on validation):")
    header = ("budget", "model", "lr", "steps", "seconds", "valid acc", "test acc")
    print("{:>7} {:<12} {:>7} {:>6} {:>8} {:>10} {:>9}".format(*header))
    for budget, name, lr, steps, seconds, valid, test in summary:
        print(f"{budget:>6g}s {name:<12} {lr:>7g} {steps:>6} {seconds:>8.1f} {valid:>10.2%} {test:>9.2%}")


def seeded_race(configs, budgets, picked, seeds, one_run, accuracy, test_set) -> None:
    """Each model at its ``picked`` rate, from every seed: one line per run, then mean and spread."""
    results = []  # (budget s, name, lr, [(steps, valid, test), ...])
    for minutes in budgets:
        for name, model_config in configs.items():
            lr, runs = picked[name], []
            for s in seeds:
                steps, valid, seconds, model = one_run(model_config, minutes, lr, s, s)
                runs.append((steps, valid, accuracy(model, test_set)))
                print(
                    f"budget={60 * minutes:g}s model={name} lr={lr:g} seed={s} steps={steps} "
                    f"seconds={seconds:.1f} valid={valid:.4f} test={runs[-1][2]:.4f} "
                    f"load={os.getloadavg()[0]:.2f}",
                    flush=True,
                )
            results.append((60 * minutes, name, lr, runs))
    print(f"\nIMDb at equal time, each model at its picked rate, seeds {' '.join(map(str, seeds))}:")
    header = ("budget", "model", "lr", "steps", "valid mean", "std", "test mean", "std", "test per seed")
    print("{:>7} {:<12} {:>7} {:>6} {:>10} {:>6} {:>9} {:>6}  {}".format(*header))
    for budget, name, lr, runs in results:
        steps = statistics.mean(r[0] for r in runs)
        valid, test = [r[1] for r in runs], [r[2] for r in runs]
        sv, st = (statistics.stdev(v) if len(v) > 1 else 0.0 for v in (valid, test))
        each = " ".join(f"{t:.1%}" for t in test)
        print(
            f"{budget:>6g}s {name:<12} {lr:>7g} {steps:>6.0f} {statistics.mean(valid):>10.2%} {sv:>6.2%} "
            f"{statistics.mean(test):>9.2%} {st:>6.2%}  {each}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--profile", default="cpu", help="run profile whose sequence sizes to use (default: cpu)"
    )
    parser.add_argument(
        "--only",
        choices=("timing", "task", "imdb", "race"),
        help="run one measurement (the race runs only when asked)",
    )
    parser.add_argument(
        "--budgets", type=float, nargs="+", default=[0.75, 3.0], help="race: minutes of training per run"
    )
    parser.add_argument(
        "--lrs",
        type=float,
        nargs="+",
        help="race: peak learning rates to try (default 1e-3 3e-3 1e-2); task: one table per rate",
    )
    parser.add_argument("--distances", type=int, nargs="+", help="task: distances d (default: the profile's)")
    parser.add_argument(
        "--picked",
        nargs="+",
        metavar="MODEL=LR",
        help="race: skip the pick, train each model at this rate (e.g. bag=1e-2 rnn=1e-2 cnn=1e-2 "
        "transformer=3e-3), from every seed of --seeds",
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="race with --picked: the seeds (default: --seed)"
    )
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seed_everything(args.seed)
    run = get_profile(args.profile).ch08
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = (
        torch.cuda.get_device_name() if device.type == "cuda" else platform.processor() or platform.machine()
    )
    print(
        f"torch {torch.__version__}, {name}, {torch.get_num_threads()} CPU threads, "
        f"device {device.type}, profile {args.profile}, load average at start {os.getloadavg()[0]:.2f}"
    )
    start = time.perf_counter()
    if args.only in (None, "timing"):
        print("\n== step times ==")
        timing(run, device)
    if args.only in (None, "task"):
        print("\n== the match task: accuracy against the distance d ==")
        task(run, device, args.lrs, args.distances)
    if args.only in (None, "imdb"):
        print("\n== IMDb: four models, one budget ==")
        imdb(run, device, args.seed)
    if args.only == "race":
        print("\n== IMDb: four models at several budgets, each at its best learning rate ==")
        picked = {k: float(v) for k, v in (p.split("=") for p in args.picked)} if args.picked else None
        race(run, device, args.seed, args.budgets, args.lrs or [1e-3, 3e-3, 1e-2], args.seeds, picked)
    print(f"\ntotal {time.perf_counter() - start:.0f} s, load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
