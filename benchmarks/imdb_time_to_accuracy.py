"""Benchmark: how accurate the `cpu` profile's IMDb classifier gets, and how long it takes (chapter 06).

Trains chapter 06's mean-pooling ``Classifier`` with the sizes of ``get_profile("cpu").ch06`` (or
another profile's) with ``fromscratch.training`` on 2 CPU threads, on the training reviews the chapter
uses (all but its ``valid_reviews`` held out), then scores the whole test set (25,000 reviews). It prints
the wall time of each phase, from reading the reviews to the last test prediction, and the test
accuracy. The target: at least 85 % in at most 10 minutes on a 2-core CPU.

``--cold`` tokenises the 50,000 review files afresh instead of reading the token cache a previous
run left (``fromscratch.data.imdb``); the time of that reading is part of the total either way.

``--seeds 0 1 2 --models bag mean cls`` repeats the chapter's three models (the bag of embeddings of
6.3, the transformer with mean pooling of 6.4 and with a CLS token of 6.9), each from several seeds
(the seed sets the initial weights, the batch order and dropout; the reviews and their split stay the
chapter's), and prints every run's test accuracy, then each model's mean and spread: the evidence
behind the chapter's comparisons, which its own run makes once.

    python benchmarks/imdb_time_to_accuracy.py                  # the benchmark (about 10 minutes)
    python benchmarks/imdb_time_to_accuracy.py --cold           # ... counting the tokenisation too
    python benchmarks/imdb_time_to_accuracy.py --quick          # seconds: the smoke profile's sizes
    python benchmarks/imdb_time_to_accuracy.py --seeds 0 1 2 --models bag mean cls   # about 30 minutes
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
from fromscratch.data.imdb import ReviewBatches, load_imdb
from fromscratch.metrics import predict_labels
from fromscratch.models import Classifier
from fromscratch.training import train
from fromscratch.training.losses import classification_loss

TARGET_ACCURACY, TARGET_MINUTES = 0.85, 10.0
MODELS = {  # chapter 06's three models: (what the Classifier changes, whether batches carry <cls>)
    "bag": ({"depth": 0, "positions": None, "dropout": 0.0}, False),  # 6.3: embeddings, a mean, a layer
    "mean": ({}, False),  # 6.4: the profile's transformer, mean pooling
    "cls": ({"pooling": "cls"}, True),  # 6.9: the same, classifying from a <cls> token
}


def one_run(run, name: str, seed: int, train_set, test_set, vocab, device) -> tuple[int, float, float]:
    """Train chapter 06's model ``name`` from ``seed``: (steps, training seconds, test accuracy)."""
    fields, cls = MODELS[name]
    seed_everything(seed)
    model = Classifier(run.model, vocab_size=len(vocab), **fields)  # len(vocab): words + 3 specials
    order = torch.Generator().manual_seed(seed)
    batches = ReviewBatches(train_set, run.batch_size, cls=cls, generator=order)
    config = replace(run.train, progress=False)  # the profile's epochs, learning rate, warm-up, decay
    start = time.perf_counter()
    history = train(model, batches, classification_loss, config, device=device)
    seconds = time.perf_counter() - start
    test_batches = ReviewBatches(test_set, 4 * run.batch_size, shuffle=False, cls=cls)
    accuracy = predict_labels(model, test_batches, device=device).accuracy
    return history.rows[-1]["step"], seconds, accuracy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="cpu", help="run profile whose imdb sizes to use (default: cpu)")
    parser.add_argument(
        "--quick", action="store_true", help="the smoke profile: a check that the script runs"
    )
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument(
        "--cold", action="store_true", help="tokenise the review files instead of using the cache"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="repeat --models from these seeds; a table of mean and spread"
    )
    parser.add_argument(
        "--models", nargs="+", choices=sorted(MODELS), default=["mean"], help="with --seeds (default: mean)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = get_profile("smoke" if args.quick else args.profile).ch06
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{args.threads} CPU threads, device {device.type}, load average {os.getloadavg()[0]:.2f}\n{run}"
    )

    start = time.perf_counter()
    train_set, test_set, vocab = load_imdb(
        run.vocab_words,
        run.model.context,
        train_reviews=run.train_reviews,
        test_reviews=run.test_reviews,
        seed=0 if args.seeds else args.seed,  # with --seeds: the chapter's reviews for every seed
        cache=not args.cold,
    )
    train_set, _ = train_set.hold_out(run.valid_reviews)  # as chapter 06 does (there for learning curves)
    data_s = time.perf_counter() - start
    print(
        f"data: {len(train_set):,} training and {len(test_set):,} test reviews, vocabulary {len(vocab):,}: "
        f"{data_s:.1f} s",
        flush=True,
    )
    if args.seeds:
        seeds_table(run, args, train_set, test_set, vocab, device)
        return

    model = Classifier(run.model, vocab_size=len(vocab))  # len(vocab): vocab_words + 3 specials, or fewer
    batches = ReviewBatches(train_set, run.batch_size)
    config = replace(run.train, progress=False)  # the profile's epochs, learning rate, warm-up, decay
    history = train(model, batches, classification_loss, config, device=device)
    train_s = time.perf_counter() - start - data_s
    print(
        f"training: {history.rows[-1]['step']:,} steps ({run.train.epochs} epochs), last loss "
        f"{history.last('loss'):.3f}: {train_s:.1f} s",
        flush=True,
    )

    predictions = predict_labels(
        model, ReviewBatches(test_set, 4 * run.batch_size, shuffle=False), device=device
    )
    total_s = time.perf_counter() - start
    print(
        f"test: {predictions.accuracy:.2%} accuracy on {len(test_set):,} reviews: "
        f"{total_s - data_s - train_s:.1f} s"
    )
    met = predictions.accuracy >= TARGET_ACCURACY and total_s <= TARGET_MINUTES * 60
    print(
        f"\ntotal {total_s / 60:.1f} min, test accuracy {predictions.accuracy:.2%} "
        f"(target: >= {TARGET_ACCURACY:.0%} within {TARGET_MINUTES:.0f} min: {'met' if met else 'NOT met'})"
    )


def seeds_table(run, args, train_set, test_set, vocab, device) -> None:
    """Every model of ``--models`` from every seed of ``--seeds``; then mean, spread and range."""
    scores: dict[str, list[float]] = {name: [] for name in args.models}
    for seed in args.seeds:
        for name in args.models:
            steps, seconds, accuracy = one_run(run, name, seed, train_set, test_set, vocab, device)
            scores[name].append(accuracy)
            print(
                f"model={name} seed={seed} steps={steps} seconds={seconds:.1f} test={accuracy:.4f} "
                f"load={os.getloadavg()[0]:.2f}",
                flush=True,
            )
    print(f"\ntest accuracy on {len(test_set):,} reviews, seeds {' '.join(map(str, args.seeds))}:")
    print(f"{'model':<6} {'mean':>7} {'std':>6} {'min':>7} {'max':>7}")
    for name, values in scores.items():
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        mean, low, high = statistics.mean(values), min(values), max(values)
        print(f"{name:<6} {mean:>7.2%} {spread:>6.2%} {low:>7.2%} {high:>7.2%}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
