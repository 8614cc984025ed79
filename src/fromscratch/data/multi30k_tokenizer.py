"""Chapter 09's subword tokenizer: one byte-level BPE vocabulary shared by English and German.

Trained with Hugging Face ``tokenizers`` on Multi30k's training split only, and cached atomically
under the data cache. Byte-level means no character is ever unknown (an emoji becomes a few byte
tokens) and ``decode(encode(s)) == s``. Its special tokens are the course's one table
(:mod:`fromscratch.tokenizers.special`): ``<pad>`` 0, ``<unk>`` 1, ``<cls>`` 2 (unused here), ``<s>`` 3,
``</s>`` 4.
"""

from __future__ import annotations

import os
import tempfile

from fromscratch.data.multi30k import Multi30k, load_multi30k
from fromscratch.data.registry import cache_dir
from fromscratch.tokenizers.special import SPECIAL_TOKENS

TOKENIZER_VERSION = 2  # 2: the five special tokens of tokenizers.special; bump when they change


def train_tokenizer(sentences: list[str], vocab_size: int):
    """A byte-level BPE ``tokenizers.Tokenizer`` with ``vocab_size`` tokens learned from ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(sentences, trainer=trainer)
    return tokenizer


def multi30k_tokenizer(vocab_size: int = 8000, data: Multi30k | None = None):
    """The joint English+German BPE tokenizer of the training split, trained once and cached.

    The file ``multi30k-bpe<vocab_size>-v<version>.json`` lies under the data cache and is written atomically;
    later calls load it. Returns a ``tokenizers.Tokenizer``: ``encode(s).ids``, ``decode(ids)``.
    """
    from tokenizers import Tokenizer

    if vocab_size < 300:
        raise ValueError(
            f"vocab_size must be at least 300 (256 bytes + specials + merges), got {vocab_size}."
        )
    path = cache_dir() / "tokenizers" / f"multi30k-bpe{vocab_size}-v{TOKENIZER_VERSION}.json"
    if path.is_file():
        return Tokenizer.from_file(str(path))
    data = data or load_multi30k()
    tokenizer = train_tokenizer([s for pair in data.train for s in pair], vocab_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    os.close(fd)
    tokenizer.save(tmp)
    os.replace(tmp, path)
    return tokenizer


__all__ = ["TOKENIZER_VERSION", "multi30k_tokenizer", "train_tokenizer"]
