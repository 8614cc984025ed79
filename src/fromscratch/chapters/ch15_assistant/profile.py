"""Chapter 15's run: a real chat model (SmolLM2-135M-Instruct, 4-bit GGUF) in our Llama, its oracles, a
base model's SFT, LoRA, DPO and what they buy on IMDb.

Every size is written as a difference from ``smoke`` (``CPU = replace(SMOKE, ...)``). ``smoke`` reads a
**tiny random Llama written as a GGUF file** of the same layout instead of the 98 MB model
(``model="tiny"``: :func:`~.assistant.chat_model_file`), so the same code runs in seconds; ``cpu`` and
``gpu`` read the real file from the data cache (``make install`` puts it there).

    model, tokenizer = read_gguf_llama(chat_model_file(prof.ch15.model, ...))
    lora_finetune(model, batches, prof.ch15.sft_train, lora=prof.ch15.lora, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models.classifier import ClassifierConfig
from fromscratch.models.llama import LlamaConfig
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training import TrainConfig
from fromscratch.training.finetune import LabelEfficiencyRun

# 15.6's MiniLM arm: chapter 10's fine-tuning recipe (its label_sizes.py: the MiniLM learning rate its
# benchmark picked, batch, epochs, warm-up, pooling, dropout), written out here because a chapter owns its
# folder; tests/test_label_efficiency.py checks the two stay equal. Only the fine-tuning fields are read.
MINILM_SMOKE = LabelEfficiencyRun(
    labels=(),
    seeds=1,
    many_seeds_up_to=0,
    test_reviews=0,
    val_reviews=0,
    lr_labels=0,
    lrs=(("minilm", (1e-4,)),),
    picked=(("minilm", 1e-4),),
    chapter_labels=(),
    context=48,
    batch=8,
    finetune=TrainConfig(epochs=1, weight_decay=0.01),
    min_steps=1,
    warmup=0.1,
    pooling="mean",
    dropout=0.0,
)
MINILM_CPU = replace(MINILM_SMOKE, context=128, batch=16, min_steps=30, dropout=0.1, picked_in="cpu")


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
    samples: int  # 15.2: replies sampled with the model card's temperature and top-p, per question
    base_stories: int  # 15.3: request/answer conversations stories260K is fine-tuned on (full SFT)
    base_story_tokens: int  # 15.3: tokens the base model writes after each answer's opening
    base_train: TrainConfig  # 15.3: its supervised fine-tuning: steps, lr, warm-up
    base_reply_tokens: int  # 15.3: new tokens at most in a reply (more than the longest trained answer)
    review_words: int  # every IMDb review cut to this many words, head and tail (every arm alike)
    sft_per_task: (
        int  # 15.4: instruction examples made per task (sentiment, translation, arithmetic, spelling)
    )
    sft_held_out: int  # 15.4: of which held out per task, never trained on
    lora: dict  # 15.4: add_lora's targets, rank and alpha (the LoRA paper's and peft's: queries and values)
    sft_train: TrainConfig  # 15.4: LoRA-SFT on the instruction set: steps, peak lr, warm-up
    batch_size: int  # 15.3-15.6: conversations per training step
    max_tokens: int  # 15.3-15.6: the longest conversation allowed (a guard: reviews are cut first)
    cost_batch: int  # 15.4: conversations in the batch whose step time and memory are measured
    cost_repeats: int  # 15.4: timed steps of LoRA and of full fine-tuning (the median counts)
    reply_tokens: int  # 15.4: new tokens at most in a held-out reply
    dpo_pairs: int  # 15.5: preference pairs DPO trains on (reviews, the right answer over the wrong one)
    dpo_held_out: int  # 15.5: held-out pairs it is scored on
    dpo_beta: float  # 15.5: DPO's beta (Rafailov et al.'s and TRL's default: 0.1)
    dpo_train: TrainConfig  # 15.5: LoRA-DPO: steps, peak lr, warm-up
    imdb_test: int | None  # 15.6: balanced test reviews every arm is scored on (None: all 25,000)
    imdb_pool: int  # 15.6: training reviews the N labels are drawn from (and chapter 06's vocabulary)
    labels: tuple[int, ...]  # 15.6: N, labelled reviews each learning arm gets
    seeds: int  # 15.6: draws of the N reviews (and LoRA/head initialisations, batch orders) per learning arm
    shots: int  # 15.6: solved examples before the question in few-shot prompting (even: balanced)
    shot_draws: int  # 15.6: draws of those examples, each prompted in two orders
    imdb_train: TrainConfig  # 15.6: LoRA-SFT on N reviews: peak lr (steps from epochs and min_steps)
    epochs: float  # 15.6: passes over the N reviews, for LoRA-SFT
    min_steps: int  # 15.6: at least this many steps, however small N
    score_batch: int  # 15.6: prompts per forward pass when scoring
    classifier: ClassifierConfig  # 15.6: chapter 06's classifier, from scratch (its vocabulary from the pool)
    classifier_train: TrainConfig  # 15.6: its training: epochs over the N reviews (cheap: many), lr, warm-up
    minilm: LabelEfficiencyRun  # 15.6: chapter 10's MiniLM fine-tuning (its lr, batch, length, steps)


_LORA = {"targets": ("to_queries", "to_values"), "rank": 8, "alpha": 16.0}


def _classifier(words: int, **fields) -> ClassifierConfig:
    return ClassifierConfig(vocab_size=words + len(SPECIALS), **fields)


# smoke: a 2-block random Llama stand-in, a handful of everything: proves the code runs (seconds)
SMOKE = ChatRun(
    model="tiny",
    tiny=LlamaConfig(vocab_size=384, context=4096, emb=32, heads=4, kv_heads=2, depth=2, hidden=64),
    tiny_texts=48,
    oracle_prompts=3,
    tokenizer_strings=40,
    greedy_prompts=2,
    greedy_tokens=8,
    samples=2,
    base_stories=16,
    base_story_tokens=12,
    base_train=TrainConfig(steps=4, lr=3e-3, warmup_steps=0, progress=False),
    base_reply_tokens=40,
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
    dpo_pairs=8,
    dpo_held_out=4,
    dpo_beta=0.1,
    dpo_train=TrainConfig(steps=2, lr=1e-3, warmup_steps=0, progress=False),
    imdb_test=16,
    imdb_pool=48,
    labels=(8,),
    seeds=1,
    shots=2,
    shot_draws=1,
    imdb_train=TrainConfig(lr=1e-3, progress=False),
    epochs=1,
    min_steps=2,
    score_batch=8,
    classifier=_classifier(1_000, emb=16, heads=2, depth=1, context=64),
    classifier_train=TrainConfig(epochs=2, lr=3e-3, progress=False),
    minilm=MINILM_SMOKE,
)
# cpu: the real 135M model; the 20/1,000/20x64 checks, a 30-step LoRA-SFT, a 40-step DPO, stories260K's
# SFT, IMDb on 200 test reviews with N = 8, 32, 128 labels and 3 seeds, 15.5's SFT control and 15.4's
# Q8_0 write-back: 31 min measured on 2026-12-02 (2 threads, a 2-core machine doing nothing else, empty
# data cache)
CPU = replace(
    SMOKE,
    model="SmolLM2-135M-Instruct",
    oracle_prompts=20,
    tokenizer_strings=1_000,
    greedy_prompts=20,
    greedy_tokens=64,
    samples=3,
    base_stories=240,
    base_story_tokens=40,
    base_train=TrainConfig(steps=150, lr=3e-3, warmup_steps=10),
    base_reply_tokens=96,
    review_words=48,
    sft_per_task=60,
    sft_held_out=10,
    sft_train=TrainConfig(steps=30, lr=1e-3, warmup_steps=3),
    batch_size=8,
    cost_batch=4,
    cost_repeats=2,
    reply_tokens=24,
    dpo_pairs=160,
    dpo_held_out=100,
    dpo_train=TrainConfig(steps=40, lr=5e-4, warmup_steps=4),
    imdb_test=200,
    imdb_pool=1_000,
    labels=(8, 32, 128),
    seeds=3,
    shots=4,
    shot_draws=3,
    imdb_train=TrainConfig(lr=1e-3),
    min_steps=6,
    classifier=_classifier(10_000, emb=64, heads=4, depth=1, context=128, dropout=0.1),
    classifier_train=TrainConfig(epochs=20, lr=3e-3, warmup_steps=5, weight_decay=0.01, progress=False),
    minilm=MINILM_CPU,
)
# gpu (planned, never measured: no GPU was lent to this chapter): all 25,000 test reviews, N up to 512, five
# draws of shots, a longer SFT and DPO; the checks as in cpu. The plan: 25,000 reviews x (1 zero-shot + 10
# few-shot + 9 LoRA) scoring passes of ~90 tokens each, about 5 minutes a pass on a T4.
GPU = replace(
    CPU,
    sft_per_task=300,
    sft_held_out=25,
    sft_train=TrainConfig(steps=200, lr=1e-3, warmup_steps=20),
    batch_size=16,
    dpo_pairs=2_000,
    dpo_held_out=500,
    dpo_train=TrainConfig(steps=250, lr=5e-4, warmup_steps=25),
    imdb_test=None,
    imdb_pool=5_000,
    labels=(32, 128, 512),
    shot_draws=5,
    min_steps=20,
    score_batch=64,
    classifier=_classifier(20_000, emb=64, heads=4, depth=1, context=128, dropout=0.1),
    minilm=MINILM_CPU,
)
RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["RUNS", "CPU", "GPU", "SMOKE", "ChatRun"]
