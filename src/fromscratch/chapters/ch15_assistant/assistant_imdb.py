"""Chapter 15's measurement: what a chat model buys on IMDb, beside chapters 06 and 10 at the same labels.

Every arm reads **the same text**: each review cut to ``words`` words, its first quarter and last three
quarters (:func:`~fromscratch.data.instructions.clip_words`), then put through the arm's own tokenizer.
Every arm is scored on the same balanced test reviews, and every arm that learns gets the same ``N``
labelled training reviews (a balanced draw per seed):

- **zero-shot**: the chat model asked "Is this movie review positive or negative?"; its answer is the
  likelier of the first tokens of ``negative`` and ``positive`` (no text is generated);
- **k-shot**: the same after ``k`` solved examples as earlier turns, in two orders (the last example
  positive, or negative) and several draws of examples (:func:`shot_sets`);
- **calibrated**: either prompt, its two answer probabilities divided by those it gives to content-free
  reviews (``N/A``, ``[MASK]``, nothing; Zhao et al. 2021, *contextual calibration*, :func:`calibrate`);
- **LoRA-SFT after N labels**: the chat model with LoRA, fine-tuned on the N reviews and their answers;
- **chapter 06's classifier** (a small transformer over word ids, from scratch) after the same N labels;
- **chapter 10's MiniLM** (a pretrained 6-layer BERT) fine-tuned on the same N labels.

Each arm gives a correctness table ``(runs, n)`` (a run: one seed, one draw); the comparisons are paired
(:mod:`.paired`). :func:`sentiment_data` loads the reviews; the ``*_at_n`` functions train one arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from fromscratch.chapters.ch10_modern_transformers.label_efficiency import finetune, fresh_encoder, head_tail
from fromscratch.chapters.ch10_modern_transformers.label_sizes import LabelEfficiencyRun
from fromscratch.chapters.ch15_assistant.assistant import (
    choice_ids,
    few_shot,
    label_logits,
    lora_finetune,
    prompt_ids,
)
from fromscratch.chapters.ch15_assistant.paired import paired_bootstrap
from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.instructions import LABELS, ChatBatches, Example, clip_words, sentiment_examples
from fromscratch.metrics import predict_labels
from fromscratch.models.classifier import Classifier, ClassifierConfig
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import IM_END, SMOLLM2_SYSTEM
from fromscratch.tokenizers.words import Vocab, tokenize
from fromscratch.training import TrainConfig, train
from fromscratch.training.losses import classification_loss

CONTENT_FREE = ("N/A", "[MASK]", "")  # Zhao et al. 2021's inputs that say nothing about the label


@dataclass
class SentimentData:
    """The reviews every arm uses: a labelled pool to draw N from, and the test sample; their texts."""

    pool: Reviews  # training reviews (labels, names; ids not used: every arm reads the clipped text)
    test: Reviews  # the balanced test sample every arm is scored on
    pool_texts: list[str]
    test_texts: list[str]
    vocab: Vocab  # chapter 06's word vocabulary, from the pool


def sentiment_data(*, vocab_words: int, pool: int, test: int | None, seed: int = 0) -> SentimentData:
    """IMDb's reviews for the comparison: ``pool`` training reviews and ``test`` test reviews (None: all
    25,000), balanced and seeded; chapter 06's vocabulary of ``vocab_words`` words from the pool."""
    train_set, test_set, vocab = load_imdb(vocab_words, 1, train_reviews=pool, test_reviews=test, seed=seed)
    pool_texts = [train_set.text(i) for i in range(len(train_set))]
    test_texts = [test_set.text(i) for i in range(len(test_set))]
    return SentimentData(train_set, test_set, pool_texts, test_texts, vocab)


def labelled(data: SentimentData, n: int, *, seed: int) -> tuple[Reviews, list[str]]:
    """``n`` balanced labelled reviews drawn (seeded) from the pool, and their texts."""
    _, chosen = data.pool.hold_out(n, seed=seed)
    index = {name: i for i, name in enumerate(data.pool.names)}
    return chosen, [data.pool_texts[index[name]] for name in chosen.names]


# --- prompting -------------------------------------------------------------------------------------
def shot_sets(data: SentimentData, k: int, *, words: int, draws: int) -> list[dict[str, list[Example]]]:
    """``draws`` sets of ``k`` solved reviews (balanced; draw ``d`` seeded ``1000 + d``), each in two orders:
    ``"ends positive"`` (negative, positive, ..., positive) and ``"ends negative"`` (the reverse). A model
    that leans to the last label it saw (*recency bias*) answers differently after the two."""
    sets = []
    for draw in range(draws):
        reviews, texts = labelled(data, k, seed=1000 + draw)
        examples = sentiment_examples(texts, reviews.labels.tolist(), words=words)
        negative = [e for e in examples if e.answer == LABELS[0]]
        positive = [e for e in examples if e.answer == LABELS[1]]
        ends_positive = [e for pair in zip(negative, positive, strict=False) for e in pair]
        ends_positive += negative[len(positive) :] + positive[len(negative) :]
        sets.append({"ends positive": ends_positive, "ends negative": ends_positive[::-1]})
    return sets


def prompting_logits(
    model: Llama,
    tokenizer: BytePairEncoding,
    texts: Sequence[str],
    *,
    words: int,
    shots: Sequence[Example] = (),
    batch: int = 8,
) -> torch.Tensor:
    """Logits ``(n, 2)`` of ``negative`` and ``positive`` as the first token of the answer to each review's
    question (the review cut to ``words`` words), after the solved ``shots`` (few-shot) or none."""
    questions = sentiment_examples(texts, [0] * len(texts), words=words)  # the label is not shown
    context = few_shot(shots)
    prompts = [prompt_ids(tokenizer, [*context, *q.prompt]) for q in questions]
    return label_logits(model, prompts, choice_ids(tokenizer, LABELS), batch=batch)  # (n, 2)


def calibrate(logits: torch.Tensor, content_free: torch.Tensor) -> torch.Tensor:
    """Contextual calibration (Zhao et al. 2021): the two answers' log-probabilities ``(n, 2)`` minus the
    log of their mean probability on content-free inputs (``content_free`` logits ``(m, 2)``). A prompt
    that says ``positive`` to "N/A" as readily as to a good review has that lean divided out."""
    prior = torch.softmax(content_free.float(), dim=-1).mean(0)  # (2,)
    return torch.log_softmax(logits.float(), dim=-1) - prior.log()  # (n, 2)


def content_free_logits(
    model: Llama, tokenizer: BytePairEncoding, *, shots: Sequence[Example] = (), words: int
) -> torch.Tensor:
    """:func:`prompting_logits` of the :data:`CONTENT_FREE` reviews after ``shots``: ``(3, 2)``."""
    return prompting_logits(model, tokenizer, CONTENT_FREE, words=words, shots=shots, batch=len(CONTENT_FREE))


# --- the learning arms -----------------------------------------------------------------------------
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
        pad_id=tokenizer.special[IM_END],
        max_len=max_len,
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
    return replace(reviews, ids=ids, max_len=max(len(i) for i in ids))


def wordpiece_reviews(
    reviews: Reviews, texts: Sequence[str], tokenizer, *, words: int, max_len: int
) -> Reviews:
    """``reviews`` as MiniLM reads them here: ``[CLS]`` + the clipped ``texts`` in WordPieces + ``[SEP]``
    (cut further, head and tail, only past ``max_len``)."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    pieces = tokenizer.encode_batch([clip_words(t, words) for t in texts], add_special_tokens=False)
    ids = [torch.tensor([cls, *head_tail(p.ids, max_len - 2), sep]) for p in pieces]
    return replace(reviews, ids=ids, max_len=max_len)


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
    model = Classifier(replace(config, max_len=max(config.max_len, reviews.max_len, test.max_len)))
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


@dataclass
class Arm:
    """One arm of the comparison: its name, its labels N, and its correctness on the test reviews."""

    name: str  # "zero-shot", "4-shot, ends positive", "LoRA-SFT", ...
    n: int  # labelled reviews it learned from or was shown (0: none)
    correct: torch.Tensor  # bool (runs, reviews): one row per seed or draw
    said_positive: float  # the share of answers "positive" (half the reviews are)

    @property
    def accuracy(self) -> float:
        return self.correct.float().mean().item()


def arm(name: str, n: int, predictions: Sequence[torch.Tensor], labels: torch.Tensor) -> Arm:
    """An :class:`Arm` from its predictions ``(reviews,)`` per run against ``labels`` ``(reviews,)``."""
    predicted = torch.stack([p.cpu().long() for p in predictions])  # (runs, reviews)
    return Arm(name, n, predicted == labels.cpu()[None], (predicted == 1).float().mean().item())


def table_rows(arms: Sequence[Arm], baseline: Arm) -> list[tuple]:
    """One row per arm: name, N, runs, accuracy (mean over runs), each run's, the share answered
    ``positive``, and the paired difference from ``baseline`` with its 95 % interval (points)."""
    rows = []
    for a in arms:
        d = paired_bootstrap(a.correct, baseline.correct)
        runs = " / ".join(f"{x:.1%}" for x in a.correct.float().mean(1).tolist())
        versus = "" if a is baseline else f"{d.value * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        rows.append(
            (a.name, a.n, a.correct.size(0), f"{a.accuracy:.1%}", runs, f"{a.said_positive:.0%}", versus)
        )
    return rows


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
        max_len=size.max_tokens,
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
    length = dict(words=size.review_words, max_len=size.minilm.max_len)
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
    "CONTENT_FREE",
    "Arm",
    "arm",
    "learning_arms",
    "SentimentData",
    "calibrate",
    "classifier_at_n",
    "content_free_logits",
    "labelled",
    "lora_at_n",
    "minilm_at_n",
    "prompting_logits",
    "sentiment_data",
    "shot_sets",
    "table_rows",
    "steps_for",
    "with_steps",
    "word_reviews",
    "wordpiece_reviews",
]
