"""From text to token ids: a word tokeniser and a vocabulary (chapter 06, reused by later chapters).

1. :func:`tokenize` a text: lowercase it, turn HTML ``<br />`` line breaks (IMDb reviews have them)
   into spaces, and cut it into words (letters and digits, keeping inner apostrophes: ``don't``)
   and single punctuation marks (``!`` and ``?`` carry sentiment, so they stay).
2. :func:`build_vocab`: the ``size`` most frequent words of the **training** data, after three
   special tokens ``<pad>`` (id 0), ``<unk>`` (1, every other word) and ``<cls>`` (2, an optional
   summary position for CLS pooling). Test data never shape the vocabulary.
3. :class:`Vocab` turns token strings into ids and back.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

import torch

from fromscratch.tokenizers.special import CLS, PAD, UNK
from fromscratch.tokenizers.special import WORD_SPECIALS as SPECIALS

LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
TOKEN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")  # a word (inner apostrophes kept) or one punctuation mark


def tokenize(text: str) -> list[str]:
    """Cut a text into lowercase word and punctuation tokens.

    >>> tokenize("A <br />great film. Don't miss it!")
    ['a', 'great', 'film', '.', "don't", 'miss', 'it', '!']
    """
    return TOKEN.findall(LINE_BREAK.sub(" ", text).lower())


class Vocab:
    """Words <-> ids: the special tokens first, then words from most to least frequent.

    ``itos[i]`` is the word with id ``i``; ``stoi[word]`` its id. Unknown words map to ``<unk>``.
    """

    pad, unk, cls = PAD, UNK, CLS

    def __init__(self, words: list[str]):
        self.itos = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.stoi = {word: i for i, word in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: list[str]) -> list[int]:
        """Token strings -> ids (``<unk>`` for words not in the vocabulary)."""
        return [self.stoi.get(token, UNK) for token in tokens]

    def decode(self, ids: Iterable[int] | torch.Tensor) -> list[str]:
        """Ids (a list or a 1-D tensor ``(t,)``) -> token strings."""
        return [self.itos[int(i)] for i in ids]

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {', '.join(self.itos[:6])}, ...)"


def build_vocab(counts: Counter, size: int) -> Vocab:
    """The ``size`` most frequent words of ``counts`` (ties broken alphabetically) plus the specials."""
    if size < 1:
        raise ValueError(f"vocab_size must be at least 1, got {size}.")
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return Vocab([word for word, _ in ranked[:size]])


__all__ = ["SPECIALS", "Vocab", "build_vocab", "tokenize"]
