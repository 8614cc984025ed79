"""Chapter 15's run: a real chat model (SmolLM2-135M-Instruct, 4-bit GGUF) in our Llama, its oracles, the
assistant-only SFT, LoRA and what it buys on IMDb.

``smoke`` reads a **tiny random Llama written as a GGUF file** of the same layout instead of the 98 MB
model (``model="tiny"``: :func:`~.assistant.chat_model_file`), so the same code runs
in seconds; ``cpu`` and ``gpu`` read the real file from the data cache (``make install`` puts it there).

    model, tokenizer = read_gguf_llama(chat_model_file(prof.chat.model, ...))
    lora_finetune(model, batches, prof.chat.sft_train, lora=prof.chat.lora, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.chapters.ch10_modern_transformers.label_sizes import (
    LABEL_EFFICIENCY_RUNS,
    LabelEfficiencyRun,
)
from fromscratch.models.classifier import ClassifierConfig
from fromscratch.models.llama import LlamaConfig
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class ChatRun:
    """The sizes of chapter 15's checks and experiments."""

    model: str  # "SmolLM2-135M-Instruct" (the registered GGUF) or "tiny" (a random stand-in, written as GGUF)
    tiny: LlamaConfig  # the stand-in's sizes; vocab_size: a BPE learned from tiny_texts reviews + 3 specials
    tiny_texts: int  # IMDb training reviews the stand-in's BPE learns its merges from
    oracle_prompts: int  # 15.1: prompts whose logits are compared with transformers' (issue: 20)
    tokenizer_strings: int  # 15.1: strings whose ids are compared with transformers' tokenizer (issue: 1,000)
    greedy_prompts: int  # 15.2: conversations answered greedily by both, token for token (issue: 20)
    greedy_tokens: int  # 15.2: new tokens per greedy reply (issue: 64)
    review_words: int  # every IMDb review cut to this many words, head and tail (all arms alike)
    sft_per_task: (
        int  # 15.3: instruction examples made per task (sentiment, translation, arithmetic, spelling)
    )
    sft_held_out: int  # 15.3: of which held out per task, never trained on
    lora: dict  # 15.4: add_lora's targets, rank and alpha (the LoRA paper's and peft's: queries and values)
    sft_train: TrainConfig  # 15.4: LoRA-SFT on the instruction set: steps, peak lr, warm-up
    batch_size: int  # 15.4-15.5: conversations per training step
    max_tokens: int  # 15.4-15.5: the longest conversation allowed (a guard: reviews are cut first)
    cost_batch: int  # 15.4: conversations in the batch whose step time and memory are measured
    cost_repeats: int  # 15.4: timed steps of LoRA and of full fine-tuning (the median counts)
    reply_tokens: int  # 15.4: new tokens at most in a held-out reply
    imdb_test: int | None  # 15.5: balanced test reviews every arm is scored on (None: all 25,000)
    imdb_pool: int  # 15.5: training reviews the N labels are drawn from (and chapter 06's vocabulary)
    labels: tuple[int, ...]  # 15.5: N, labelled reviews each learning arm gets
    shots: int  # 15.5: solved examples before the question in few-shot prompting
    imdb_train: TrainConfig  # 15.5: LoRA-SFT on N reviews: peak lr (steps from epochs and min_steps)
    epochs: float  # 15.5: passes over the N reviews, for every learning arm of ours
    min_steps: int  # 15.5: at least this many steps, however small N
    score_batch: int  # 15.5: prompts per forward pass when scoring
    classifier: ClassifierConfig  # 15.5: chapter 06's classifier, from scratch (its vocabulary from the pool)
    classifier_train: TrainConfig  # 15.5: its training: epochs over the N reviews (cheap: many), lr, warm-up
    minilm: LabelEfficiencyRun  # 15.5: chapter 10's MiniLM fine-tuning (its lr, batch, length, steps)


_LORA = {"targets": ("to_queries", "to_values"), "rank": 8, "alpha": 16.0}


def _classifier(words: int, **fields) -> ClassifierConfig:
    return ClassifierConfig(vocab_size=words + len(SPECIALS), **fields)


CHAT_RUNS = {
    # smoke: a 2-block random Llama stand-in, a handful of everything: proves the code runs (seconds)
    "smoke": ChatRun(
        model="tiny",
        tiny=LlamaConfig(vocab_size=384, context=4096, emb=32, heads=4, kv_heads=2, depth=2, hidden=64),
        tiny_texts=48,
        oracle_prompts=3,
        tokenizer_strings=40,
        greedy_prompts=2,
        greedy_tokens=8,
        review_words=24,
        sft_per_task=6,
        sft_held_out=2,
        lora=_LORA,
        sft_train=TrainConfig(steps=2, lr=1e-3, warmup_steps=0, progress=False),
        batch_size=4,
        max_tokens=512,
        cost_batch=2,
        cost_repeats=1,
        reply_tokens=6,
        imdb_test=16,
        imdb_pool=48,
        labels=(8,),
        shots=2,
        imdb_train=TrainConfig(lr=1e-3, progress=False),
        epochs=1,
        min_steps=2,
        score_batch=8,
        classifier=_classifier(1_000, emb=16, heads=2, depth=1, max_len=64),
        classifier_train=TrainConfig(epochs=2, lr=3e-3, progress=False),
        minilm=replace(LABEL_EFFICIENCY_RUNS["smoke"], max_len=24, min_steps=1),
    ),
    # cpu: the real 135M model; the 20/1,000/20x64 checks, a 30-step LoRA-SFT, IMDb on 200 test reviews with
    # N = 8, 32, 128 labels: 25.5 min measured (one thread, a shared 2-core machine at load average 4-5)
    "cpu": ChatRun(
        model="SmolLM2-135M-Instruct",
        tiny=LlamaConfig(vocab_size=384, context=4096, emb=32, heads=4, kv_heads=2, depth=2, hidden=64),
        tiny_texts=48,
        oracle_prompts=20,
        tokenizer_strings=1_000,
        greedy_prompts=20,
        greedy_tokens=64,
        review_words=48,
        sft_per_task=60,
        sft_held_out=10,
        lora=_LORA,
        sft_train=TrainConfig(steps=30, lr=1e-3, warmup_steps=3),
        batch_size=8,
        max_tokens=512,
        cost_batch=4,
        cost_repeats=2,
        reply_tokens=24,
        imdb_test=200,
        imdb_pool=1_000,
        labels=(8, 32, 128),
        shots=4,
        imdb_train=TrainConfig(lr=1e-3),
        epochs=1,
        min_steps=6,
        score_batch=8,
        classifier=_classifier(10_000, emb=64, heads=4, depth=1, max_len=256, dropout=0.1),
        classifier_train=TrainConfig(epochs=20, lr=3e-3, warmup_steps=5, weight_decay=0.01, progress=False),
        minilm=replace(LABEL_EFFICIENCY_RUNS["cpu"], max_len=128, min_steps=30),
    ),
}
# gpu: a T4: all 25,000 test reviews, N up to 512, a longer SFT; the checks as in cpu
CHAT_RUNS["gpu"] = replace(
    CHAT_RUNS["cpu"],
    review_words=96,
    sft_per_task=300,
    sft_held_out=25,
    sft_train=TrainConfig(steps=200, lr=1e-3, warmup_steps=20),
    batch_size=16,
    imdb_test=None,
    imdb_pool=5_000,
    labels=(32, 128, 512),
    min_steps=20,
    score_batch=64,
    classifier=_classifier(20_000, emb=64, heads=4, depth=1, max_len=512, dropout=0.1),
    minilm=replace(LABEL_EFFICIENCY_RUNS["gpu"], max_len=256),
)

__all__ = ["CHAT_RUNS", "ChatRun"]
