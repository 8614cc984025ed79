"""Generating tokens from a trained model.

- :mod:`fromscratch.generate.sampling`: byte-level text, greedy decoding, sampling with a
  temperature and top-k (chapter 07).
"""

from fromscratch.generate.sampling import decode, encode, generate, generate_tokens, greedy, next_token, probabilities

__all__ = ["decode", "encode", "generate", "generate_tokens", "greedy", "next_token", "probabilities"]
