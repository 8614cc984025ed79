"""Benchmark: chapter 15's IMDb table (issues 36, 44): what a chat model buys, beside chapters 06 and 10.

SmolLM2-135M-Instruct (4-bit GGUF, in our Llama) on the profile's balanced IMDb test reviews, with the
chapter's own recipes (``fromscratch.chapters.ch15_assistant.assistant_imdb``); every arm reads the same
``review_words`` words of each review:

- zero-shot and k-shot prompting (two orders, ``shot_draws`` draws of examples), each also calibrated
  (contextual calibration); the answer: the likelier first token of ``negative``/``positive``;
- LoRA-SFT after N labelled reviews (queries and values, r = 8, alpha = 16; the assistant-only loss);
- chapter 06's classifier from scratch and chapter 10's MiniLM, fine-tuned on the same N reviews;

each learning arm with ``--seeds`` draws of the N reviews (default: the profile's). Every row has the
paired difference from zero-shot with its 95 % interval (a paired bootstrap over the reviews). With
``--cost``, the time and bytes of one LoRA step against one full fine-tuning step, on the chapter's own
batch (the first ``cost_batch`` conversations of its instruction set).

    python benchmarks/chat_imdb.py --profile smoke                # seconds: the code runs
    flock /tmp/heavy.lock python benchmarks/chat_imdb.py --profile cpu --threads 1 --cost
    python benchmarks/chat_imdb.py --labels 32 --seeds 5          # part of it, five draws

The model file comes from the data cache (``make install``); the LoRA runs reuse the chapter's
checkpoints (``15_lora_imdb-<hash>.pt``), so a table the chapter has computed is reloaded, not retrained.
"""

from __future__ import annotations

import argparse
import copy
import os
import time

import torch

from fromscratch.blocks.lora import add_lora
from fromscratch.chapters import get_profile
from fromscratch.chapters.ch15_assistant.assistant import chat_model_file
from fromscratch.chapters.ch15_assistant.assistant_imdb import (
    arm,
    calibrate,
    content_free_logits,
    labelled,
    prompting_logits,
    sentiment_data,
    shot_sets,
    table_rows,
)
from fromscratch.chapters.ch15_assistant.learning_arms import learning_arms
from fromscratch.data.instructions import (
    ChatBatches,
    arithmetic_examples,
    sentiment_examples,
    spelling_examples,
    split,
    translation_examples,
)
from fromscratch.data.multi30k import load_multi30k
from fromscratch.interop.gguf_llama import read_gguf_llama
from fromscratch.interop.minilm import minilm_encoder
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training.memory import mib
from fromscratch.training.sft import step_cost


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def chapter_batch(data, tokenizer, size) -> dict[str, torch.Tensor]:
    """The chapter's 15.3 instruction set, made as the chapter makes it, and its first ``cost_batch``
    conversations as one batch (what the chapter's step-cost table times)."""
    k = size.sft_per_task
    reviews, texts = labelled(data, k, seed=1)
    words = " ".join(data.pool_texts[:50]).split()
    examples = [
        *sentiment_examples(texts, reviews.labels.tolist(), words=size.review_words),
        *translation_examples(load_multi30k().train[:k]),
        *arithmetic_examples(k, seed=0),
        *spelling_examples(words, k, seed=0),
    ]
    train_set, _ = split(examples, size.sft_held_out, seed=0)
    pad = tokenizer.special["<|im_end|>"]
    batches = ChatBatches(tokenizer, train_set, size.batch_size, pad_id=pad, context=size.max_tokens)
    return batches.batch(list(range(size.cost_batch)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "gpu"], help="sizes")
    parser.add_argument("--labels", help="comma-separated N (default: the profile's)")
    parser.add_argument(
        "--seeds", type=int, help="draws of the N reviews per learning arm (default: profile)"
    )
    parser.add_argument("--threads", type=int, help="torch's CPU threads (1 on a shared machine)")
    parser.add_argument("--cost", action="store_true", help="also time a LoRA and a full fine-tuning step")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    size = get_profile(args.profile).ch15
    labels = [int(n) for n in args.labels.split(",")] if args.labels else list(size.labels)
    seeds = args.seeds or size.seeds
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    started = time.perf_counter()
    print(f"profile {args.profile}, {torch.get_num_threads()} threads, load average {load()}")
    data = sentiment_data(
        vocab_words=size.classifier.vocab_size - len(SPECIALS), pool=size.imdb_pool, test=size.imdb_test
    )
    path = chat_model_file(size.model, tiny=size.tiny, texts=data.pool_texts[: size.tiny_texts])
    model, tokenizer = read_gguf_llama(path)
    model.to(device)
    test_labels = data.test.labels
    ask, free_kw = dict(words=size.review_words, batch=size.score_batch), dict(words=size.review_words)
    t = time.perf_counter()
    logits = prompting_logits(model, tokenizer, data.test_texts, **ask)
    free = content_free_logits(model, tokenizer, **free_kw)
    arms = [
        arm("zero-shot", 0, [logits.argmax(-1)], test_labels),
        arm("zero-shot, calibrated", 0, [calibrate(logits, free).argmax(-1)], test_labels),
    ]
    for order in ("ends positive", "ends negative"):
        plain, calibrated = [], []
        for shots in shot_sets(data, size.shots, words=size.review_words, draws=size.shot_draws):
            logits = prompting_logits(model, tokenizer, data.test_texts, shots=shots[order], **ask)
            free = content_free_logits(model, tokenizer, shots=shots[order], **free_kw)
            plain.append(logits.argmax(-1))
            calibrated.append(calibrate(logits, free).argmax(-1))
        name = f"{size.shots}-shot, {order}"
        arms += [
            arm(name, size.shots, plain, test_labels),
            arm(name + ", calibrated", size.shots, calibrated, test_labels),
        ]
    print(f"prompting: {time.perf_counter() - t:.0f} s, load {load()}", flush=True)
    minilm = minilm_encoder(size.minilm.dropout)
    learned: dict[tuple[str, int], list[torch.Tensor]] = {}
    for n in labels:
        for seed in range(seeds):
            t = time.perf_counter()
            out = learning_arms(
                model, tokenizer, data, size, n, seed=seed, minilm=minilm, parts=[path.name], device=device
            )
            for name, predicted in out.items():
                learned.setdefault((name, n), []).append(predicted)
            print(f"N = {n}, seed {seed}: {time.perf_counter() - t:.0f} s, load {load()}", flush=True)
    arms += [arm(name, n, runs, test_labels) for (name, n), runs in learned.items()]
    if args.cost:
        batch = {k: v.to(device) for k, v in chapter_batch(data, tokenizer, size).items()}
        for name in ("LoRA", "full fine-tuning"):
            candidate = copy.deepcopy(model)
            if name == "LoRA":
                add_lora(candidate, **size.lora)
            k = step_cost(candidate, batch, repeats=size.cost_repeats)
            print(
                f"{name:17} {k.trainable:>12,} trained  {k.seconds:6.2f} s/step  grads+AdamW "
                f"{mib(k.gradient_bytes + k.optimizer_bytes)}  activations {mib(k.activation_bytes)}  "
                f"all {mib(k.bytes)}"
            )
            del candidate
    print(
        f"\n{len(test_labels):,} balanced test reviews, {size.review_words} words each for every arm; "
        f"{time.perf_counter() - started:.0f} s in all, load {load()}"
    )
    header = ("arm", "N", "runs", "accuracy", "each run", "said positive", "- zero-shot [95 %]")
    print(" | ".join(header))
    for row in table_rows(arms, arms[0]):
        print(" | ".join(str(x) for x in row))


if __name__ == "__main__":
    main()
