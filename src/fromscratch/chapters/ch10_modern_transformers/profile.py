"""Chapter 10's run: tokenisers, BERT pretrained and fine-tuned on IMDb, MiniLM, GPT-2, and the
label-efficiency curve (its sizes: :mod:`fromscratch.chapters.ch10_modern_transformers.label_sizes`)."""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.chapters.ch10_modern_transformers.label_sizes import (
    LABEL_EFFICIENCY_RUNS,
    LabelEfficiencyRun,
)
from fromscratch.models.bert import BertConfig
from fromscratch.tokenizers.special import WORD_SPECIALS
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class ModernRun:
    """The sizes of chapter 10. Our BERT is ``BertForPretraining(size.bert)``, pretrained with
    ``train(model, batches, masked_lm_loss, size.pretraining)`` and fine-tuned with
    ``train(classifier, batches, classification_loss, size.finetuning)``."""

    # 10.1-10.3 tokens
    bpe_reviews: int  # training reviews our BPE learns its merges from
    bpe_vocab: int  # our BPE's vocabulary: 256 bytes + (bpe_vocab - 256) merges
    tradeoff_reviews: int  # test reviews on which tokens per review are counted
    timing_repeats: int  # 10.2: timed passes of each tokeniser over the same reviews (the median; one thread)
    # 10.4-10.5 our BERT: pretrained with masked LM on IMDb, then fine-tuned on the labels
    vocab_words: int  # chapter 06's word vocabulary (training reviews); BERT's adds 3 specials + [MASK]
    bert: BertConfig  # the model; its max_len is also the reviews' length in fine-tuning and testing
    pretrain_len: int  # tokens per review while pretraining: the fine-tuning length (BERT: 128, then 512)
    pretrain_reviews: int | None  # unlabelled reviews used, plus all training reviews (None: all 50,000)
    pretrain_batch: int  # reviews per pretraining step
    mask_rate: float  # share of the real tokens chosen for masked LM (BERT: 0.15; 0.3-0.4 learn faster)
    pretraining: TrainConfig  # masked-LM pretraining: steps, peak AdamW lr, warm-up, then linear decay
    train_reviews: int | None  # labelled training reviews for fine-tuning (None: all 25,000)
    test_reviews: int | None  # test reviews scored (None: all 25,000)
    finetune_batch: int  # reviews per fine-tuning step
    finetuning: TrainConfig  # fine-tuning: epochs (passes over the training reviews), peak lr, warm-up
    pooling: str  # what the classifier reads: "cls" (BERT: the output at <cls>) or "mean" over the tokens
    # 10.6 all-MiniLM-L6-v2: a frozen-encoder linear probe
    probe_train: int  # training reviews embedded for the probe
    probe_test: int  # test reviews embedded to score it
    probe_max_len: int  # WordPiece tokens per review (MiniLM was trained with 128-256)
    label_efficiency: LabelEfficiencyRun  # 10.6 when labels are few: fine-tuning from three starts on N
    # 10.7 GPT-2
    sample_tokens: int  # tokens GPT-2 generates per prompt


def _run(
    *,
    vocab_words: int,
    emb: int,
    heads: int,
    depth: int,
    dropout: float,
    max_len: int,
    pretrain_steps: int,
    pretrain_lr: float,
    pretrain_warmup: int,
    finetune_epochs: float,
    finetune_lr: float,
    finetune_warmup: int,
    **sizes,
) -> ModernRun:
    """One profile's run. The vocabulary is ``vocab_words`` words after ``<pad>``, ``<unk>``, ``<cls>``
    (ids 0-2, :mod:`fromscratch.tokenizers.special`), then ``[MASK]``, the last id. Both trainings use
    AdamW with weight decay 0.01; pretraining uses RoBERTa's beta2 of 0.98 and saves every fifth of its
    steps."""
    return ModernRun(
        vocab_words=vocab_words,
        bert=BertConfig(
            vocab_size=vocab_words + len(WORD_SPECIALS) + 1,
            emb=emb,
            heads=heads,
            depth=depth,
            max_len=max_len,
            dropout=dropout,
        ),
        pretraining=TrainConfig(
            steps=pretrain_steps,
            lr=pretrain_lr,
            warmup_steps=pretrain_warmup,
            weight_decay=0.01,
            betas=(0.9, 0.98),
            checkpoint_every=max(1, pretrain_steps // 5),
        ),
        finetuning=TrainConfig(
            epochs=finetune_epochs, lr=finetune_lr, warmup_steps=finetune_warmup, weight_decay=0.01
        ),
        **sizes,
    )


MODERN_RUNS = {
    # smoke: every step on a handful of reviews, only to prove the code runs (seconds)
    "smoke": _run(
        bpe_reviews=200,
        bpe_vocab=300,
        tradeoff_reviews=50,
        timing_repeats=1,
        vocab_words=2_000,
        emb=32,
        heads=2,
        depth=1,
        dropout=0.0,
        max_len=64,
        pretrain_len=64,
        pretrain_reviews=300,
        pretrain_batch=16,
        mask_rate=0.15,
        pretrain_steps=20,
        pretrain_lr=3e-3,
        pretrain_warmup=5,
        train_reviews=256,
        test_reviews=128,
        finetune_batch=32,
        finetune_epochs=1,
        finetune_lr=3e-3,
        finetune_warmup=2,
        pooling="cls",
        probe_train=32,
        probe_test=32,
        probe_max_len=64,
        label_efficiency=LABEL_EFFICIENCY_RUNS["smoke"],
        sample_tokens=10,
    ),
    # cpu: masked-LM pretraining on all 75,000 train + unlabelled reviews (12,000 steps of 16 reviews:
    # about 2.6 passes over their first 128 words; 702 s on 2 cores, 23.3 % below the unigram baseline
    # over all chosen positions, which counts the 10 % left in place: the chapter scores the [MASK]
    # positions against their own baseline), then one epoch of fine-tuning at the same length. The recipe
    # was measured (issue 23; 3 minutes each on one thread, loss below the unigram baseline over all
    # chosen positions): BERT's (20,000 words, batch 64, 15 % masked, dropout 0.1) 1.0 %; batch 16 6.0 %;
    # + no dropout, lr 5e-3 6.4 %; pre-norm 6.4 %; width 128 6.1 %; + 5,000 words 7.7 %; + 30 % masked
    # 9.0 % (10 minutes: 21.5 %); the copy-aware floor (no context at all) lies about 9 % below that
    # baseline (benchmarks/label_efficiency.py --floors). benchmarks/README.md has the table.
    "cpu": _run(
        bpe_reviews=5_000,
        bpe_vocab=2_000,
        tradeoff_reviews=1_000,
        timing_repeats=5,
        vocab_words=5_000,
        emb=64,
        heads=4,
        depth=2,
        dropout=0.0,
        max_len=128,
        pretrain_len=128,
        pretrain_reviews=None,
        pretrain_batch=16,
        mask_rate=0.3,
        pretrain_steps=12_000,
        pretrain_lr=5e-3,
        pretrain_warmup=100,
        train_reviews=None,
        test_reviews=None,
        finetune_batch=32,
        finetune_epochs=1,
        finetune_lr=1e-3,
        finetune_warmup=50,
        pooling="mean",
        probe_train=2_000,
        probe_test=1_000,
        probe_max_len=128,
        label_efficiency=LABEL_EFFICIENCY_RUNS["cpu"],
        sample_tokens=40,
    ),
    "gpu": _run(
        bpe_reviews=25_000,
        bpe_vocab=8_000,
        tradeoff_reviews=5_000,
        timing_repeats=5,
        vocab_words=30_000,
        emb=256,
        heads=8,
        depth=6,
        dropout=0.1,
        max_len=256,
        pretrain_len=256,
        pretrain_reviews=None,
        pretrain_batch=128,
        mask_rate=0.15,
        pretrain_steps=20_000,
        pretrain_lr=5e-4,
        pretrain_warmup=1_000,
        train_reviews=None,
        test_reviews=None,
        finetune_batch=32,
        finetune_epochs=3,
        finetune_lr=1e-4,
        finetune_warmup=300,
        pooling="cls",
        probe_train=25_000,
        probe_test=25_000,
        probe_max_len=256,
        label_efficiency=LABEL_EFFICIENCY_RUNS["gpu"],
        sample_tokens=60,
    ),
}
