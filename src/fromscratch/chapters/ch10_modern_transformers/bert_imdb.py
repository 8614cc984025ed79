"""Our BERT on IMDb (chapter 10): what the chapter and ``benchmarks/bert_imdb.py`` share, besides ``train``.

Both pretrain a :class:`~fromscratch.models.bert.BertForPretraining` with masked LM and fine-tune a
:class:`~fromscratch.models.bert.BertForClassification` by calling
``train(model, batches, loss_fn, config)`` themselves; this module holds the rest:

- :func:`imdb_for_bert`: chapter 06's word-level reviews and vocabulary, plus the ``[MASK]`` id;
- :func:`pretraining_batches`: masked batches of the 50,000 unlabelled reviews and the training
  reviews' text (never the test reviews);
- :func:`bert_checkpoint`: the checkpoint file of each training, named from a hash of everything that
  changes its weights, so the chapter loads exactly what the benchmark trained with the same sizes;
- :func:`test_accuracy` scores a classifier; :func:`fill_mask` shows a pretrained model's guesses.

``run`` is chapter 10's :class:`~.profile.ModernRun` (``prof.ch10``).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import torch

from fromscratch.chapters.ch10_modern_transformers.profile import ModernRun
from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.pretraining import MaskedBatches, load_unlabelled
from fromscratch.metrics import predict_labels
from fromscratch.models.bert import BertForClassification, BertForPretraining
from fromscratch.tokenizers.special import CLS, PAD, UNK, WORD_SPECIALS
from fromscratch.tokenizers.words import Vocab, tokenize
from fromscratch.training import run_checkpoint
from fromscratch.utils import evaluating

STAGES = ("pretraining", "finetuning")


class BertData(NamedTuple):
    train: Reviews  # labelled training reviews, ids truncated to run.bert.context
    test: Reviews
    vocab: Vocab  # chapter 06's: <pad>, <unk>, <cls> (ids 0-2), then words by frequency
    mask_id: int  # [MASK]: the id after the vocabulary's last, the last id of run.bert's vocabulary


def imdb_for_bert(run: ModernRun, *, seed: int = 0) -> BertData:
    """The labelled reviews and vocabulary (chapter 06's word tokens), and the ``[MASK]`` id.

    Raises ValueError when the training reviews hold fewer than ``run.vocab_words`` distinct words, so
    that ``[MASK]`` is always the last id of ``run.bert.vocab_size``.
    """
    train_set, test_set, vocab = load_imdb(
        run.vocab_words,
        run.bert.context,
        train_reviews=run.train_reviews,
        test_reviews=run.test_reviews,
        seed=seed,
    )
    if len(vocab) + 1 != run.bert.vocab_size:
        words = len(vocab) - len(WORD_SPECIALS)
        raise ValueError(
            f"The {len(train_set):,} training reviews hold only {words:,} distinct words, fewer than "
            f"vocab_words={run.vocab_words:,}; lower vocab_words or raise train_reviews."
        )
    return BertData(train_set, test_set, vocab, mask_id=len(vocab))


def pretraining_batches(run: ModernRun, data: BertData, *, seed: int = 0) -> MaskedBatches:
    """Masked batches of the unlabelled reviews and the training reviews' text, each cut to
    ``run.pretrain_len`` tokens (``<cls>`` included)."""
    texts = load_unlabelled(data.vocab, run.pretrain_len, reviews=run.pretrain_reviews, seed=seed)
    texts += [ids[: run.pretrain_len] for ids in data.train.ids]
    return MaskedBatches(
        texts,
        run.pretrain_batch,
        mask_id=data.mask_id,
        vocab_size=len(data.vocab),
        context=run.pretrain_len,
        rate=run.mask_rate,
        seed=seed,
    )


def bert_checkpoint(run: ModernRun, stage: str, *, seed: int = 0) -> Path:
    """The checkpoint of ``stage`` (``"pretraining"`` or ``"finetuning"``) of ``run``, for
    ``TrainConfig(checkpoint=..., resume=True)``: a hash of the model, the training config(s) and the
    data selection, so that changing any of them starts a new file. Fine-tuning's name includes the
    pretraining's parts: its encoder starts from that run."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}.")
    data = {
        "vocab_words": run.vocab_words,
        "pretrain_len": run.pretrain_len,
        "pretrain_reviews": run.pretrain_reviews,
        "pretrain_batch": run.pretrain_batch,
        "mask_rate": run.mask_rate,
        "train_reviews": run.train_reviews,
        "seed": seed,
    }
    parts = [run.bert, run.pretraining, data]
    if stage == "finetuning":
        parts += [run.finetuning, {"finetune_batch": run.finetune_batch, "pooling": run.pooling}]
    return run_checkpoint(f"10_bert_{stage}", *parts)


def test_accuracy(
    model: BertForClassification, data: BertData, *, device: torch.device | str = "cpu"
) -> float:
    """Accuracy on the test reviews, ``<cls>`` in front as in fine-tuning (``ReviewBatches(cls=True)``)."""
    batches = ReviewBatches(data.test, 128, shuffle=False, cls=True)
    return predict_labels(model, batches, device=device).accuracy


@torch.no_grad()
def fill_mask(model: BertForPretraining, data: BertData, text: str, *, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` likeliest words, with probabilities, for the one ``[MASK]`` in ``text`` (lowercase words)."""
    words = tokenize(text.replace("[MASK]", " MASKTOKEN "))
    if words.count("masktoken") != 1:
        raise ValueError(f"Put exactly one [MASK] in the text, got {text!r}.")
    ids = [CLS] + [data.mask_id if w == "masktoken" else data.vocab.stoi.get(w, UNK) for w in words]
    tokens = torch.tensor([ids], device=next(model.parameters()).device)  # (1, t)
    with evaluating(model):
        logits = model(tokens)[0, ids.index(data.mask_id)]  # (V,)
    logits[[PAD, UNK, CLS, data.mask_id]] = float("-inf")  # never propose a special token
    probs = logits.softmax(-1)
    top = probs.topk(k)
    return [(data.vocab.itos[i], p) for i, p in zip(top.indices.tolist(), top.values.tolist(), strict=True)]


__all__ = [
    "BertData",
    "bert_checkpoint",
    "fill_mask",
    "imdb_for_bert",
    "pretraining_batches",
    "test_accuracy",
]
