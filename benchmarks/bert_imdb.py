"""Benchmark: our small BERT on IMDb, pretrained with masked LM then fine-tuned (chapter 10).

With the sizes of ``get_profile("cpu").ch10`` (or another profile's), on 2 CPU threads:

1. masked-LM pretraining on the 50,000 unlabelled reviews and the 25,000 training reviews' text;
2. fine-tuning on the 25,000 labelled training reviews;
3. the accuracy on all 25,000 test reviews.

It prints the wall time of each phase and the test accuracy. The target: at least 89 %,
above chapter 06's bag of embeddings (88.0 %), with pretraining and fine-tuning within 25 minutes on
2 cores. The checkpoints it writes (under ``$FROMSCRATCH_DATA/checkpoints``) are what chapter 10
loads in the ``cpu`` profile; ``--fresh`` ignores existing ones and trains again.

    python benchmarks/bert_imdb.py            # the benchmark (about 21 minutes on 2 idle cores)
    python benchmarks/bert_imdb.py --control  # and the same fine-tuning from random weights (+7 minutes)
    python benchmarks/bert_imdb.py --quick    # seconds: the smoke profile's sizes
    python benchmarks/bert_imdb.py --pretrain-steps 3000   # the cpu sizes, pretrained longer
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import time

import torch

from fromscratch.chapters import get_profile, seed_everything
from fromscratch.chapters.ch10_modern_transformers.bert_imdb import (
    bert_checkpoint,
    fill_mask,
    imdb_for_bert,
    pretraining_batches,
    test_accuracy,
)
from fromscratch.data.imdb import ReviewBatches
from fromscratch.models.bert import BertForClassification, BertForPretraining
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.training import train
from fromscratch.training.losses import classification_loss, masked_lm_loss
from fromscratch.utils import count_parameters

TARGET_ACCURACY, TARGET_MINUTES = 0.89, 25.0


def finetune(run, data, encoder, config, *, device, seed):
    """Fine-tune a classifier on ``encoder`` as chapter 10 does; returns it, its history and the seconds.
    Its head draws from torch's global generator: seed it first."""
    classifier = use_pool_dropout(
        BertForClassification(encoder, 2, dropout=run.bert.dropout, pooling=run.pooling)
    )
    generator = torch.Generator().manual_seed(seed)
    batches = ReviewBatches(data.train, run.finetune_batch, cls=True, generator=generator)
    start = time.perf_counter()
    history = train(classifier, batches, classification_loss, config, device=device)
    return classifier, history, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--profile", default="cpu", help="run profile whose modern sizes to use (default: cpu)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the smoke profile: a check that the script runs"
    )
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument(
        "--fresh", action="store_true", help="delete this run's checkpoints first and train again"
    )
    parser.add_argument("--pretrain-steps", type=int, help="override the profile's pretraining steps")
    parser.add_argument("--finetune-epochs", type=float, help="override the profile's fine-tuning epochs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--control",
        action="store_true",
        help="also fine-tune the same BERT from random weights (no pretraining)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = get_profile("smoke" if args.quick else args.profile).ch10
    if args.pretrain_steps is not None:
        run = dataclasses.replace(
            run, pretraining=dataclasses.replace(run.pretraining, steps=args.pretrain_steps)
        )
    if args.finetune_epochs is not None:
        run = dataclasses.replace(
            run, finetuning=dataclasses.replace(run.finetuning, epochs=args.finetune_epochs)
        )
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{args.threads} CPU threads, device {device.type}, load average at start {os.getloadavg()}\n{run}",
        flush=True,
    )
    # the chapter's checkpoints: the same names (bert_checkpoint), so the chapter loads what this trains
    pretraining, finetuning = (
        dataclasses.replace(
            config, checkpoint=bert_checkpoint(run, stage, seed=args.seed), resume=True, progress=False
        )
        for config, stage in ((run.pretraining, "pretraining"), (run.finetuning, "finetuning"))
    )
    if args.fresh:
        for config in (pretraining, finetuning):
            config.checkpoint.unlink(missing_ok=True)

    start = time.perf_counter()
    data = imdb_for_bert(run, seed=args.seed)
    batches = pretraining_batches(run, data, seed=args.seed)
    data_s = time.perf_counter() - start
    print(
        f"data: {len(batches.seqs):,} texts for pretraining, {len(data.train):,} training and "
        f"{len(data.test):,} test reviews: {data_s:.1f} s",
        flush=True,
    )

    mark = time.perf_counter()
    torch.manual_seed(args.seed)
    model = use_pool_dropout(BertForPretraining(run.bert))  # cheaper dropout masks on a CPU
    history = train(model, batches, masked_lm_loss, pretraining, device=device)
    pretrain_s = time.perf_counter() - mark
    print(
        f"pretraining: {count_parameters(model):,} parameters, {pretraining.steps:,} steps of "
        f"{run.pretrain_batch} x <= {run.pretrain_len} tokens, masked-LM loss {history.last('loss'):.3f} "
        f"(mean of the last 50 steps {statistics.mean(history.series('loss')[1][-50:]):.3f}): "
        f"{pretrain_s:.1f} s",
        flush=True,
    )
    for text in ("this movie was [MASK] .", "the [MASK] was terrible ."):
        words = ", ".join(f"{w} {p:.2f}" for w, p in fill_mask(model, data, text))
        print(f"  {text!r}: {words}")

    torch.manual_seed(args.seed)
    classifier, history, finetune_s = finetune(
        run, data, model.encoder, finetuning, device=device, seed=args.seed
    )
    print(
        f"fine-tuning: {finetuning.epochs} epochs, last loss {history.last('loss'):.3f}: {finetune_s:.1f} s"
    )

    mark = time.perf_counter()
    accuracy = test_accuracy(classifier, data, device=device)
    test_s = time.perf_counter() - mark
    print(f"test: {accuracy:.2%} accuracy on {len(data.test):,} reviews: {test_s:.1f} s")
    if args.control:
        torch.manual_seed(args.seed)
        fresh = BertForPretraining(run.bert).encoder  # random weights, no checkpoint
        control_config = dataclasses.replace(finetuning, checkpoint=None, resume=False)
        control, _, control_s = finetune(run, data, fresh, control_config, device=device, seed=args.seed)
        control_accuracy = test_accuracy(control, data, device=device)
        print(
            f"control, the same fine-tuning without pretraining: {control_accuracy:.2%} ({control_s:.1f} s)"
        )
    minutes = (pretrain_s + finetune_s) / 60
    met = accuracy >= TARGET_ACCURACY and minutes <= TARGET_MINUTES
    print(
        f"\npretraining {pretrain_s / 60:.1f} min + fine-tuning {finetune_s / 60:.1f} min = "
        f"{minutes:.1f} min, test accuracy {accuracy:.2%} (target: >= {TARGET_ACCURACY:.0%} within "
        f"{TARGET_MINUTES:.0f} min: {'met' if met else 'NOT met'}); load average at the end {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
