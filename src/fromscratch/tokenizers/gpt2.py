"""GPT-2's real byte-level BPE, read from OpenAI's ``encoder.json`` and ``vocab.bpe`` (chapter 10).

``vocab.bpe`` lists GPT-2's 50,000 merges in the order they were learned; ``encoder.json`` maps
each of the 50,257 tokens to its id (256 bytes, 50,000 merges, ``<|endoftext|>``). Both write bytes
as printable characters: OpenAI's ``bytes_to_unicode`` table sends the printable bytes to themselves
and the others (space, control bytes, ...) to characters from U+0100 on, so ``"Ġthe"`` is the
bytes ``b" the"``. :func:`read_gpt2_files` turns the two files into our :class:`BytePairEncoding`,
whose ``encode`` returns exactly the ids of ``tiktoken``'s ``gpt2`` encoding;
:func:`read_tiktoken_gpt2` builds that ``tiktoken`` encoding from the same local files, without network.

One deliberate difference: tiktoken replaces lone surrogates (``"\\ud800"``, possible in a Python
string but not in UTF-8) with U+FFFD before encoding; ours keeps their bytes, so that
``decode(encode(x)) == x`` for every string.
"""

from __future__ import annotations

import json
from pathlib import Path

from fromscratch.tokenizers.bpe import GPT2_PATTERN, BytePairEncoding

END_OF_TEXT = "<|endoftext|>"


def bytes_to_unicode() -> dict[int, str]:
    """OpenAI's table from each byte value to the printable character that stands for it in the files."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table, n = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)  # the unprintable bytes, in order, from U+0100 on
            n += 1
    return table


def read_gpt2_files(encoder_path: Path, merges_path: Path) -> BytePairEncoding:
    """Our :class:`BytePairEncoding` from GPT-2's two files; the ids are GPT-2's."""
    to_char = bytes_to_unicode()
    to_byte = {c: b for b, c in to_char.items()}
    encoder: dict[str, int] = json.loads(Path(encoder_path).read_text(encoding="utf-8"))
    lines = Path(merges_path).read_text(encoding="utf-8").split("\n")[1:]  # line 0 is a version comment
    merges = {}
    for line in lines:
        if not line.strip():
            continue
        left, right = line.split()
        merges[(encoder[left], encoder[right])] = encoder[left + right]  # the merged token's id is its rank
    special = {END_OF_TEXT: encoder[END_OF_TEXT]} if END_OF_TEXT in encoder else {}
    vocab = {i: bytes(to_byte[c] for c in token) for token, i in encoder.items() if token not in special}
    byte_ids = [encoder[to_char[b]] for b in range(256)]
    return BytePairEncoding(merges, vocab, byte_ids=byte_ids, pattern=GPT2_PATTERN, special=special)


def read_tiktoken_gpt2(encoder_path: Path, merges_path: Path):
    """``tiktoken``'s ``gpt2`` encoding, built from the same two local files (no network).

    The same steps as ``tiktoken_ext.openai_public.gpt2``, with local paths instead of URLs.
    """
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(merges_path), encoder_json_file=str(encoder_path)
    )
    return tiktoken.Encoding(
        name="gpt2-local",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={END_OF_TEXT: 50256},
        explicit_n_vocab=50257,
    )


__all__ = ["END_OF_TEXT", "bytes_to_unicode", "read_gpt2_files", "read_tiktoken_gpt2"]
