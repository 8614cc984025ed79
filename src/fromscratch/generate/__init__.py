"""Generating tokens from a trained model.

- :mod:`fromscratch.generate.sampling`: ``generate``, the one sampling loop (temperature, top-k,
  top-p, stop tokens, the KV cache), and chapter 07's bytes (chapters 07, 14, 15).
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
    generate_text,
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
    "generate_text",
    "next_token",
    "probabilities",
]
