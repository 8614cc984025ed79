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
(:mod:`.paired`). :func:`sentiment_data` loads the reviews; the learning arms are :mod:`.learning_arms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from fromscratch.chapters.ch15_assistant.assistant import (
    choice_ids,
    few_shot,
    label_logits,
    prompt_ids,
)
from fromscratch.chapters.ch15_assistant.paired import paired_bootstrap
from fromscratch.data.imdb import Reviews, load_imdb
from fromscratch.data.instructions import LABELS, Example, sentiment_examples
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.words import Vocab

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


# --- the arms' results -----------------------------------------------------------------------------
@dataclass
class Arm:
    """One arm of the comparison: its name, its labels N, and its correctness on the test reviews."""

    name: str  # "zero-shot", "4-shot, ends positive", "LoRA-SFT", ...
    n: int  # labelled reviews it learned from or was shown (0: none)
    correct: torch.Tensor  # bool (runs, reviews): one row per seed or draw
    said_positive: float  # the share of answers "positive" (half the reviews are)
    p_positive: torch.Tensor | None = None  # float (runs, reviews): a prompt's probability of `positive`
    content_free: torch.Tensor | None = None  # float (runs, 3): p(positive) of CONTENT_FREE, per run

    @property
    def accuracy(self) -> float:
        return self.correct.float().mean().item()

    def per_run(self) -> list[float]:
        """Each run's accuracy (seed or draw), in order."""
        return self.correct.float().mean(1).tolist()


def _p_positive(logits: Sequence[torch.Tensor] | None) -> torch.Tensor | None:
    if logits is None:
        return None
    return torch.stack([torch.softmax(x.float().cpu(), dim=-1)[:, 1] for x in logits])  # (runs, m)


def arm(
    name: str,
    n: int,
    predictions: Sequence[torch.Tensor],
    labels: torch.Tensor,
    *,
    logits: Sequence[torch.Tensor] | None = None,
    content_free: Sequence[torch.Tensor] | None = None,
) -> Arm:
    """An :class:`Arm` from its predictions ``(reviews,)`` per run against ``labels`` ``(reviews,)``; for a
    prompting arm, its ``logits`` ``(reviews, 2)`` per run (kept as p(positive)), and for a calibrated one
    the content-free logits ``(3, 2)`` per run it was calibrated with."""
    predicted = torch.stack([p.cpu().long() for p in predictions])  # (runs, reviews)
    said = (predicted == 1).float().mean().item()
    return Arm(name, n, predicted == labels.cpu()[None], said, _p_positive(logits), _p_positive(content_free))


def table_rows(arms: Sequence[Arm], baseline: Arm) -> list[tuple]:
    """One row per arm: name, N, runs, accuracy (mean over runs), each run's, the share answered
    ``positive`` (and, for a prompt, its mean probability of ``positive``), and the paired difference from
    ``baseline`` with its 95 % interval (points; seeds, then reviews resampled)."""
    rows = []
    for a in arms:
        d = paired_bootstrap(a.correct, baseline.correct)
        runs = " / ".join(f"{x:.1%}" for x in a.per_run())
        versus = "" if a is baseline else f"{d.value * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        said = f"{a.said_positive:.0%}"
        if a.p_positive is not None:
            said += f" (p {a.p_positive.mean():.2f})"
        rows.append((a.name, a.n, a.correct.size(0), f"{a.accuracy:.1%}", runs, said, versus))
    return rows


__all__ = [
    "CONTENT_FREE",
    "Arm",
    "SentimentData",
    "arm",
    "calibrate",
    "content_free_logits",
    "labelled",
    "prompting_logits",
    "sentiment_data",
    "shot_sets",
    "table_rows",
]
