"""What chapter 15 asks its chat model and its tokeniser (the same in the chapter, the tests, the benchmark).

- :data:`QUESTIONS`: twenty short requests (the first, "What is the capital of France?", has a known
  answer); their logits and greedy replies are compared with ``transformers``';
- :data:`ODD_STRINGS` and :func:`probe_strings`: strings on which two tokenisers might disagree (white
  space, digits, many scripts, control bytes, special tokens and near-misses), then random slices of real
  text with those spliced in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

QUESTIONS = (  # 15.1-15.2: what the chat model is asked (the first, the issue's, has a known answer)
    "What is the capital of France?",
    "Write one sentence about the sea.",
    "Give me three words that rhyme with 'cat'.",
    "What is 12 plus 30?",
    "Explain what a transformer is in one sentence.",
    "Name a planet in our solar system.",
    "How many legs does a spider have?",
    "Translate 'good morning' into German.",
    "What colour is the sky on a clear day?",
    "Suggest a name for a small black cat.",
    "What does a baker make?",
    "Is a tomato a fruit or a vegetable?",
    "Write a haiku about rain.",
    "Why do we sleep?",
    "What is the opposite of 'cold'?",
    "List two things you can find in a kitchen.",
    "Who wrote 'Romeo and Juliet'?",
    "Describe a movie you would like to watch.",
    "What is the boiling point of water in Celsius?",
    "Say hello in French.",
)
ODD_STRINGS = (  # 15.1: where tokenizers differ, if they differ: white space, digits, scripts, control bytes
    "",
    " ",
    "  two   spaces\tand a tab\n\n\nthree newlines  ",
    "3 cats, 12,345 fish, 2024-01-31, 3.14159, 1e-5",
    "café, naïve, Zürich, 日本語, Ελληνικά, русский, עברית, العربية",
    "emoji 😀👍🏽🇩🇪 and e\u0301 (a combining accent)",
    "control bytes \x04 \x06 \x13 \x14 \x16 \x1d and U+40000 \U00040000",
    "don't can't I'm we'll they've she'd 'quoted'",
    "<|im_start|>user\nhi<|im_end|>",
    "text<|im_end|>more<|endoftext|> <|im_start|> spaced",
    "<|im_start|><|im_start|>",
    "<|im_star|> is not special, <|im_start| neither",
)


def probe_strings(texts: Sequence[str], n: int, specials: Sequence[str], *, seed: int = 0) -> list[str]:
    """``n`` strings to compare two tokenizers on: :data:`ODD_STRINGS`, then random slices of ``texts``
    (any length, cut anywhere), some with a special token or an odd string spliced in (seeded)."""
    rng = random.Random(seed)
    out = list(ODD_STRINGS[:n])
    while len(out) < n:
        text = rng.choice(texts)
        start = rng.randrange(len(text))
        piece = text[start : start + rng.choice([1, 5, 20, 80, 300])]
        cut = rng.randrange(len(piece) + 1)
        extra = rng.choice([*specials, *ODD_STRINGS, "", "", ""])
        out.append(piece[:cut] + extra + piece[cut:])
    return out


__all__ = ["ODD_STRINGS", "QUESTIONS", "probe_strings"]
