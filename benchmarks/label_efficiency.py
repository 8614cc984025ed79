"""Benchmark: chapter 10's label-efficiency curve (issue 23): does pretraining pay when labels are few?

Fine-tunes, with the course's ``train``, from three starting points on N labelled IMDb training
reviews (balanced) and scores every run on the same balanced test reviews:

- ``random``: our BERT (``prof.ch10.bert``) from random weights;
- ``ours``: the same BERT after chapter 10's masked-LM pretraining: the same ``train`` call and
  checkpoint name as the chapter (``bert_checkpoint``), trained first if missing (``cpu``: ~12 min);
- ``minilm``: the real all-MiniLM-L6-v2 loaded into our ``BertEncoder``, WordPiece tokens.

Held equal for all three: the training reviews of each (N, seed), the steps (1 epoch over the N
reviews, at least 60), the batch (16), the max length (128 tokens of each model's own tokenizer,
head + tail), the warm-up (10 %) and linear decay, AdamW with weight decay 0.01, dropout 0.1, mean
pooling, the 2,000 test reviews. Each starting point's peak lr is picked from its own grid of three on
500 held-out training reviews (never trained on, never the test reviews), at N = 300 and seed 0; that
run's model is then also that cell's. Before it, it prints the pretrained model's masked-LM loss at the
``[MASK]`` positions beside their unigram baseline (the entropy of the tokens there: the best loss
without context), and its loss at every chosen position beside the copy-aware floor (the best loss of a
model that reads only the token at its own position: 10 % of the chosen positions show the answer).
``--floors`` prints only those baselines, for chapter 10's vocabulary and BERT's 20,000 words (the
recipe table in benchmarks/README.md compares with them); it trains nothing.

    python benchmarks/label_efficiency.py --profile smoke          # seconds: the code runs
    flock /tmp/heavy.lock python benchmarks/label_efficiency.py --profile cpu --plot curve.png
    python benchmarks/label_efficiency.py --labels 100 --seeds 1 --inits random,minilm   # part of it
    python benchmarks/label_efficiency.py --floors        # the no-context baselines only (a minute or two)

It picks the three lrs first, then runs seed 0 of every N (N = 100 and 1,000 first, where the goals
are set), then the other seeds, so a run stopped early (Ctrl-C) still prints a table and a plot of
what finished (SIGINT or SIGTERM). The starting points' runs do not depend on one another (the same
reviews per (N, seed), the same test reviews), so ``--inits ours`` completes a ``--inits random,minilm`` run.

Cost (``cpu``, 2 threads; measured first, under the lock, load average 1.6-3.1 as another job ran):
one MiniLM fine-tuning step (16 reviews x 128 tokens) 0.8-1.4 s, one evaluation on the 2,000 test
reviews 93 s at load 3 and 35 s at load 2; our BERT is ~10x cheaper. Hence 128 tokens and
max(60, 1 epoch) steps at batch 16: ~860 MiniLM steps and 13 evaluations, about 25 min for MiniLM, a
few minutes for our two, plus the pretraining (12 min, once): about 45 minutes on two idle cores.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import time
from dataclasses import replace

import torch

from fromscratch.chapters import PROFILE_NAMES, get_profile
from fromscratch.chapters.ch10_modern_transformers.bert_imdb import pretraining_batches
from fromscratch.chapters.ch10_modern_transformers.figures import label_efficiency_plot
from fromscratch.chapters.ch10_modern_transformers.label_efficiency import (
    CHAPTER_06,
    bert_data,
    masked_lm_eval,
    pretrained_bert,
    review_accuracy,
    splits,
    word_reviews,
    wordpiece_reviews,
)
from fromscratch.interop.minilm import minilm_encoder
from fromscratch.metrics.unigram import copy_aware_floor, entropy, masked_token_counts, unigram_mlm_loss
from fromscratch.tokenizers.special import WORD_SPECIALS
from fromscratch.training.finetune import INITS, finetune, fresh_encoder

GOAL_LABELS = (100, 1_000)  # issue 23's goals are set at these N: run first


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="cpu", choices=PROFILE_NAMES, help="sizes")
    parser.add_argument("--labels", help="comma-separated N to run (default: the profile's)")
    parser.add_argument("--seeds", type=int, help="seeds for the small N (default: the profile's)")
    parser.add_argument("--inits", default=",".join(INITS), help=f"comma-separated, from {', '.join(INITS)}")
    parser.add_argument("--plot", help="save accuracy against N (log axis) to this PNG")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument(
        "--floors", action="store_true", help="print the no-context baselines of the masking only, and stop"
    )
    args = parser.parse_args()
    args.inits = args.inits.split(",")
    if bad := [i for i in args.inits if i not in INITS]:
        parser.error(f"--inits: unknown {bad}; choose from {', '.join(INITS)}")
    return args


def baselines(modern, data) -> tuple[float, float, float]:
    """The no-context baselines of ``modern``'s masking on ``data`` (one pass over fresh masked batches):
    the unigram entropy at the ``[MASK]`` positions, the entropy at every chosen position, and the
    copy-aware floor there."""
    at_mask = unigram_mlm_loss(
        pretraining_batches(modern, data, seed=1), modern.bert.vocab_size, mask_id=data.mask_id
    )
    counts = masked_token_counts(pretraining_batches(modern, data, seed=1), modern.bert.vocab_size)
    return at_mask, entropy(counts), copy_aware_floor(counts, random_ids=len(data.vocab))


def floors(modern) -> None:
    """``--floors``: the baselines for the profile's vocabulary and for BERT's 20,000 words."""
    for words in sorted({modern.vocab_words, 20_000}):
        bert = replace(modern.bert, vocab_size=words + len(WORD_SPECIALS) + 1)  # + [MASK]
        sized = replace(modern, vocab_words=words, bert=bert)
        try:
            data = bert_data(sized)
        except ValueError as error:  # the smoke profile's few reviews hold fewer distinct words
            print(f"{words:,} words: skipped ({error})", flush=True)
            continue
        at_mask, chosen, floor = baselines(sized, data)
        print(
            f"{words:,} words, {sized.mask_rate:.0%} masked: unigram baseline {at_mask:.3f} nats at [MASK] "
            f"positions, {chosen:.3f} at every chosen position; copy-aware floor {floor:.3f} "
            f"({1 - floor / chosen:.1%} below the unigram baseline, with no context)",
            flush=True,
        )


def stop(signum, frame) -> None:
    raise KeyboardInterrupt  # a SIGTERM (or a SIGINT to a background job) ends the runs like Ctrl-C


def main() -> None:
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # background jobs start with SIGINT ignored
    args = parse()
    torch.set_num_threads(args.threads)
    modern = get_profile(args.profile).ch10
    run = modern.label_efficiency
    if args.seeds is not None:
        run = replace(run, seeds=args.seeds)
    labels = [int(n) for n in args.labels.split(",")] if args.labels else list(run.labels)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    start = time.perf_counter()
    if args.floors:
        print(f"load average at start: {load()}", flush=True)
        floors(modern)
        print(
            f"total {(time.perf_counter() - start) / 60:.1f} min; load average at end: {load()}", flush=True
        )
        return
    print(f"load average at start: {load()}; {args.threads} threads, device {device.type}", flush=True)
    print(
        f"held equal: steps = max({run.min_steps}, {run.finetune.epochs:g} epochs of N), batch {run.batch}, "
        f"max length {run.context} tokens (head+tail), warm-up {run.warmup:.0%} then linear decay, AdamW wd "
        f"{run.finetune.weight_decay}, dropout {run.dropout}, {run.pooling} pooling; lr per init from "
        f"{dict(run.lrs)} on {run.val_reviews} held-out training reviews at N={run.lr_labels}, seed 0",
        flush=True,
    )

    data = bert_data(modern)
    pool, val, test = splits(data, run)
    print(f"{len(pool):,} training reviews to draw from, {len(val)} held out, {len(test):,} test", flush=True)
    encoders, prepare = {}, {}
    if "ours" in args.inits:
        mark = time.perf_counter()
        model, history = pretrained_bert(modern, data, device=device, progress=False)
        at_mask, chosen, floor = baselines(modern, data)
        masked = masked_lm_eval(model, pretraining_batches(modern, data, seed=1), positions="masked")
        measured = masked_lm_eval(model, pretraining_batches(modern, data, seed=1))
        steps, losses = history.series("loss")
        print(
            f"ours: pretrained {steps[-1] if steps else 0} steps ({time.perf_counter() - mark:.0f} s here); "
            f"masked-LM loss at the [MASK] positions {masked:.3f} nats vs their unigram baseline "
            f"{at_mask:.3f} ({1 - masked / at_mask:+.1%} below it: what context bought); at every chosen "
            f"position {measured:.3f} (training's last 50 steps {statistics.mean(losses[-50:]):.3f}) vs the "
            f"unigram baseline {chosen:.3f} ({1 - measured / chosen:+.1%}) and the copy-aware floor "
            f"{floor:.3f} ({1 - measured / floor:+.1%}); first 50 batches of a fresh pass",
            flush=True,
        )
        encoders["ours"] = model.encoder
    if "minilm" in args.inits:
        encoders["minilm"], tokenizer = minilm_encoder(run.dropout)
        prepare["minilm"] = lambda r: wordpiece_reviews(r, tokenizer, run.context)

    def ready(init: str, reviews):
        return prepare.get(init, lambda r: word_reviews(r, run.context))(reviews)

    def one_run(init: str, n: int, seed: int, lr: float):
        encoder = fresh_encoder(
            init,
            modern.bert,
            seed=seed,
            dropout=run.dropout,
            pretrained=encoders.get("ours"),
            minilm=encoders.get("minilm"),
        )
        reviews = ready(init, pool.hold_out(n, seed=seed)[1])
        return finetune(encoder, reviews, run, lr, seed=seed, device=device)

    def pick_lr(init: str):
        """The best lr of ``init``'s grid on the held-out reviews (never the test ones), and its model."""
        scores = []
        for lr in run.grid(init):
            mark = time.perf_counter()
            classifier = one_run(init, run.lr_labels, 0, lr)
            score = review_accuracy(classifier, ready(init, val), device=device)
            scores.append((score, lr, classifier))
            print(
                f"lr pick: init={init} N={run.lr_labels} lr={lr:g} val_accuracy={score:.4f} "
                f"({time.perf_counter() - mark:.0f} s)",
                flush=True,
            )
        _, lr, classifier = max(scores, key=lambda s: s[0])
        print(f"lr pick: init={init} uses lr={lr:g}", flush=True)
        return lr, classifier

    results: dict[tuple[int, str], list[float]] = {}
    tests = {init: ready(init, test) for init in args.inits}
    # seed 0 of every N first, the goals' N (100 and 1,000) before the others; then the other seeds
    first = [n for n in labels if n in GOAL_LABELS] + [n for n in labels if n not in GOAL_LABELS]
    cells = [(n, seed) for seed in range(run.seeds) for n in first if seed == 0 or n <= run.many_seeds_up_to]
    try:
        picked = {init: pick_lr(init) for init in args.inits}
        for n, seed in cells:
            for init in args.inits:
                mark = time.perf_counter()
                lr, kept = picked[init]
                reuse = (
                    n == run.lr_labels and seed == 0
                )  # the lr-picking run of the chosen lr: the same training
                classifier = kept if reuse else one_run(init, n, seed, lr)
                score = review_accuracy(classifier, tests[init], device=device)
                results.setdefault((n, init), []).append(score)
                print(
                    f"labels={n} init={init} seed={seed} accuracy={score:.4f} "
                    f"({time.perf_counter() - mark:.0f} s, {run.steps(n)} steps)",
                    flush=True,
                )
    except KeyboardInterrupt:  # stopped by hand (Ctrl-C, kill -INT): summarise what finished
        print("\ninterrupted: the table below holds the finished runs only", flush=True)

    print(f"\nmean ± spread (half the max-min range) over seeds, on {len(test):,} test reviews:")
    for n in labels:
        row = []
        for init in args.inits:
            acc = results.get((n, init))
            if not acc:
                continue
            row.append(f"{init} {statistics.mean(acc):.4f} ± {(max(acc) - min(acc)) / 2:.4f} ({len(acc)})")
        print(f"labels={n}: " + " | ".join(row))
    if args.plot:
        os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
        title = f"IMDb, {len(test):,} test reviews ({args.profile} profile)"
        label_efficiency_plot(results, lines=CHAPTER_06, title=title).savefig(args.plot, dpi=120)
        print(f"plot saved to {args.plot}", flush=True)
    print(f"total {(time.perf_counter() - start) / 60:.1f} min; load average at end: {load()}", flush=True)


if __name__ == "__main__":
    main()
