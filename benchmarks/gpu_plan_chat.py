"""Chapter 15's training runs for ``gpu_plan.py`` (registered in ``gpu_plan_later.CHAPTERS``): the LoRA-SFT on
the instruction set (15.4) and, for every N of 15.5, LoRA-SFT on N reviews, chapter 06's classifier and
chapter 10's MiniLM on the same N. Scoring the 25,000 test reviews (five arms, one forward pass per review,
the few-shot examples prefix-cached) is not a ``train`` call and is not planned here."""

from __future__ import annotations

import copy
import functools

from gpu_plan_runs import Built, Run, length, longest

from fromscratch.blocks.lora import add_lora
from fromscratch.chapters.ch10_modern_transformers.label_efficiency import minilm_encoder, wordpiece_reviews
from fromscratch.chapters.ch15_assistant.assistant import chat_model_file
from fromscratch.chapters.ch15_assistant.assistant_imdb import (
    labelled,
    sentiment_data,
    steps_for,
    word_reviews,
)
from fromscratch.data.imdb import ReviewBatches
from fromscratch.data.instructions import ChatBatches, arithmetic_examples, sentiment_examples
from fromscratch.interop.gguf_llama import read_gguf_llama
from fromscratch.models import Classifier
from fromscratch.models.bert import BertForClassification
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training.losses import classification_loss
from fromscratch.training.sft import assistant_loss


def chapter_15(prof) -> list[Run]:
    size = prof.chat

    @functools.cache
    def chat():
        data = sentiment_data(
            vocab_words=size.classifier.vocab_size - len(SPECIALS),
            pool=size.imdb_pool,
            test=size.imdb_test,
        )
        path = chat_model_file(size.model, tiny=size.tiny, texts=data.pool_texts[: size.tiny_texts])
        return (data, *read_gguf_llama(path))

    def lora_run(examples) -> Built:
        _, model, tokenizer = chat()
        pad = tokenizer.special["<|im_end|>"]
        batches = ChatBatches(tokenizer, examples, size.batch_size, pad_id=pad, max_len=size.max_tokens)
        batch = max(batches, key=lambda b: b["ids"].numel())  # the longest: the highest peak
        lora = copy.deepcopy(model).train()
        add_lora(lora, **size.lora)
        return lora, batch, assistant_loss

    def build_sft() -> Built:  # the instruction set's longest conversations are its reviews
        data, _, _ = chat()
        reviews, texts = labelled(data, size.sft_per_task, seed=1)
        examples = sentiment_examples(texts, reviews.labels.tolist(), words=size.review_words)
        return lora_run(examples + arithmetic_examples(size.sft_per_task, seed=0))

    def build_lora(n: int) -> Built:
        data, _, _ = chat()
        reviews, texts = labelled(data, n, seed=0)
        return lora_run(sentiment_examples(texts, reviews.labels.tolist(), words=size.review_words))

    def build_classifier(n: int) -> Built:
        reviews, texts = labelled(chat()[0], n, seed=0)
        reviews = word_reviews(reviews, texts, chat()[0].vocab, words=size.review_words)  # what 15.6 reads
        return (
            Classifier(size.classifier),
            longest(ReviewBatches(reviews, size.batch_size)),
            classification_loss,
        )

    def build_minilm(n: int) -> Built:
        reviews, _ = labelled(chat()[0], n, seed=0)
        encoder, tokenizer = minilm_encoder(size.minilm.dropout)
        model = use_pool_dropout(
            BertForClassification(encoder, 2, dropout=size.minilm.dropout, pooling=size.minilm.pooling)
        )
        batches = ReviewBatches(wordpiece_reviews(reviews, tokenizer, size.minilm.max_len), size.minilm.batch)
        return model, longest(batches), classification_loss

    runs = [Run("15", "15.4 LoRA-SFT, instruction set", build_sft, **length(size.sft_train), attention=None)]
    for n in size.labels:
        steps = steps_for(n, batch_size=size.batch_size, epochs=size.epochs, min_steps=size.min_steps)
        per_epoch = -(-n // size.batch_size)
        runs += [
            Run(
                "15", f"15.5 LoRA-SFT, N = {n}", functools.partial(build_lora, n), steps=steps, attention=None
            ),
            Run(
                "15",
                f"15.5 ch. 06 classifier, N = {n}",
                functools.partial(build_classifier, n),
                **length(size.classifier_train, per_epoch),
            ),
            Run(
                "15",
                f"15.5 MiniLM, N = {n}",
                functools.partial(build_minilm, n),
                steps=size.minilm.steps(n),
                attention=None,
            ),
        ]
    return runs
