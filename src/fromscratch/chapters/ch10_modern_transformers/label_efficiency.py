"""Chapter 10's label-efficiency curve: what pretraining buys when labels are few.

The same fine-tuning (``train(classifier, batches, classification_loss, config)``) from three starting
points, on ``N`` labelled training reviews, each scored on the same balanced test reviews:

- ``random``: our BERT (``prof.ch10.bert``) with fresh random weights;
- ``ours``: the same BERT after chapter 10's masked-LM pretraining (loaded from its checkpoint,
  :func:`pretrained_bert`, trained first if missing);
- ``minilm``: the real all-MiniLM-L6-v2 loaded into our ``BertEncoder`` (WordPiece tokens).

Every review is cut to ``context`` tokens of its own tokenizer, keeping its head and its tail
(Sun et al. 2019: the start and the end of a review say most about it). ``benchmarks/label_efficiency.py``
runs the whole table; its sizes are the profile's (``prof.ch10.label_efficiency``, a
:class:`~fromscratch.training.finetune.LabelEfficiencyRun`; the fine-tuning itself is
:mod:`fromscratch.training.finetune`'s). Shape legend: ``t`` length.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from fromscratch.chapters.ch10_modern_transformers.bert_imdb import (
    BertData,
    bert_checkpoint,
    pretraining_batches,
)
from fromscratch.chapters.ch10_modern_transformers.profile import ModernRun
from fromscratch.chapters.results import quoted
from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.pretraining import MaskedBatches
from fromscratch.metrics import predict_labels
from fromscratch.models.bert import BertForClassification, BertForPretraining
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.tokenizers.special import CLS, IGNORE
from fromscratch.training import History, train
from fromscratch.training.finetune import LabelEfficiencyRun, head_tail
from fromscratch.training.losses import masked_lm_loss
from fromscratch.utils import evaluating

# chapter 06's cpu reference run (its results.json), for the curve's horizontal lines: trained on all its
# training reviews at 512 tokens, scored on all 25,000 test reviews
_LABELS = f"{quoted('06', 'train_reviews'):,} labels"
CHAPTER_06 = {
    f"ch. 06 bag of embeddings, {_LABELS}": quoted("06", "bag_accuracy"),
    f"ch. 06 transformer, {_LABELS}": quoted("06", "transformer_accuracy"),
}


# --- data ----------------------------------------------------------------------------------------
def word_reviews(reviews: Reviews, context: int) -> Reviews:
    """``reviews`` (word ids, uncut) as our BERT reads them: ``<cls>`` + head and tail, ``<= context``."""
    ids = [torch.tensor([CLS, *head_tail(r, context - 1)]) for r in reviews.ids]
    return replace(reviews, ids=ids, context=context)


def wordpiece_reviews(reviews: Reviews, tokenizer, context: int) -> Reviews:
    """``reviews`` re-tokenised with MiniLM's WordPiece ``tokenizer`` (from ``load_bert``):
    ``[CLS]`` + head and tail + ``[SEP]``, ``<= context`` ids each (``[PAD]`` is 0, as ours)."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    texts = [reviews.text(i).replace("<br />", " ") for i in range(len(reviews))]
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    pieces = tokenizer.encode_batch(texts, add_special_tokens=False)
    ids = [torch.tensor([cls, *head_tail(p.ids, context - 2), sep]) for p in pieces]
    return replace(reviews, ids=ids, context=context)


def bert_data(modern: ModernRun) -> BertData:
    """Chapter 10's reviews and vocabulary (as :func:`~.bert_imdb.imdb_for_bert`),
    but uncut, so that :func:`word_reviews` can keep each review's tail."""
    train_set, test_set, vocab = load_imdb(
        modern.vocab_words, 1_000_000, train_reviews=modern.train_reviews, test_reviews=modern.test_reviews
    )
    if len(vocab) + 1 != modern.bert.vocab_size:
        raise ValueError(f"The vocabulary has {len(vocab):,} entries, not {modern.bert.vocab_size - 1:,}.")
    return BertData(train_set, test_set, vocab, mask_id=len(vocab))


def splits(data: BertData, run: LabelEfficiencyRun) -> tuple[Reviews, Reviews, Reviews]:
    """``pool, val, test``: the training reviews that runs draw their N from, the held-out ones that
    pick the lr, and the test reviews every run is scored on (all balanced, seed 0)."""
    pool, val = data.train.hold_out(run.val_reviews, seed=0)
    return pool, val, data.test.hold_out(run.test_reviews, seed=0)[1]


# --- models --------------------------------------------------------------------------------------
def pretrained_bert(
    modern: ModernRun,
    data: BertData,
    *,
    device: torch.device | str = "cpu",
    seed: int = 0,
    progress: bool = True,
) -> tuple[BertForPretraining, History]:
    """Chapter 10's pretrained BERT: its ``train`` call with its checkpoint (``bert_checkpoint``,
    ``resume=True``), so a finished run is loaded at once and a missing one is trained and saved."""
    config = replace(
        modern.pretraining,
        checkpoint=bert_checkpoint(modern, "pretraining", seed=seed),
        resume=True,
        progress=progress,
    )
    torch.manual_seed(seed)
    model = use_pool_dropout(BertForPretraining(modern.bert))
    history = train(
        model, pretraining_batches(modern, data, seed=seed), masked_lm_loss, config, device=device
    )
    return model, history


@torch.no_grad()
def masked_lm_eval(
    model: BertForPretraining, batches: MaskedBatches, *, max_batches: int = 50, positions: str = "chosen"
) -> float:
    """The model's mean masked-LM loss (nats per scored token) over the first ``max_batches`` batches:
    at every chosen position (``positions="chosen"``, what training minimises) or only where the input
    shows ``[MASK]`` (``"masked"``: there no answer can be copied from the input, so the unigram baseline
    of the same positions is the best loss without context; :mod:`fromscratch.metrics.unigram`)."""
    if positions not in ("chosen", "masked"):
        raise ValueError(f'positions must be "chosen" or "masked", got {positions!r}.')
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with evaluating(model):
        for i, batch in enumerate(batches):
            if i == max_batches:
                break
            batch = {k: v.to(device) for k, v in batch.items()}
            chosen = batch["labels"] != IGNORE  # (b, t)
            if positions == "masked":
                chosen &= batch["tokens"] == batches.mask_id  # (b, t): [MASK] shown
            logits = model(batch["tokens"], batch["padding_mask"], only=chosen)  # (n, V)
            total += float(
                torch.nn.functional.cross_entropy(logits.float(), batch["labels"][chosen], reduction="sum")
            )
            count += int(chosen.sum())
    return total / count


def review_accuracy(
    classifier: BertForClassification, reviews: Reviews, *, device: torch.device | str = "cpu"
) -> float:
    """The share of ``reviews`` (ids ready) that ``classifier`` labels right, in batches of 64 sorted by
    length (the scoring is :func:`~fromscratch.metrics.predict_labels`')."""
    return predict_labels(classifier, ReviewBatches(reviews, 64, shuffle=False), device=device).accuracy


__all__ = [
    "CHAPTER_06",
    "bert_data",
    "masked_lm_eval",
    "pretrained_bert",
    "review_accuracy",
    "splits",
    "word_reviews",
    "wordpiece_reviews",
]
