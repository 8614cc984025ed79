"""Byte-level byte-pair encoding: our own trainer and GPT-2's real tokeniser (chapter 10).

- :mod:`fromscratch.bpe.core`: :func:`train_bpe`, the :class:`BytePairEncoding` tokeniser (encode,
  decode), GPT-2's pre-tokenisation regex and the single :func:`merge` step;
- :mod:`fromscratch.bpe.gpt2`: :func:`gpt2_tokenizer` from OpenAI's ``encoder.json``/``vocab.bpe``
  (the ids equal ``tiktoken``'s ``gpt2``), and :func:`tiktoken_gpt2` built from the same local files.
"""

from fromscratch.bpe.core import GPT2_PATTERN, BytePairEncoding, bytes_text, merge, pair_counts, text_bytes, train_bpe
from fromscratch.bpe.gpt2 import END_OF_TEXT, bytes_to_unicode, gpt2_tokenizer, read_gpt2_files, tiktoken_gpt2

__all__ = [
    "END_OF_TEXT",
    "GPT2_PATTERN",
    "BytePairEncoding",
    "bytes_text",
    "bytes_to_unicode",
    "gpt2_tokenizer",
    "merge",
    "pair_counts",
    "read_gpt2_files",
    "text_bytes",
    "tiktoken_gpt2",
    "train_bpe",
]
