"""Run sizes of chapters 05-06 (the transformer block, the IMDb classifier): smoke, cpu and gpu."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models import ClassifierConfig
from fromscratch.tokenizers.words import SPECIALS
from fromscratch.training import TrainConfig


# --- chapters 05-06: the transformer block and the IMDb classifier ---------------------------------
@dataclass(frozen=True)
class ImdbRun:
    model: ClassifierConfig  # the transformer; its context also truncates the reviews, V = words + 3 specials
    train: TrainConfig  # epochs, peak AdamW lr (blog: 1e-4) after warm-up, linear decay to 0, weight decay
    batch_size: int  # reviews per step (blog: 4)
    train_reviews: int | None  # use only this many training reviews (None: all 25,000)
    valid_reviews: int  # held out of the training reviews for learning curves
    test_reviews: int | None  # evaluate on this many test reviews (None: all 25,000)
    evals: int  # validation evaluations during a training run

    @property
    def vocab_words(self) -> int:
        """The most frequent training-split words kept (blog: 50,000): the model's vocabulary less
        the special tokens ``<pad>``, ``<unk>``, ``<cls>``."""
        return self.model.vocab_size - len(SPECIALS)


# smoke: a small model on a few hundred reviews, only to prove the code runs (seconds)
SMOKE = ImdbRun(
    # 2,000 words plus the special tokens
    model=ClassifierConfig(
        vocab_size=2_000 + len(SPECIALS), emb=32, heads=2, depth=1, context=64, dropout=0.0
    ),
    train=TrainConfig(epochs=1, lr=3e-3, warmup_steps=5, weight_decay=0.0),
    batch_size=32,
    train_reviews=512,
    valid_reviews=64,
    test_reviews=256,
    evals=2,
)
# cpu: 87.2 % test accuracy after 3 epochs, about 4 minutes on 2 cores (chapter 06, section 6.10)
CPU = replace(
    SMOKE,
    model=replace(SMOKE.model, vocab_size=20_000 + len(SPECIALS), emb=64, heads=4, context=512, dropout=0.1),
    train=replace(SMOKE.train, epochs=3, lr=4e-3, warmup_steps=100, weight_decay=0.01),
    batch_size=64,
    train_reviews=None,
    valid_reviews=1_000,
    test_reviews=None,
    evals=6,
)
# gpu: the blog's model (depth 6, length 512, e = 128, 8 heads, 50,000 words)
GPU = replace(
    CPU,
    model=replace(CPU.model, vocab_size=50_000 + len(SPECIALS), emb=128, heads=8, depth=6),
    train=replace(CPU.train, epochs=6, lr=3e-4, warmup_steps=1_000),
    batch_size=32,
    evals=12,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
