"""Chapter 10's run: tokenisers, BERT pretrained and fine-tuned on IMDb, MiniLM, GPT-2, and the
label-efficiency curve (its sizes: :mod:`fromscratch.chapters.ch10_modern_transformers.label_sizes`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.chapters.ch10_modern_transformers import label_sizes
from fromscratch.chapters.ch10_modern_transformers.label_sizes import LabelEfficiencyRun
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
    bert: BertConfig  # the model; its context is also the reviews' length in fine-tuning and testing
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


# smoke: every step on a handful of reviews, only to prove the code runs (seconds)
SMOKE = ModernRun(
    bpe_reviews=200,
    bpe_vocab=300,
    tradeoff_reviews=50,
    timing_repeats=1,
    vocab_words=2_000,
    # the vocabulary: <pad>, <unk>, <cls> (ids 0-2, fromscratch.tokenizers.special), the words, then
    # [MASK], the last id
    bert=BertConfig(
        vocab_size=2_000 + len(WORD_SPECIALS) + 1, emb=32, heads=2, depth=1, context=64, dropout=0.0
    ),
    pretrain_len=64,
    pretrain_reviews=300,
    pretrain_batch=16,
    mask_rate=0.15,
    # AdamW with RoBERTa's beta2 of 0.98, weight decay 0.01; saved every fifth of the steps
    pretraining=TrainConfig(
        steps=20, lr=3e-3, warmup_steps=5, weight_decay=0.01, betas=(0.9, 0.98), checkpoint_every=4
    ),
    train_reviews=256,
    test_reviews=128,
    finetune_batch=32,
    finetuning=TrainConfig(epochs=1, lr=3e-3, warmup_steps=2, weight_decay=0.01),
    pooling="cls",
    probe_train=32,
    probe_test=32,
    probe_max_len=64,
    label_efficiency=label_sizes.SMOKE,
    sample_tokens=10,
)
# cpu: masked-LM pretraining on all 75,000 train + unlabelled reviews (12,000 steps of 16 reviews:
# about 2.6 passes over their first 128 words; 702 s on 2 cores, 23.3 % below the unigram baseline
# over all chosen positions, which counts the 10 % left in place: the chapter scores the [MASK]
# positions against their own baseline), then one epoch of fine-tuning at the same length. The recipe
# was measured (3 minutes each on one thread, loss below the unigram baseline over all
# chosen positions): BERT's (20,000 words, batch 64, 15 % masked, dropout 0.1) 1.0 %; batch 16 6.0 %;
# + no dropout, lr 5e-3 6.4 %; pre-norm 6.4 %; width 128 6.1 %; + 5,000 words 7.7 %; + 30 % masked
# 9.0 % (10 minutes: 21.5 %); the copy-aware floor (no context at all) lies about 9 % below that
# baseline (benchmarks/label_efficiency.py --floors). benchmarks/README.md has the table.
CPU = replace(
    SMOKE,
    bpe_reviews=5_000,
    bpe_vocab=2_000,
    tradeoff_reviews=1_000,
    timing_repeats=5,
    vocab_words=5_000,
    bert=replace(
        SMOKE.bert, vocab_size=5_000 + len(WORD_SPECIALS) + 1, emb=64, heads=4, depth=2, context=128
    ),
    pretrain_len=128,
    pretrain_reviews=None,
    mask_rate=0.3,
    pretraining=replace(SMOKE.pretraining, steps=12_000, lr=5e-3, warmup_steps=100, checkpoint_every=2_400),
    train_reviews=None,
    test_reviews=None,
    finetuning=replace(SMOKE.finetuning, lr=1e-3, warmup_steps=50),
    pooling="mean",
    probe_train=2_000,
    probe_test=1_000,
    probe_max_len=128,
    label_efficiency=label_sizes.CPU,
    sample_tokens=40,
)
GPU = replace(
    CPU,
    bpe_reviews=25_000,
    bpe_vocab=8_000,
    tradeoff_reviews=5_000,
    vocab_words=30_000,
    bert=replace(
        CPU.bert,
        vocab_size=30_000 + len(WORD_SPECIALS) + 1,
        emb=256,
        heads=8,
        depth=6,
        context=256,
        dropout=0.1,
    ),
    pretrain_len=256,
    pretrain_batch=128,
    mask_rate=0.15,
    pretraining=replace(CPU.pretraining, steps=20_000, lr=5e-4, warmup_steps=1_000, checkpoint_every=4_000),
    finetuning=replace(CPU.finetuning, epochs=3, lr=1e-4, warmup_steps=300),
    pooling="cls",
    probe_train=25_000,
    probe_test=25_000,
    probe_max_len=256,
    label_efficiency=label_sizes.GPU,
    sample_tokens=60,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
