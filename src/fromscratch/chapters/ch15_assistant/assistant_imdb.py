"""Chapter 15's measurement: what a chat model buys on IMDb, beside chapters 06 and 10 at the same labels.

Every arm is scored on the same balanced IMDb test reviews, each with its 95 % interval
(:func:`~fromscratch.metrics.intervals.wilson_interval`), and every arm that learns sees the same ``N``
labelled training reviews (balanced, seeded):

- **zero-shot**: the chat model asked "Is this movie review positive or negative?"; its answer is the
  more likely of the first tokens of ``positive`` and ``negative`` (no text is generated);
- **few-shot**: the same after ``k`` solved examples as earlier turns of the conversation;
- **LoRA-SFT after N labels**: the chat model with LoRA, fine-tuned on the N reviews and their answers;
- **chapter 06's classifier** (a small transformer over word ids, from scratch) after the same N labels;
- **chapter 10's MiniLM** (a pretrained 6-layer BERT,
  :mod:`~fromscratch.chapters.ch10_modern_transformers.label_efficiency`) fine-tuned on the same N labels.

The reviews are cut the same way for all (``words`` words, head and tail, before each model's own
tokenizer). :func:`sentiment_data` loads them; the ``*_at_n`` functions train one arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from fromscratch.chapters.ch10_modern_transformers.label_efficiency import (
    finetune,
    fresh_encoder,
    minilm_encoder,
    wordpiece_reviews,
)
from fromscratch.chapters.ch10_modern_transformers.label_sizes import LabelEfficiencyRun
from fromscratch.chapters.ch15_assistant.assistant import (
    accuracy_of,
    choice_ids,
    few_shot,
    label_logits,
    lora_finetune,
    prompt_ids,
)
from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.instructions import LABELS, ChatBatches, Example, sentiment_examples
from fromscratch.metrics import predict_labels
from fromscratch.metrics.intervals import Proportion, wilson_interval
from fromscratch.models.classifier import Classifier, ClassifierConfig
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import SMOLLM2_SYSTEM
from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import classification_loss


@dataclass
class SentimentData:
    """The reviews every arm uses: a labelled pool to draw N from, and the test sample."""

    pool: Reviews  # training reviews (word ids of chapter 06's vocabulary, and their texts)
    test: Reviews  # the balanced test sample every arm is scored on
    pool_texts: list[str]
    test_texts: list[str]


def sentiment_data(
    *, vocab_words: int, max_len: int, pool: int, test: int | None, seed: int = 0
) -> SentimentData:
    """IMDb's reviews for the comparison: ``pool`` training reviews and ``test`` test reviews (None: all
    25,000), balanced and seeded; word ids cut to ``max_len`` for chapter 06's classifier."""
    train_set, test_set, _ = load_imdb(vocab_words, max_len, train_reviews=pool, test_reviews=test, seed=seed)
    texts = (
        [train_set.text(i) for i in range(len(train_set))],
        [test_set.text(i) for i in range(len(test_set))],
    )
    return SentimentData(train_set, test_set, *texts)


def labelled(data: SentimentData, n: int, *, seed: int) -> tuple[Reviews, list[str]]:
    """``n`` balanced labelled reviews drawn (seeded) from the pool, and their texts."""
    rest, chosen = data.pool.hold_out(n, seed=seed)
    del rest
    index = {name: i for i, name in enumerate(data.pool.names)}
    return chosen, [data.pool_texts[index[name]] for name in chosen.names]


def shot_examples(data: SentimentData, k: int, *, words: int, seed: int = 0) -> list[Example]:
    """``k`` solved reviews for few-shot prompting, drawn as :func:`labelled` draws, their labels
    alternating (negative, positive, ...): an order that ends with one class biases the answer
    (Zhao et al. 2021, "Calibrate before use")."""
    reviews, texts = labelled(data, k, seed=seed)
    examples = sentiment_examples(texts, reviews.labels.tolist(), words=words)
    negative = [e for e in examples if e.answer == LABELS[0]]
    positive = [e for e in examples if e.answer == LABELS[1]]
    alternating = [e for pair in zip(negative, positive, strict=False) for e in pair]
    return alternating + negative[len(positive) :] + positive[len(negative) :]


def prompting_logits(
    model: Llama,
    tokenizer: BytePairEncoding,
    texts: Sequence[str],
    labels: torch.Tensor,
    *,
    words: int,
    shots: Sequence[Example] = (),
    batch: int = 8,
) -> torch.Tensor:
    """Logits ``(n, 2)`` of ``negative`` and ``positive`` as the first token of the answer to each review's
    question, after the solved ``shots`` (few-shot) or none (zero-shot)."""
    questions = sentiment_examples(texts, labels.tolist(), words=words)
    context = few_shot(shots)
    prompts = [prompt_ids(tokenizer, [*context, *q.prompt]) for q in questions]
    return label_logits(model, prompts, choice_ids(tokenizer, LABELS), batch=batch)  # (n, 2)


def prompting_accuracy(
    model: Llama, tokenizer: BytePairEncoding, texts: Sequence[str], labels: torch.Tensor, **kw
) -> Proportion:
    """The accuracy of :func:`prompting_logits`' answers, with its 95 % interval."""
    return accuracy_of(prompting_logits(model, tokenizer, texts, labels, **kw), labels)


def lora_at_n(
    model: Llama,
    tokenizer: BytePairEncoding,
    texts: Sequence[str],
    labels: torch.Tensor,
    *,
    words: int,
    lora: dict,
    train_config: TrainConfig,
    batch_size: int,
    max_len: int,
    parts: Sequence[object],
    seed: int,
    device: torch.device | str = "cpu",
) -> Llama:
    """The chat model with LoRA fine-tuned on the labelled reviews (prompt -> its answer word); the same
    conversation format as the prompting arms, the loss on the answer and ``<|im_end|>`` only."""
    examples = sentiment_examples(texts, labels.tolist(), words=words)
    batches = ChatBatches(
        tokenizer,
        examples,
        batch_size,
        pad_id=tokenizer.special["<|im_end|>"],
        max_len=max_len,
        default_system=SMOLLM2_SYSTEM,
    )
    tuned, _ = lora_finetune(
        model,
        batches,
        train_config,
        lora=lora,
        name="15_lora_imdb",
        parts=[*parts, len(texts)],
        device=device,
        seed=seed,
    )
    return tuned


def classifier_at_n(
    reviews: Reviews,
    test: Reviews,
    config: ClassifierConfig,
    train_config: TrainConfig,
    *,
    batch_size: int,
    seed: int,
    device: torch.device | str = "cpu",
) -> Proportion:
    """Chapter 06's classifier (``config``, from random weights) trained on ``reviews``; its test accuracy."""
    torch.manual_seed(seed)
    model = Classifier(config)
    batches = ReviewBatches(reviews, batch_size)
    train(model, batches, classification_loss, train_config, device=device)
    predictions = predict_labels(model, ReviewBatches(test, 64, shuffle=False), device=device)
    return wilson_interval(int((predictions.predicted == predictions.labels).sum()), len(test))


def minilm_at_n(
    reviews: Reviews, test: Reviews, run: LabelEfficiencyRun, *, seed: int, device: torch.device | str = "cpu"
) -> Proportion:
    """Chapter 10's all-MiniLM-L6-v2, fine-tuned on ``reviews`` as its label-efficiency benchmark does."""
    encoder, tokenizer = minilm_encoder(run.dropout)
    source = fresh_encoder("minilm", None, seed=seed, dropout=run.dropout, minilm=encoder)
    train_set = wordpiece_reviews(reviews, tokenizer, run.max_len)
    classifier = finetune(source, train_set, run, run.lr("minilm"), seed=seed, device=device)
    predictions = predict_labels(
        classifier,
        ReviewBatches(wordpiece_reviews(test, tokenizer, run.max_len), 64, shuffle=False),
        device=device,
    )
    return wilson_interval(int((predictions.predicted == predictions.labels).sum()), len(test))


def steps_for(n: int, *, batch_size: int, epochs: float, min_steps: int) -> int:
    """Optimiser steps for ``n`` examples: ``epochs`` passes, at least ``min_steps``."""
    return max(min_steps, -(-int(epochs * n) // batch_size))


def with_steps(config: TrainConfig, steps: int, *, warmup: float = 0.1) -> TrainConfig:
    """``config`` for ``steps`` steps, warmed up over a fraction ``warmup`` of them, without a progress bar
    when it is short."""
    return replace(config, steps=steps, epochs=None, warmup_steps=round(warmup * steps))


__all__ = [
    "SentimentData",
    "classifier_at_n",
    "labelled",
    "lora_at_n",
    "minilm_at_n",
    "prompting_accuracy",
    "prompting_logits",
    "shot_examples",
    "sentiment_data",
    "steps_for",
    "with_steps",
]
