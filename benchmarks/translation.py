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
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time

import torch

from fromscratch.checkpoints import checkpoint_path, save_checkpoint
from fromscratch.models import EncoderDecoder, RNNSeq2Seq
from fromscratch.profiles import get_profile, pick_device, seed_everything
from fromscratch.seq2seq import checkpoint_name, evaluate, prepare, train_for_minutes
from fromscratch.utils import count_parameters


def run_one(name, kind, model, data, run, *, minutes, lr, device, beams, save):
    print(f"\n## {name}: {count_parameters(model):,} parameters, {minutes:g} min of training, peak lr {lr}")
    info = train_for_minutes(model, data, run, minutes=minutes, lr=lr, device=device)
    print(
        f"{info['steps']} steps at {info['seconds_per_step']:.2f} s/step (measured first), "
        f"trained in {info['minutes']:.2f} min; final loss {info['history'].last('loss'):.3f}; "
        f"load average now {os.getloadavg()}"
    )
    if save:
        path = checkpoint_path(checkpoint_name(kind, model.config, minutes, lr, run))
        record = {k: info[k] for k in ("steps", "minutes", "seconds_per_step")}
        record["loss"] = info["history"].series("loss")
        save_checkpoint(path, {"model": model.state_dict(), "info": record})
        print(f"saved {path}")
    scores = {}
    for beam in beams:
        start = time.perf_counter()
        score, _ = evaluate(model, data, beam_size=beam)
        scores[beam] = score
        print(f"{name}, {'greedy' if beam == 1 else f'beam {beam}'}: test BLEU {score} "
              f"({time.perf_counter() - start:.0f} s to translate)")  # fmt: skip
    return info, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "gpu"])
    parser.add_argument("--rnn", action="store_true", help="also train the two RNN baselines")
    parser.add_argument("--only-rnn", action="store_true", help="train only the two RNN baselines")
    parser.add_argument("--minutes", type=float, default=None, help="override the transformer's training time")
    parser.add_argument("--lr", type=float, default=None, help="override the transformer's peak learning rate")
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
    print(f"{len(data.train):,} training pairs, {len(data.test):,} test pairs, vocabulary {run.vocab_size:,}")
    save = not args.no_save and args.minutes is None and args.lr is None

    if args.rnn or args.only_rnn:
        for attention, name in ((False, "GRU bottleneck"), (True, "GRU + Bahdanau attention")):
            seed_everything(0)
            model = RNNSeq2Seq(run.rnn(attention))
            run_one(name, "rnn_attention" if attention else "rnn", model, data, run, minutes=run.rnn_minutes,
                    lr=run.rnn_lr, device=device, beams=(1,), save=save)  # fmt: skip
    if args.only_rnn:
        return
    seed_everything(0)
    model = EncoderDecoder(run.model)
    minutes = args.minutes if args.minutes is not None else run.minutes
    lr = args.lr if args.lr is not None else run.lr
    info, scores = run_one("transformer", "transformer", model, data, run, minutes=minutes, lr=lr, device=device,
                           beams=(1, run.beam_size), save=save)  # fmt: skip
    beam = max(scores, key=lambda k: scores[k].score)
    how = "greedy" if beam == 1 else f"beam {beam}"
    print(f"config: {dataclasses.asdict(model.config)}")
    print(f"test BLEU {scores[beam].score:.1f} ({scores[beam].signature}) after {info['minutes']:.1f} min of "
          f"training ({how}, {args.profile} profile; load average at the end {os.getloadavg()})")  # fmt: skip


if __name__ == "__main__":
    main()
