"""A small instruction set the course makes itself from its own data, and its batches (chapter 15).

Supervised fine-tuning (SFT) needs conversations: a user's request and the reply an assistant should
give. Public instruction sets are large, and their licences and origins are mixed; this one is made
at run time, from data the course already uses, with answers that are right by construction:

- **sentiment**: an IMDb review (chapter 06) -> ``positive`` or ``negative`` (its label);
- **translation**: a Multi30k English caption (chapter 09) -> its German translation;
- **arithmetic**: ``What is 37 + 48?`` -> ``85`` (sums and differences of two-digit numbers);
- **spelling**: a word from the reviews reversed, in capitals, or its number of letters.

Each :class:`Example` is a list of ChatML messages (:mod:`fromscratch.tokenizers.chat`) and its
``task``. :func:`split` keeps held-out examples of every task apart from the training ones.
:class:`ChatBatches` encodes conversations with the assistant mask and pads them at the end into
``ids (b, t)`` and ``labels (b, t)``: ``labels[:, i]`` is the token at ``i + 1`` where that token is
the assistant's, else :data:`~fromscratch.tokenizers.special.IGNORE` (not scored). No padding mask is
needed: attention is causal, so a real token never sees the padding after it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from fromscratch.tokenizers.chat import SMOLLM2_SYSTEM, Encoder, Message, encode_chat
from fromscratch.tokenizers.special import IGNORE

TASKS = ("sentiment", "translation", "arithmetic", "spelling")
LABELS = ("negative", "positive")  # IMDb's label 0 and 1, as the assistant writes them
SENTIMENT_QUESTION = "Is this movie review positive or negative? Answer with one word.\n\nReview: "


@dataclass(frozen=True)
class Example:
    """One conversation to learn from: the messages (the last one the assistant's) and its task."""

    task: str  # one of TASKS
    messages: tuple[Message, ...]  # user, assistant (after an optional system turn)

    @property
    def prompt(self) -> list[Message]:
        """The messages without the assistant's answer: what the model is asked."""
        return list(self.messages[:-1])

    @property
    def answer(self) -> str:
        return self.messages[-1]["content"]


def _turns(question: str, answer: str) -> tuple[Message, ...]:
    return ({"role": "user", "content": question}, {"role": "assistant", "content": answer})


def clip_words(text: str, words: int) -> str:
    """``text`` (HTML line breaks removed) cut to its first quarter and last three quarters of ``words``
    words, joined by ``…`` (a review's start and end say most about it; Sun et al. 2019)."""
    tokens = re.sub(r"<br\s*/?>", " ", text).split()
    if len(tokens) <= words:
        return " ".join(tokens)
    head = max(1, words // 4) if words > 1 else 0
    return " ".join(tokens[:head]) + " … " + " ".join(tokens[len(tokens) - (words - head) :])


def sentiment_examples(texts: Sequence[str], labels: Sequence[int], *, words: int) -> list[Example]:
    """One example per review: the question, the review cut to ``words`` words -> its label's word."""
    return [
        Example("sentiment", _turns(SENTIMENT_QUESTION + clip_words(text, words), LABELS[int(label)]))
        for text, label in zip(texts, labels, strict=True)
    ]


def translation_examples(pairs: Sequence[tuple[str, str]]) -> list[Example]:
    """One example per Multi30k pair: translate the English caption into German."""
    return [Example("translation", _turns(f"Translate into German: {en}", de)) for en, de in pairs]


def arithmetic_examples(n: int, *, seed: int) -> list[Example]:
    """``n`` sums and differences of two-digit numbers, answered exactly."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        question, answer = (
            (f"{a} + {b}", a + b) if rng.random() < 0.5 else (f"{max(a, b)} - {min(a, b)}", abs(a - b))
        )
        out.append(Example("arithmetic", _turns(f"What is {question}?", str(answer))))
    return out


def spelling_examples(words: Sequence[str], n: int, *, seed: int) -> list[Example]:
    """``n`` questions about words drawn from ``words``: reversed, in capitals, or how many letters."""
    rng = random.Random(seed)
    pool = sorted({w.lower() for w in words if w.isalpha() and w.isascii() and 4 <= len(w) <= 9})
    if not pool:
        raise ValueError("spelling_examples needs words of 4-9 ASCII letters; none were given.")
    out = []
    for _ in range(n):
        word, kind = rng.choice(pool), rng.randrange(3)
        question, answer = [
            (f"Write the word '{word}' backwards.", word[::-1]),
            (f"Write the word '{word}' in capital letters.", word.upper()),
            (f"How many letters does the word '{word}' have?", str(len(word))),
        ][kind]
        out.append(Example("spelling", _turns(question, answer)))
    return out


def split(examples: Sequence[Example], held_out: int, *, seed: int) -> tuple[list[Example], list[Example]]:
    """``(train, held_out)``: ``held_out`` examples of *each* task put aside (seeded), the rest shuffled."""
    rng = random.Random(seed)
    train, kept = [], []
    for task in TASKS:
        mine = [e for e in examples if e.task == task]
        rng.shuffle(mine)
        kept += mine[:held_out]
        train += mine[held_out:]
    rng.shuffle(train)
    return train, kept


def encode_example(
    tokenizer: Encoder, example: Example, *, default_system: str | None = SMOLLM2_SYSTEM
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, labels)``, int64 ``(t,)`` each: the conversation's tokens and, at each position, the next
    token where that one is the assistant's (the mask of :func:`~fromscratch.tokenizers.chat.encode_chat`),
    else IGNORE. ``default_system``: the system turn put first when the example has none (SmolLM2's
    template's default; None: none, fewer tokens)."""
    ids, mask = encode_chat(tokenizer, example.messages, default_system=default_system)
    ids_t, mask_t = torch.tensor(ids), torch.tensor(mask)  # (t,), (t,)
    labels = torch.full_like(ids_t, IGNORE)  # (t,)
    labels[:-1] = torch.where(mask_t[1:], ids_t[1:], IGNORE)  # position i predicts token i + 1
    return ids_t, labels


class ChatBatches:
    """Padded batches of encoded examples: dicts with ``ids (b, t)``, ``labels (b, t)`` and ``lengths (b,)``;
    iterate once
    per epoch (a fresh order from ``generator``, as a ``DataLoader`` with ``shuffle=True``).

    ``pad_id``: the token put after the end of shorter conversations (never scored; causal attention
    keeps it out of sight of the real tokens). ``context``: longer conversations raise a ValueError."""

    def __init__(
        self,
        tokenizer: Encoder,
        examples: Sequence[Example],
        batch_size: int,
        *,
        pad_id: int,
        context: int,
        default_system: str | None = SMOLLM2_SYSTEM,
        generator: torch.Generator | None = None,
    ) -> None:
        if batch_size < 1 or not examples:
            raise ValueError(
                f"ChatBatches needs examples and batch_size >= 1, got {len(examples)} and {batch_size}."
            )
        self.encoded = [encode_example(tokenizer, e, default_system=default_system) for e in examples]
        longest = max(len(ids) for ids, _ in self.encoded)
        if longest > context:
            raise ValueError(
                f"An example has {longest} tokens, more than context={context}; cut the texts shorter."
            )
        self.batch_size, self.pad_id, self.generator = batch_size, pad_id, generator

    def __len__(self) -> int:
        return -(-len(self.encoded) // self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        order = torch.randperm(len(self.encoded), generator=self.generator).tolist()  # drawn now
        return (self.batch(order[i : i + self.batch_size]) for i in range(0, len(order), self.batch_size))

    def batch(self, rows: Sequence[int]) -> dict[str, torch.Tensor]:
        """The batch of examples ``rows``: ``ids`` and ``labels`` ``(b, t)``, padded to the longest, and
        ``lengths`` ``(b,)``, each conversation's own number of tokens."""
        t = max(len(self.encoded[r][0]) for r in rows)
        ids = torch.full((len(rows), t), self.pad_id, dtype=torch.long)  # (b, t)
        labels = torch.full((len(rows), t), IGNORE, dtype=torch.long)  # (b, t)
        for i, r in enumerate(rows):
            seq, lab = self.encoded[r]
            ids[i, : len(seq)], labels[i, : len(lab)] = seq, lab
        lengths = torch.tensor([len(self.encoded[r][0]) for r in rows])  # (b,)
        return {"ids": ids, "labels": labels, "lengths": lengths}


@dataclass(frozen=True)
class Pair:
    """A preference: one prompt, the answer preferred (``chosen``) and the other one (``rejected``)."""

    prompt: tuple[Message, ...]  # the conversation up to the assistant's turn
    chosen: str
    rejected: str

    def example(self, answer: str) -> Example:
        return Example("preference", (*self.prompt, {"role": "assistant", "content": answer}))


def sentiment_pairs(texts: Sequence[str], labels: Sequence[int], *, words: int) -> list[Pair]:
    """One pair per review: the sentiment question, the right label's word over the wrong one's."""
    return [
        Pair(tuple(e.prompt), e.answer, LABELS[1 - LABELS.index(e.answer)])
        for e in sentiment_examples(texts, labels, words=words)
    ]


class PairBatches(ChatBatches):
    """Batches of preference pairs for DPO: ``ids``/``labels`` ``(2b, t)``, the ``b`` chosen answers first,
    then the ``b`` rejected ones in the same order (labels on the answer and its ``<|im_end|>`` only), and
    ``pair`` ``(b,)``, the pairs' numbers. Built as :class:`ChatBatches` from ``pairs``."""

    def __init__(self, tokenizer: Encoder, pairs: Sequence[Pair], batch_size: int, **kw) -> None:
        examples = [p.example(p.chosen) for p in pairs] + [p.example(p.rejected) for p in pairs]
        super().__init__(tokenizer, examples, batch_size, **kw)
        self.pairs = len(pairs)

    def __len__(self) -> int:
        return -(-self.pairs // self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        order = torch.randperm(self.pairs, generator=self.generator).tolist()
        return (self.batch(order[i : i + self.batch_size]) for i in range(0, self.pairs, self.batch_size))

    def in_order(self) -> Iterator[dict[str, torch.Tensor]]:
        """Every pair once, in order (for scoring)."""
        return (
            self.batch(list(range(i, min(i + self.batch_size, self.pairs))))
            for i in range(0, self.pairs, self.batch_size)
        )

    def batch(self, rows: Sequence[int]) -> dict[str, torch.Tensor]:
        both = super().batch([*rows, *(self.pairs + r for r in rows)])
        return {"ids": both["ids"], "labels": both["labels"], "pair": torch.tensor(list(rows))}


__all__ = [
    "LABELS",
    "Pair",
    "PairBatches",
    "sentiment_pairs",
    "SENTIMENT_QUESTION",
    "TASKS",
    "ChatBatches",
    "Example",
    "arithmetic_examples",
    "clip_words",
    "encode_example",
    "sentiment_examples",
    "spelling_examples",
    "split",
    "translation_examples",
]
