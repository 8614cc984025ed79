"""Generating tokens from a trained model.

- :mod:`fromscratch.generate.sampling`: byte-level text, greedy decoding, sampling with a
  temperature and top-k (chapter 07).
- :mod:`fromscratch.generate.beam`: batched greedy and beam search for encoder-decoders, and
  ``translate`` (chapter 09).
"""

from fromscratch.generate.beam import (
    beam_search,
    block_repeats,
    detokenize,
    greedy_search,
    translate,
)  # chapter 09
from fromscratch.generate.sampling import (
    decode,
    encode,
    generate,
    generate_tokens,
    greedy,
    next_token,
    probabilities,
)

__all__ = [
    "beam_search",
    "block_repeats",
    "detokenize",
    "greedy_search",
    "translate",
    "decode",
    "encode",
    "generate",
    "generate_tokens",
    "greedy",
    "next_token",
    "probabilities",
]
