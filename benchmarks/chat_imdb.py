"""Benchmark: chapter 15's IMDb table (issue 36): what a chat model buys, beside chapters 06 and 10.

SmolLM2-135M-Instruct (4-bit GGUF, in our Llama) on the profile's balanced IMDb test reviews, each arm with
its 95 % Wilson interval, with the chapter's own recipes
(``fromscratch.chapters.ch15_assistant.assistant_imdb``):

- zero-shot and k-shot prompting (the answer: the likelier first token of ``positive``/``negative``);
- LoRA-SFT after N labelled reviews (queries and values, r = 8, alpha = 16; the assistant-only loss);
- chapter 06's classifier from scratch and chapter 10's MiniLM, fine-tuned on the same N reviews.

Then, with ``--seeds 2`` or more, the learning arms again with other draws of the N reviews (and other
LoRA initialisations and batch orders), so that one lucky draw is not read as a result; and with
``--cost``, the time and bytes of one LoRA step against one full fine-tuning step.

    python benchmarks/chat_imdb.py --profile smoke                # seconds: the code runs
    flock /tmp/heavy.lock python benchmarks/chat_imdb.py --profile cpu --threads 1 --cost
    python benchmarks/chat_imdb.py --labels 32 --seeds 3          # part of it, three draws

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
    classifier_at_n,
    labelled,
    lora_at_n,
    minilm_at_n,
    prompting_accuracy,
    sentiment_data,
    shot_examples,
    steps_for,
    with_steps,
)
from fromscratch.data.instructions import ChatBatches, sentiment_examples
from fromscratch.interop.gguf_llama import read_gguf_llama
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training.memory import mib
from fromscratch.training.sft import step_cost


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "gpu"], help="sizes")
    parser.add_argument("--labels", help="comma-separated N (default: the profile's)")
    parser.add_argument("--seeds", type=int, default=1, help="draws of the N reviews per learning arm")
    parser.add_argument("--threads", type=int, help="torch's CPU threads (1 on a shared machine)")
    parser.add_argument("--cost", action="store_true", help="also time a LoRA and a full fine-tuning step")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    size = get_profile(args.profile).chat
    labels = [int(n) for n in args.labels.split(",")] if args.labels else list(size.labels)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    started = time.perf_counter()
    print(f"profile {args.profile}, {torch.get_num_threads()} threads, load average {load()}")
    data = sentiment_data(
        vocab_words=size.classifier.vocab_size - len(SPECIALS),
        max_len=size.classifier.max_len,
        pool=size.imdb_pool,
        test=size.imdb_test,
    )
    path = chat_model_file(size.model, tiny=size.tiny, texts=data.pool_texts[: size.tiny_texts])
    model, tokenizer = read_gguf_llama(path)
    model.to(device)
    ask = dict(words=size.review_words, batch=size.score_batch)
    texts, test_labels = data.test_texts, data.test.labels
    rows = []

    def report(arm: str, n: int, seed: int, proportion, seconds: float) -> None:
        rows.append((arm, n, seed, proportion))
        print(f"{arm:18} N={n:<5} seed {seed}  {proportion}  ({seconds:.0f} s, load {load()})", flush=True)

    t = time.perf_counter()
    report(
        "zero-shot",
        0,
        0,
        prompting_accuracy(model, tokenizer, texts, test_labels, **ask),
        time.perf_counter() - t,
    )
    shots = shot_examples(data, size.shots, words=size.review_words)
    t = time.perf_counter()
    few = prompting_accuracy(model, tokenizer, texts, test_labels, shots=shots, **ask)
    report(f"{size.shots}-shot", size.shots, 0, few, time.perf_counter() - t)
    for seed in range(args.seeds):
        for n in labels:
            reviews, train_texts = labelled(data, n, seed=seed)
            steps = steps_for(n, batch_size=size.batch_size, epochs=size.epochs, min_steps=size.min_steps)
            t = time.perf_counter()
            tuned = lora_at_n(
                model,
                tokenizer,
                train_texts,
                reviews.labels,
                words=size.review_words,
                lora=size.lora,
                train_config=with_steps(replace_progress(size.imdb_train), steps),
                batch_size=size.batch_size,
                max_len=size.max_tokens,
                parts=[path.name, reviews.names, size.review_words],
                seed=seed,
                device=device,
            )
            accuracy = prompting_accuracy(tuned, tokenizer, texts, test_labels, **ask)
            report("LoRA-SFT", n, seed, accuracy, time.perf_counter() - t)
            del tuned
            t = time.perf_counter()
            classifier = classifier_at_n(
                reviews,
                data.test,
                size.classifier,
                size.classifier_train,
                batch_size=size.batch_size,
                seed=seed,
            )
            report("ch. 06 classifier", n, seed, classifier, time.perf_counter() - t)
            t = time.perf_counter()
            report(
                "ch. 10 MiniLM",
                n,
                seed,
                minilm_at_n(reviews, data.test, size.minilm, seed=seed),
                time.perf_counter() - t,
            )
    if args.cost:
        examples = sentiment_examples(
            data.pool_texts[: size.cost_batch], [0] * size.cost_batch, words=size.review_words
        )
        batch = ChatBatches(
            tokenizer,
            examples,
            size.cost_batch,
            pad_id=tokenizer.special["<|im_end|>"],
            max_len=size.max_tokens,
        )
        batch = {k: v.to(device) for k, v in batch.batch(list(range(size.cost_batch))).items()}
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
        f"\n{len(test_labels):,} balanced test reviews; {time.perf_counter() - started:.0f} s in all, "
        f"load {load()}"
    )
    print(f"{'arm':18} {'N':>5} {'seed':>4}  accuracy [95 % interval]")
    for arm, n, seed, proportion in rows:
        print(f"{arm:18} {n:>5} {seed:>4}  {proportion}")


def replace_progress(config):
    """``config`` without its progress bar: the benchmark prints one line per arm."""
    from dataclasses import replace

    return replace(config, progress=False)


if __name__ == "__main__":
    main()
