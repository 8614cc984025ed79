"""Train chapter 09's translation models on Multi30k (English -> German) and report test BLEU.

Trains the run profile's transformer encoder-decoder for ``train.minutes`` of training steps (the
learning rate decays to zero exactly then), translates test_2016_flickr greedily and with beam
search, and ends with one line::

    test BLEU <score> (<sacrebleu signature>) after <minutes> min of training

With ``--rnn`` it first trains the two RNN baselines (GRU bottleneck, Bahdanau attention) for
``rnn_train.minutes`` each. Every run goes through the chapter's own call, ``train(model, batches,
translation_loss, config)``, with the checkpoint that
:func:`fromscratch.chapters.ch09_encoder_decoder.pipeline.translation_checkpoint` names from the run's
settings: chapter 09 builds the same name, so it loads these weights instead of training again
(``resume=True``: a
finished run returns at once, an interrupted one goes on).

    export FROMSCRATCH_MIRROR=../shared/data FROMSCRATCH_DATA=_build/data-cache
    flock /tmp/heavy.lock python benchmarks/translation.py --rnn      # cpu profile, about 20 minutes
    python benchmarks/translation.py --profile smoke --rnn           # seconds, to check it runs

To try other settings, ``--minutes``, ``--lr``, ``--rnn-minutes``, ``--rnn-lr`` and
``--rnn-max-tokens`` override the profile's (their checkpoints get other names, which the chapter
never loads), ``--val`` scores on the validation split, so that choosing settings does not look
at the test set, and ``--greedy`` skips beam search. ``--fresh`` trains again over a finished
checkpoint (to time it); ``--no-save`` writes none. Each model is also scored (greedy BLEU on the first
``val_pairs`` validation pairs) every ``eval_every`` steps, as chapter 09 plots it against minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import platform
import time
from typing import Any, NamedTuple

import torch

from fromscratch.chapters import get_profile, pick_device, seed_everything
from fromscratch.chapters.ch09_encoder_decoder.pipeline import (
    TranslationData,
    evaluate,
    prepare,
    training_minutes,
    translation_checkpoint,
    val_bleu,
)
from fromscratch.data.multi30k import TokenBatches
from fromscratch.models import EncoderDecoder, RNNSeq2Seq
from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import translation_loss
from fromscratch.utils import count_parameters


class Job(NamedTuple):
    """One model to train and score."""

    title: str  # printed
    name: str  # the run's name for translation_checkpoint: "transformer", "rnn" or "rnn_attention"
    model_class: type  # EncoderDecoder or RNNSeq2Seq
    model_config: Any  # its config
    train_config: TrainConfig  # how it trains (the profile's, perhaps with overrides)
    run: Any  # the TranslationRun whose data fields it trains on (max_tokens perhaps overridden)
    beams: tuple[int, ...]  # beam sizes to score (1: greedy)


def run_one(job: Job, data: TranslationData, args, *, device) -> tuple[float, dict]:
    """Train one model as chapter 09 does, and score it. Returns (minutes in training steps, {beam: BLEU})."""
    title, name, model_class, model_config, train_config, run, beams = job
    path = None if args.no_save else translation_checkpoint(name, model_config, train_config, run)
    config = dataclasses.replace(train_config, checkpoint=path, resume=not args.fresh)
    found = path is not None and path.is_file() and not args.fresh
    seed_everything(0)
    model = model_class(model_config)
    print(f"\n## {title}: {count_parameters(model):,} parameters; {config}")
    loss = functools.partial(translation_loss, label_smoothing=run.label_smoothing)
    start = time.perf_counter()
    scorer = val_bleu(data, run.val_pairs) if config.eval_every else None  # as the chapter evaluates
    batches = TokenBatches(data.train, run.max_tokens, seed=0)
    history = train(model, batches, loss, config, device=device, evaluate=scorer)
    took = time.perf_counter() - start
    minutes = took / 60 if path is None else training_minutes(config)  # a loaded run's own time too
    steps = len(history.series("loss")[1])
    print(
        f"{steps} steps in {minutes:.2f} min of training ({60 * minutes / steps:.2f} s/step); this call took "
        f"{took / 60:.2f} min{' (resumed from ' + str(path) + ')' if found else ''}; "
        f"final loss {history.last('loss'):.3f}; load average now {os.getloadavg()}"
    )
    scores = {}
    for beam in beams:
        start = time.perf_counter()
        score, _ = evaluate(model, data, beam_size=beam)
        scores[beam] = score
        how = "greedy" if beam == 1 else f"beam {beam}"
        print(f"{title}, {how}: {data.split} BLEU {score} ({time.perf_counter() - start:.0f} s to translate)")
    return minutes, scores


def overridden(config: TrainConfig, **changes) -> TrainConfig:
    """``config`` with the command line's overrides (those that are not None)."""
    return dataclasses.replace(config, **{k: v for k, v in changes.items() if v is not None})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "gpu"])
    parser.add_argument("--rnn", action="store_true", help="also train the two RNN baselines")
    parser.add_argument("--only-rnn", action="store_true", help="train only the two RNN baselines")
    parser.add_argument(
        "--minutes", type=float, default=None, help="override the transformer's training time"
    )
    parser.add_argument(
        "--lr", type=float, default=None, help="override the transformer's peak learning rate"
    )
    parser.add_argument("--rnn-minutes", type=float, default=None, help="override the RNNs' training time")
    parser.add_argument("--rnn-lr", type=float, default=None, help="override the RNNs' peak learning rate")
    parser.add_argument(
        "--rnn-max-tokens", type=int, default=None, help="override the RNNs' tokens per batch"
    )
    parser.add_argument(
        "--val", action="store_true", help="score on the validation split (to choose settings)"
    )
    parser.add_argument(
        "--greedy", action="store_true", help="score greedy decoding only (faster, to choose settings)"
    )
    parser.add_argument("--fresh", action="store_true", help="train again even over a finished checkpoint")
    parser.add_argument("--no-save", action="store_true", help="do not write checkpoints")
    args = parser.parse_args()

    prof = get_profile(args.profile)
    run = prof.ch09
    device = pick_device() if args.profile == "gpu" else torch.device("cpu")
    if prof.cpu_threads:
        torch.set_num_threads(prof.cpu_threads)
    where = platform.processor() or platform.machine()
    print(
        f"load average at start: {os.getloadavg()}; {where}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, device {device}"
    )
    print(f"profile {prof.name}: {run}")
    data = prepare(run)
    if args.val:
        data = dataclasses.replace(data, test=data.raw.val, split="val")
    print(
        f"{len(data.train):,} training pairs, {len(data.test):,} {data.split} pairs, "
        f"vocabulary {run.vocab_size:,}"
    )

    if args.rnn or args.only_rnn:
        rnn_train = overridden(run.rnn_train, minutes=args.rnn_minutes, lr=args.rnn_lr)
        rnn_run = dataclasses.replace(run, max_tokens=args.rnn_max_tokens or run.max_tokens)
        for title, name, config in (
            ("GRU bottleneck", "rnn", run.rnn),
            ("GRU + Bahdanau attention", "rnn_attention", run.rnn_attention),
        ):
            job = Job(title, name, RNNSeq2Seq, config, rnn_train, rnn_run, (1,))
            run_one(job, data, args, device=device)
    if args.only_rnn:
        return
    train_config = overridden(run.train, minutes=args.minutes, lr=args.lr)
    beams = (1,) if args.greedy else (1, run.beam_size)
    job = Job("transformer", "transformer", EncoderDecoder, run.model, train_config, run, beams)
    minutes, scores = run_one(job, data, args, device=device)
    beam = max(scores, key=lambda k: scores[k].score)
    how = "greedy" if beam == 1 else f"beam {beam}"
    print(f"config: {dataclasses.asdict(run.model)}")
    print(
        f"{data.split} BLEU {scores[beam].score:.1f} ({scores[beam].signature}) after {minutes:.1f} min of "
        f"training ({how}, {args.profile} profile; load average at the end {os.getloadavg()})"
    )


if __name__ == "__main__":
    main()
