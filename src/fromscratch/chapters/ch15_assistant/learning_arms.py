"""Chapter 15's learning arms: each learns from the same ``N`` labelled IMDb reviews, read as the same text.

- **LoRA-SFT** (:func:`lora_at_n`): the chat model with LoRA, fine-tuned on the reviews and their answers;
- **chapter 06's classifier** (:func:`classifier_at_n`): a small transformer over word ids, from scratch;
- **chapter 10's MiniLM** (:func:`minilm_at_n`): a pretrained 6-layer BERT, fine-tuned.

:func:`learning_arms` runs the three on one draw of ``N`` reviews; each arm's reviews are the clipped
texts in its own tokens (:func:`word_reviews`, :func:`wordpiece_reviews`). The prompting arms and the
data are :mod:`.assistant_imdb`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch

from fromscratch.chapters.ch15_assistant.assistant import lora_finetune
from fromscratch.chapters.ch15_assistant.assistant_imdb import SentimentData, labelled, prompting_logits
from fromscratch.data.imdb import ReviewBatches, Reviews
from fromscratch.data.instructions import ChatBatches, clip_words, sentiment_examples
from fromscratch.metrics import predict_labels
from fromscratch.models.classifier import Classifier, ClassifierConfig
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import IM_END, SMOLLM2_SYSTEM
from fromscratch.tokenizers.words import Vocab, tokenize
from fromscratch.training import TrainConfig, train
from fromscratch.training.finetune import LabelEfficiencyRun, finetune, fresh_encoder, head_tail
from fromscratch.training.losses import classification_loss


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
    context: int,
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
        pad_id=tokenizer.special[IM_END],
        context=context,
        default_system=SMOLLM2_SYSTEM,
    )
    tuned, _ = lora_finetune(
        model,
        batches,
        train_config,
        lora=lora,
        name="15_lora_imdb",
        parts=[*parts, len(texts), words],
        device=device,
        seed=seed,
    )
    return tuned


def word_reviews(reviews: Reviews, texts: Sequence[str], vocab: Vocab, *, words: int) -> Reviews:
    """``reviews`` as chapter 06's classifier reads them here: the clipped ``texts`` in word ids."""
    ids = [torch.tensor(vocab.encode(tokenize(clip_words(t, words))) or [vocab.unk]) for t in texts]
    return replace(reviews, ids=ids, context=max(len(i) for i in ids))


def wordpiece_reviews(
    reviews: Reviews, texts: Sequence[str], tokenizer, *, words: int, context: int
) -> Reviews:
    """``reviews`` as MiniLM reads them here: ``[CLS]`` + the clipped ``texts`` in WordPieces + ``[SEP]``
    (cut further, head and tail, only past ``context``)."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    pieces = tokenizer.encode_batch([clip_words(t, words) for t in texts], add_special_tokens=False)
    ids = [torch.tensor([cls, *head_tail(p.ids, context - 2), sep]) for p in pieces]
    return replace(reviews, ids=ids, context=context)


def classifier_at_n(
    reviews: Reviews,
    test: Reviews,
    config: ClassifierConfig,
    train_config: TrainConfig,
    *,
    batch_size: int,
    seed: int,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """Chapter 06's classifier (``config``, from random weights) trained on ``reviews`` (ids ready:
    :func:`word_reviews`); its predictions on ``test`` ``(n,)``."""
    torch.manual_seed(seed)
    model = Classifier(replace(config, context=max(config.context, reviews.context, test.context)))
    train(model, ReviewBatches(reviews, batch_size), classification_loss, train_config, device=device)
    return predict_labels(model, ReviewBatches(test, 64, shuffle=False), device=device).predicted.cpu()


def minilm_at_n(
    reviews: Reviews,
    test: Reviews,
    run: LabelEfficiencyRun,
    encoder,
    *,
    seed: int,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """Chapter 10's all-MiniLM-L6-v2 (``encoder``, from ``minilm_encoder``; copied, not changed) fine-tuned
    on ``reviews`` (ids ready: :func:`wordpiece_reviews`) with chapter 10's recipe; predictions ``(n,)``."""
    source = fresh_encoder("minilm", None, seed=seed, dropout=run.dropout, minilm=encoder)
    classifier = finetune(source, reviews, run, run.lr("minilm"), seed=seed, device=device)
    return predict_labels(classifier, ReviewBatches(test, 64, shuffle=False), device=device).predicted.cpu()


def learning_arms(
    model: Llama,
    tokenizer: BytePairEncoding,
    data: SentimentData,
    size,
    n: int,
    *,
    seed: int,
    minilm,
    parts: Sequence[object],
    device: torch.device | str = "cpu",
) -> dict[str, torch.Tensor]:
    """The three learning arms after the same ``n`` labelled reviews (draw ``seed``): predictions
    ``(reviews,)``
    on ``data.test`` of LoRA-SFT, chapter 06's classifier and MiniLM; ``size``: the chapter's ``ChatRun``,
    ``minilm``: ``(encoder, tokenizer)`` of ``minilm_encoder``."""
    reviews, texts = labelled(data, n, seed=seed)
    steps = steps_for(n, batch_size=size.batch_size, epochs=size.epochs, min_steps=size.min_steps)
    tuned = lora_at_n(
        model,
        tokenizer,
        texts,
        reviews.labels,
        words=size.review_words,
        lora=size.lora,
        train_config=with_steps(size.imdb_train, steps),
        batch_size=size.batch_size,
        context=size.max_tokens,
        parts=[*parts, reviews.names],
        seed=seed,
        device=device,
    )
    ask = dict(words=size.review_words, batch=size.score_batch)
    out = {"LoRA-SFT": prompting_logits(tuned, tokenizer, data.test_texts, **ask).argmax(-1)}
    del tuned
    words = dict(words=size.review_words)
    train_words = word_reviews(reviews, texts, data.vocab, **words)
    test_words = word_reviews(data.test, data.test_texts, data.vocab, **words)
    out["ch. 06 classifier"] = classifier_at_n(
        train_words,
        test_words,
        size.classifier,
        size.classifier_train,
        batch_size=size.batch_size,
        seed=seed,
        device=device,
    )
    encoder, wordpiece = minilm
    length = dict(words=size.review_words, context=size.minilm.context)
    train_pieces = wordpiece_reviews(reviews, texts, wordpiece, **length)
    test_pieces = wordpiece_reviews(data.test, data.test_texts, wordpiece, **length)
    out["ch. 10 MiniLM"] = minilm_at_n(
        train_pieces, test_pieces, size.minilm, encoder, seed=seed, device=device
    )
    return out


def steps_for(n: int, *, batch_size: int, epochs: float, min_steps: int) -> int:
    """Optimiser steps for ``n`` examples: ``epochs`` passes, at least ``min_steps``."""
    return max(min_steps, -(-int(epochs * n) // batch_size))


def with_steps(config: TrainConfig, steps: int, *, warmup: float = 0.1) -> TrainConfig:
    """``config`` for ``steps`` steps, warmed up over a fraction ``warmup`` of them."""
    return replace(config, steps=steps, epochs=None, warmup_steps=round(warmup * steps))


__all__ = [
    "classifier_at_n",
    "learning_arms",
    "lora_at_n",
    "minilm_at_n",
    "steps_for",
    "with_steps",
    "word_reviews",
    "wordpiece_reviews",
]
