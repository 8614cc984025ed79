"""Our BERT on IMDb (chapter 10): pretrain with masked LM on the reviews' text, then fine-tune.

The three steps of the chapter and of ``benchmarks/bert_imdb.py``, written once:

1. :func:`imdb_for_bert`: chapter 06's word-level reviews and vocabulary, plus a ``[MASK]`` id;
2. :func:`pretrain`: masked-LM pretraining of a :class:`~fromscratch.models.bert.BertForPretraining`
   on the 50,000 unlabelled reviews and the training reviews' text (never the test reviews);
3. :func:`finetune`: a :class:`~fromscratch.models.bert.BertForClassification` on the pretrained
   encoder, trained on the labels; :func:`test_accuracy` scores it.

Both trainings write checkpoints under the data cache named after the run's sizes (``run.tag``), and
``resume=True`` (the default) loads a finished one instead of training again: the chapter reuses
what the benchmark trained when the sizes are the same.
``run`` is a :class:`fromscratch.profiles.modern.ModernRun` (``prof.modern``).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fromscratch.data.imdb import ReviewBatches, Reviews, load_imdb
from fromscratch.data.pretraining import MaskedBatches, load_unlabelled
from fromscratch.metrics import predict_labels
from fromscratch.models.bert import BertForClassification, BertForPretraining
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.tokenizers.words import Vocab, tokenize
from fromscratch.training import History, TrainConfig, train
from fromscratch.training.checkpoints import checkpoint_path
from fromscratch.training.losses import classification_loss, masked_lm_loss
from fromscratch.utils import evaluating


class BertData(NamedTuple):
    train: Reviews  # labelled training reviews, ids truncated to run.max_len
    test: Reviews
    vocab: Vocab  # chapter 06's: <pad>, <unk>, <cls>, then words by frequency
    mask_id: int  # [MASK]: the id after the vocabulary's last


def imdb_for_bert(run, *, seed: int = 0) -> BertData:
    """The labelled reviews and vocabulary (chapter 06's word tokens), and the ``[MASK]`` id."""
    train_set, test_set, vocab = load_imdb(
        run.vocab_words,
        run.max_len,
        train_reviews=run.train_reviews,
        test_reviews=run.test_reviews,
        seed=seed,
    )
    return BertData(train_set, test_set, vocab, mask_id=len(vocab))


def pretraining_checkpoint(run):
    """Where :func:`pretrain` keeps its checkpoint for these sizes."""
    return checkpoint_path(f"10_bert_mlm_{run.tag}.pt")


def finetuning_checkpoint(run):
    """Where :func:`finetune` keeps its checkpoint for these sizes."""
    return checkpoint_path(f"10_bert_imdb_{run.tag}-{run.finetune_tag}.pt")


def pretraining_batches(run, data: BertData, *, seed: int = 0) -> MaskedBatches:
    """Masked batches of the unlabelled reviews and the training reviews' text, ``run.pretrain_len`` tokens."""
    texts = load_unlabelled(data.vocab, run.pretrain_len, reviews=run.pretrain_reviews, seed=seed)
    texts += [ids[: run.pretrain_len] for ids in data.train.ids]
    return MaskedBatches(
        texts,
        run.pretrain_batch,
        mask_id=data.mask_id,
        vocab_size=len(data.vocab),
        max_len=run.pretrain_len,
        seed=seed,
    )


def pretrain(
    run,
    data: BertData,
    batches: MaskedBatches,
    *,
    device: torch.device | str = "cpu",
    seed: int = 0,
    resume: bool = True,
    progress=True,
) -> tuple[BertForPretraining, History]:
    """Masked-LM pretraining on ``batches`` (:func:`pretraining_batches`) with the ``run.pretrain_*`` sizes.

    Returns the model and its history; with ``resume=True`` a finished checkpoint of the same sizes
    is loaded instead of training again.
    """
    torch.manual_seed(seed)
    model = use_pool_dropout(
        BertForPretraining(run.bert, vocab_size=len(data.vocab) + 1)
    )  # cheaper masks on a CPU
    config = TrainConfig(
        steps=run.pretrain_steps,
        lr=run.pretrain_lr,
        warmup_steps=run.pretrain_warmup,
        weight_decay=0.01,
        betas=(0.9, 0.98),
        checkpoint=pretraining_checkpoint(run),
        checkpoint_every=max(1, run.pretrain_steps // 5),
        resume=resume,
        progress=progress,
    )
    history = train(model, batches, masked_lm_loss, config, device=device)
    return model, history


def finetune(
    run,
    data: BertData,
    pretrained: BertForPretraining | None,
    *,
    device: torch.device | str = "cpu",
    seed: int = 0,
    resume: bool = True,
    progress=True,
) -> tuple[BertForClassification, History]:
    """Fine-tune a classifier on the labelled reviews (``run.finetune_*``), from ``pretrained``'s encoder,
    or from a fresh random encoder when ``pretrained`` is None (no checkpoint then)."""
    torch.manual_seed(seed)
    fresh = BertForPretraining(run.bert, vocab_size=len(data.vocab) + 1)
    encoder = pretrained.encoder if pretrained is not None else fresh.encoder
    model = use_pool_dropout(BertForClassification(encoder, 2, dropout=run.dropout, pooling=run.pooling))
    batches = ReviewBatches(
        data.train, run.finetune_batch, cls=True, generator=torch.Generator().manual_seed(seed)
    )
    config = TrainConfig(
        epochs=run.finetune_epochs,
        lr=run.finetune_lr,
        warmup_steps=run.finetune_warmup,
        weight_decay=0.01,
        checkpoint=finetuning_checkpoint(run) if pretrained is not None else None,
        resume=resume,
        progress=progress,
    )
    history = train(model, batches, classification_loss, config, device=device)
    return model, history


def test_accuracy(
    model: BertForClassification, data: BertData, *, device: torch.device | str = "cpu"
) -> float:
    """Accuracy on the test reviews (with ``<cls>`` in front, as in fine-tuning)."""
    batches = ReviewBatches(data.test, 128, shuffle=False, cls=True)
    return predict_labels(model, batches, device=device).accuracy


@torch.no_grad()
def fill_mask(model: BertForPretraining, data: BertData, text: str, *, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` likeliest words, with probabilities, for the one ``[mask]`` in ``text`` (lowercase words)."""
    words = tokenize(text.replace("[MASK]", " MASKTOKEN "))
    if words.count("masktoken") != 1:
        raise ValueError(f"Put exactly one [MASK] in the text, got {text!r}.")
    ids = [2] + [
        data.mask_id if w == "masktoken" else data.vocab.stoi.get(w, 1) for w in words
    ]  # <cls> first
    tokens = torch.tensor([ids], device=next(model.parameters()).device)  # (1, t)
    with evaluating(model):
        logits = model(tokens)[0, ids.index(data.mask_id)]  # (V,)
    logits[[0, 1, 2, data.mask_id]] = float("-inf")  # never propose <pad>, <unk>, <cls> or [MASK]
    probs = logits.softmax(-1)
    top = probs.topk(k)
    return [(data.vocab.itos[i], p) for i, p in zip(top.indices.tolist(), top.values.tolist(), strict=True)]


__all__ = [
    "BertData",
    "fill_mask",
    "finetune",
    "finetuning_checkpoint",
    "imdb_for_bert",
    "pretrain",
    "pretraining_batches",
    "pretraining_checkpoint",
    "test_accuracy",
]
