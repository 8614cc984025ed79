"""Chapter 10's run: tokenisers, BERT pretrained and fine-tuned on IMDb, MiniLM, GPT-2."""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.models.bert import BertConfig
from fromscratch.tokenizers.words import SPECIALS


@dataclass(frozen=True)
class ModernRun:
    # 10.1 tokens
    bpe_reviews: int  # training reviews our BPE learns its merges from
    bpe_vocab: int  # our BPE's vocabulary: 256 bytes + (bpe_vocab - 256) merges
    tradeoff_reviews: int  # test reviews on which tokens per review are counted
    # 10.2 our BERT: pretrained with masked LM on IMDb, then fine-tuned on the labels
    vocab_words: int  # chapter 06's word vocabulary (training reviews); the model adds 3 specials + [MASK]
    emb: int  # e (BERT-base: 768)
    heads: int  # h (BERT-base: 12)
    depth: int  # blocks (BERT-base: 12)
    dropout: float  # after embeddings and each sub-layer (BERT: 0.1)
    pretrain_len: int  # tokens per review while pretraining (BERT: 128, then 512)
    pretrain_reviews: int | None  # unlabelled reviews used, plus all training reviews (None: all 50,000)
    pretrain_steps: int  # optimiser steps of masked-LM pretraining
    pretrain_batch: int  # reviews per pretraining step
    pretrain_lr: float  # peak AdamW learning rate (warm-up, then linear decay)
    pretrain_warmup: int  # warm-up steps
    max_len: int  # tokens per review while fine-tuning and testing (also the learned positions)
    train_reviews: int | None  # labelled training reviews for fine-tuning (None: all 25,000)
    test_reviews: int | None  # test reviews scored (None: all 25,000)
    finetune_epochs: float  # passes over the training reviews
    finetune_batch: int  # reviews per fine-tuning step
    finetune_lr: float  # peak AdamW learning rate of fine-tuning
    finetune_warmup: int  # warm-up steps of fine-tuning
    pooling: str  # what the classifier reads: "cls" (BERT: the output at <cls>) or "mean" over the tokens
    # 10.3 all-MiniLM-L6-v2: a frozen-encoder linear probe
    probe_train: int  # training reviews embedded for the probe
    probe_test: int  # test reviews embedded to score it
    probe_max_len: int  # WordPiece tokens per review (MiniLM was trained with 128-256)
    # 10.4 GPT-2
    sample_tokens: int  # tokens GPT-2 generates per prompt

    @property
    def bert(self) -> BertConfig:
        """Our IMDb BERT: ``BertForPretraining(prof.modern.bert)``; its vocabulary is ``vocab_words``, the
        three specials ``<pad>``, ``<unk>``, ``<cls>`` and ``[MASK]`` (the last id)."""
        return BertConfig(
            vocab_size=self.vocab_words + len(SPECIALS) + 1,
            emb=self.emb,
            heads=self.heads,
            depth=self.depth,
            max_len=self.max_len,
            dropout=self.dropout,
        )

    @property
    def tag(self) -> str:
        """A short name of the pretraining sizes, for checkpoint files."""
        reviews = "all" if self.pretrain_reviews is None else self.pretrain_reviews
        return (
            f"v{self.vocab_words}-e{self.emb}-h{self.heads}-d{self.depth}-l{self.pretrain_len}-m{self.max_len}"
            f"-u{reviews}-s{self.pretrain_steps}-b{self.pretrain_batch}-lr{self.pretrain_lr:g}"
        )

    @property
    def finetune_tag(self) -> str:
        """A short name of the fine-tuning sizes (after :attr:`tag`), for checkpoint files."""
        return f"f{self.finetune_epochs:g}-b{self.finetune_batch}-lr{self.finetune_lr:g}-{self.pooling}"


# fmt: off
MODERN_RUNS = {
    # smoke: every step on a handful of reviews, only to prove the code runs (seconds)
    "smoke": ModernRun(bpe_reviews=200, bpe_vocab=300, tradeoff_reviews=50, vocab_words=2_000, emb=32, heads=2,
                        depth=1, dropout=0.0, pretrain_len=64, pretrain_reviews=300, pretrain_steps=20,
                        pretrain_batch=16, pretrain_lr=3e-3, pretrain_warmup=5, max_len=64, train_reviews=256,
                        test_reviews=128, finetune_epochs=1, finetune_batch=32, finetune_lr=3e-3,
                        finetune_warmup=2, pooling="cls", probe_train=32, probe_test=32, probe_max_len=64,
                        sample_tokens=10),
    # cpu: pretraining on all 75,000 train + unlabelled reviews (1,800 steps: about 1.5 passes over their first
    # 128 words), then one epoch of fine-tuning on reviews cut to 512 words, as chapter 06 read them.
    # benchmarks/bert_imdb.py, idle 2 cores: 14.2 + 3.1 min, 87.2 % (2 epochs: 86.7 %); without the
    # pretraining the same fine-tuning reached 87.8 % (2 epochs) - at this budget pretraining does not pay
    "cpu": ModernRun(bpe_reviews=5_000, bpe_vocab=2_000, tradeoff_reviews=1_000, vocab_words=20_000, emb=64,
                      heads=4, depth=2, dropout=0.1, pretrain_len=128, pretrain_reviews=None, pretrain_steps=1_800,
                      pretrain_batch=64, pretrain_lr=2e-3, pretrain_warmup=100, max_len=512, train_reviews=None,
                      test_reviews=None, finetune_epochs=1, finetune_batch=32, finetune_lr=1e-3,
                      finetune_warmup=50, pooling="mean", probe_train=2_000, probe_test=1_000, probe_max_len=128,
                      sample_tokens=40),
    "gpu": ModernRun(bpe_reviews=25_000, bpe_vocab=8_000, tradeoff_reviews=5_000, vocab_words=30_000, emb=256,
                      heads=8, depth=6, dropout=0.1, pretrain_len=256, pretrain_reviews=None, pretrain_steps=20_000,
                      pretrain_batch=128, pretrain_lr=5e-4, pretrain_warmup=1_000, max_len=512, train_reviews=None,
                      test_reviews=None, finetune_epochs=3, finetune_batch=32, finetune_lr=1e-4,
                      finetune_warmup=300, pooling="cls", probe_train=25_000, probe_test=25_000, probe_max_len=256,
                      sample_tokens=60),
}
# fmt: on
