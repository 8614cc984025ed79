"""Train chapter 09's translation models on Multi30k (English -> German) and report test BLEU.

Trains the run profile's transformer encoder-decoder for ``minutes`` of wall-clock time (the
learning rate decays to zero exactly then), translates test_2016_flickr greedily and with beam
search, and ends with one line::

    test BLEU <score> (<sacrebleu signature>) after <minutes> min of training

With ``--rnn`` it first trains the two RNN baselines (GRU bottleneck, Bahdanau attention) for
``rnn_minutes`` each. The trained weights are saved under the data cache with a name derived from
the configuration, where chapter 09 finds and loads them instead of training again.

    export FROMSCRATCH_MIRROR=../shared/data FROMSCRATCH_DATA=_build/data-cache
    flock /tmp/heavy.lock python benchmarks/translation.py --rnn      # cpu profile, about 20 minutes
    python benchmarks/translation.py --profile smoke --rnn           # seconds, to check it runs

To try other settings, ``--minutes``, ``--lr``, ``--rnn-minutes``, ``--rnn-lr`` and
``--rnn-max-tokens`` override the profile's (nothing is saved then), and ``--val`` scores on the
validation split, so that choosing settings does not look at the test set.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time

import torch

from fromscratch.models import EncoderDecoder, RNNSeq2Seq
from fromscratch.profiles import get_profile, pick_device, seed_everything
from fromscratch.recipes.translation import checkpoint_name, evaluate, prepare, train_for_minutes
from fromscratch.training.checkpoints import checkpoint_path, save_checkpoint
from fromscratch.utils import count_parameters


def run_one(name, kind, model, data, run, *, schedule, device, beams, save):
    print(f"\n## {name}: {count_parameters(model):,} parameters; {schedule}")
    info = train_for_minutes(model, data, run, **schedule, device=device)
    print(
        f"{info['steps']} steps at {info['seconds_per_step']:.2f} s/step, "
        f"trained in {info['minutes']:.2f} min; final loss {info['history'].last('loss'):.3f}; "
        f"load average now {os.getloadavg()}"
    )
    if save:
        path = checkpoint_path(checkpoint_name(kind, model.config, run, **schedule))
        record = {k: info[k] for k in ("steps", "minutes", "seconds_per_step")}
        record["loss"] = info["history"].series("loss")
        save_checkpoint(path, {"model": model.state_dict(), "info": record})
        print(f"saved {path}")
    scores = {}
    for beam in beams:
        start = time.perf_counter()
        score, _ = evaluate(model, data, beam_size=beam)
        scores[beam] = score
        print(f"{name}, {'greedy' if beam == 1 else f'beam {beam}'}: {data.split} BLEU {score} "
              f"({time.perf_counter() - start:.0f} s to translate)")  # fmt: skip
    return info, scores


def overridden(schedule: dict, **changes) -> dict:
    """``schedule`` with the command line's overrides (those that are not None)."""
    return {**schedule, **{k: v for k, v in changes.items() if v is not None}}


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
    parser.add_argument("--no-save", action="store_true", help="do not save checkpoints")
    args = parser.parse_args()

    prof = get_profile(args.profile)
    run = prof.translation
    device = pick_device() if args.profile == "gpu" else torch.device("cpu")
    if prof.cpu_threads:
        torch.set_num_threads(prof.cpu_threads)
    print(f"load average at start: {os.getloadavg()}; {platform.processor() or platform.machine()}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {device}")  # fmt: skip
    print(f"profile {prof.name}: {run}")
    data = prepare(run)
    if args.val:
        data = dataclasses.replace(data, test=data.raw.val, split="val")
    print(
        f"{len(data.train):,} training pairs, {len(data.test):,} {data.split} pairs, vocabulary {run.vocab_size:,}"
    )

    if args.rnn or args.only_rnn:
        for attention, name in ((False, "GRU bottleneck"), (True, "GRU + Bahdanau attention")):
            seed_everything(0)
            model = RNNSeq2Seq(run.rnn(attention))
            kind = "rnn_attention" if attention else "rnn"
            changes = dict(minutes=args.rnn_minutes, lr=args.rnn_lr, max_tokens=args.rnn_max_tokens)
            schedule = overridden(run.schedule(kind), **changes)
            save = not args.no_save and schedule == run.schedule(kind)
            run_one(name, kind, model, data, run, schedule=schedule, device=device, beams=(1,), save=save)
    if args.only_rnn:
        return
    seed_everything(0)
    model = EncoderDecoder(run.model)
    schedule = overridden(run.schedule("transformer"), minutes=args.minutes, lr=args.lr)
    save = not args.no_save and schedule == run.schedule("transformer")
    info, scores = run_one("transformer", "transformer", model, data, run, schedule=schedule, device=device,
                           beams=(1, run.beam_size), save=save)  # fmt: skip
    beam = max(scores, key=lambda k: scores[k].score)
    how = "greedy" if beam == 1 else f"beam {beam}"
    print(f"config: {dataclasses.asdict(model.config)}")
    print(f"{data.split} BLEU {scores[beam].score:.1f} ({scores[beam].signature}) after {info['minutes']:.1f} min of "
          f"training ({how}, {args.profile} profile; load average at the end {os.getloadavg()})")  # fmt: skip


if __name__ == "__main__":
    main()
