"""From text to token ids (chapters 06, 09, 10): word vocabularies, the one table of special tokens,
and byte-level byte-pair encoding, our own trainer and GPT-2's real tokeniser.

- :mod:`fromscratch.tokenizers.bpe`: :func:`train_bpe`, the :class:`BytePairEncoding` tokeniser (encode,
  decode), GPT-2's pre-tokenisation regex and the single :func:`merge` step;
- :mod:`fromscratch.tokenizers.gpt2`: :func:`read_gpt2_files` reads OpenAI's ``encoder.json``/``vocab.bpe``
  (the ids equal ``tiktoken``'s ``gpt2``; :func:`fromscratch.data.pretrained.gpt2_tokenizer` reads the
  registered copies);
- :mod:`fromscratch.tokenizers.words`: chapter 06's word tokeniser and :class:`Vocab`;
- :mod:`fromscratch.tokenizers.special`: the special tokens and their ids, one table for every vocabulary;
- :mod:`fromscratch.tokenizers.chat`: ChatML, a conversation as text and ids, the assistant mask (chapter 15).

Imports nothing from the rest of the package.
"""

from fromscratch.tokenizers.bpe import (
    GPT2_PATTERN,
    BytePairEncoding,
    bytes_text,
    merge,
    pair_counts,
    text_bytes,
    train_bpe,
)
from fromscratch.tokenizers.chat import encode_chat, render_chatml  # chapter 15
from fromscratch.tokenizers.gpt2 import END_OF_TEXT, bytes_to_unicode, read_gpt2_files, read_tiktoken_gpt2

__all__ = [
    "END_OF_TEXT",
    "GPT2_PATTERN",
    "BytePairEncoding",
    "bytes_text",
    "bytes_to_unicode",
    "merge",
    "pair_counts",
    "read_gpt2_files",
    "text_bytes",
    "read_tiktoken_gpt2",
    "train_bpe",
    "encode_chat",
    "render_chatml",
]
