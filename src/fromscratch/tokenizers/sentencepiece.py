"""Llama's tokeniser: sentencepiece-style BPE with byte fallback, read from llama2.c's ``.bin`` (chapter 14).

Llama 1 and 2 (and llama2.c's tiny models) tokenise with a **sentencepiece** BPE model (Kudo &
Richardson 2018). It differs from GPT-2's byte-level BPE (chapter 10) in three ways:

1. **No pre-tokeniser regex.** The text is normalised (runs of spaces collapse to one, leading and
   trailing spaces go), one space is put in front (the *dummy prefix*, so a word is the same token
   at the start of a text and after a space), and every space becomes the visible ``▁`` (U+2581),
   a character like any other. Pieces may contain it, usually at their start: ``"▁the"``.
2. **Merging by score.** The text starts as one symbol per Unicode character; each step merges the
   neighbouring pair whose joined string is a piece of the vocabulary with the **highest score**
   (the leftmost such pair on a tie), until no joined pair is a piece. The scores are the merge
   order (``-rank``); sentencepiece keeps no list of merge *pairs*, only the pieces.
3. **Byte fallback.** A symbol left over that is not a piece (a character the vocabulary never saw:
   ``"☃"``, ``"日"``) becomes the tokens of its UTF-8 bytes, ``<0xE2>`` ``<0x98>`` ``<0x83>``, so no
   text is ever unknown and encoding never fails.

Decoding joins the pieces, turns byte tokens back into bytes, ``▁`` into spaces, drops the space the
dummy prefix added (the first character of the first non-empty piece), and reads UTF-8 (each byte
that is not valid UTF-8 becomes U+FFFD, as in sentencepiece).

**llama2.c's ``tokenizer.bin``** holds the vocabulary without the sentencepiece protobuf: one int32
(the longest piece in bytes), then per token a float32 score, an int32 length and the piece's
bytes, with ``▁`` already written as a space. Its ids are llama2.c's (and Llama's), named ``SP_`` here:
``<unk>`` = ``SP_UNK`` = 0, **BOS** ``<s>`` = ``SP_BOS`` = 1, **EOS** ``</s>`` = ``SP_EOS`` = 2, the 256
byte tokens ``<0x00>``-``<0xFF>`` = 3-258, then the merged pieces. These are *not* the course's ids of
:mod:`fromscratch.tokenizers.special` (``PAD=0 UNK=1 CLS=2 BOS=3 EOS=4``), which number the course's own
vocabularies: a pretrained vocabulary keeps the ids its model was trained with, and the ``SP_`` prefix
keeps the two tables apart.
"""

from __future__ import annotations

import codecs
import re
import struct
from collections.abc import Iterable
from pathlib import Path

SP_UNK, SP_BOS, SP_EOS = 0, 1, 2  # llama2.c's (and Llama's) special ids, not the course's (see the docstring)
SPACE = "\u2581"  # "▁": how sentencepiece writes a space inside a piece
BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
UNK_SURFACE = " \u2047 "  # what sentencepiece decodes <unk> to: " ⁇ "


def _one_replacement_per_byte(error: UnicodeDecodeError) -> tuple[str, int]:
    return "\ufffd", error.start + 1  # sentencepiece replaces each invalid byte on its own


codecs.register_error("fromscratch-per-byte", _one_replacement_per_byte)


class SentencePieceBPE:
    """A sentencepiece BPE tokeniser: ``encode(text, bos=True, eos=False) -> ids``, ``decode(ids) -> text``.

    pieces: every token's text, ``▁`` for a space (``pieces[i]`` is id ``i``); scores: their scores
    (higher merges first). Ids 0, 1, 2 are ``<unk>``, ``<s>``, ``</s>``; a piece ``<0xXX>`` at id
    ``3 + XX`` is a byte token. Only the other pieces ("normal" ones) are ever merged into.
    """

    def __init__(self, pieces: list[str], scores: list[float]) -> None:
        if len(pieces) != len(scores):
            raise ValueError(f"got {len(pieces)} pieces but {len(scores)} scores; give one score per piece.")
        if len(pieces) < 259:
            raise ValueError(f"a byte-fallback vocabulary has at least 3 + 256 tokens, got {len(pieces)}.")
        self.pieces, self.scores = list(pieces), [float(s) for s in scores]
        self.byte_id = {}  # byte value -> id of its <0xXX> token
        for i, piece in enumerate(self.pieces):
            match = BYTE_PIECE.fullmatch(piece)
            if match and i >= 3:
                self.byte_id[int(match.group(1), 16)] = i
        if len(self.byte_id) != 256:
            raise ValueError(f"found {len(self.byte_id)} byte tokens <0x00>..<0xFF>, expected all 256.")
        special = {SP_UNK, SP_BOS, SP_EOS, *self.byte_id.values()}
        self.piece_id = {p: i for i, p in enumerate(self.pieces) if i not in special}  # normal pieces only

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"SentencePieceBPE({len(self)} tokens: 3 special, 256 bytes, {len(self.piece_id)} pieces)"

    # --- encoding -----------------------------------------------------------------------------------
    @staticmethod
    def normalize(text: str) -> str:
        """sentencepiece's normalisation of this model: runs of spaces collapsed to one and leading ones
        dropped, one ``▁`` put in front, every space written ``▁``, then every trailing ``▁`` dropped
        (a ``▁`` typed in the text included). Only U+0020 is a space here; tabs and newlines stay."""
        words = [w for w in text.split(" ") if w]
        return "" if not words else (SPACE + SPACE.join(words)).rstrip(SPACE)

    def merge_steps(self, text: str) -> list[list[str]]:
        """The symbols after each merge, from single characters to the final pieces (for display)."""
        symbols = list(self.normalize(text))  # one symbol per Unicode character
        steps = [list(symbols)]
        while len(symbols) > 1:
            best, where = None, -1
            for i in range(len(symbols) - 1):
                joined = symbols[i] + symbols[i + 1]
                if joined in self.piece_id:
                    score = self.scores[self.piece_id[joined]]
                    if best is None or score > best:  # strictly higher: the leftmost wins a tie
                        best, where = score, i
            if where < 0:
                break  # no neighbouring pair joins into a piece
            symbols[where : where + 2] = [symbols[where] + symbols[where + 1]]
            steps.append(list(symbols))
        return steps

    def encode(self, text: str, bos: bool = True, eos: bool = False) -> list[int]:
        """Token ids of ``text``: BPE by score, then byte fallback; ``SP_BOS`` first and ``SP_EOS`` last if
        asked."""
        ids = [SP_BOS] if bos else []
        for symbol in self.merge_steps(text)[-1]:
            if symbol in self.piece_id:
                ids.append(self.piece_id[symbol])
            else:  # not in the vocabulary: its UTF-8 bytes
                ids.extend(self.byte_id[b] for b in symbol.encode("utf-8", errors="surrogatepass"))
        if eos:
            ids.append(SP_EOS)
        return ids

    # --- decoding -----------------------------------------------------------------------------------
    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: ``<s>``/``</s>`` dropped, ``<unk>`` as `` ⁇ ``, byte tokens as bytes, ``▁``
        as a space, and the dummy prefix's space (at the start of the first non-empty piece) removed."""
        out = bytearray()
        at_start = True  # nothing emitted yet: a leading ▁ is the dummy prefix
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.pieces):
                raise ValueError(f"Token id {i} is not in this vocabulary of {len(self)} ids.")
            if i in (SP_BOS, SP_EOS):
                continue
            match = BYTE_PIECE.fullmatch(self.pieces[i]) if i >= 3 else None
            if match:
                out.append(int(match.group(1), 16))
            else:
                piece = UNK_SURFACE if i == SP_UNK else self.pieces[i]
                if at_start:
                    piece = piece.removeprefix(SPACE)
                out += piece.replace(SPACE, " ").encode("utf-8")
            at_start = at_start and not out
        return bytes(out).decode("utf-8", errors="fromscratch-per-byte")

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        """Each id's piece as written in the vocabulary (``▁the``, ``<0x0A>``), for display."""
        return [self.pieces[int(i)] for i in ids]


def read_llama2c_tokenizer(path: str | Path) -> SentencePieceBPE:
    """Our :class:`SentencePieceBPE` from llama2.c's ``tokenizer.bin`` (e.g. ``tok512.bin``).

    The format: int32 ``max_token_length``, then for every token: float32 score, int32 byte length,
    the piece's UTF-8 bytes (a space written as a space: it becomes ``▁`` here). llama2.c writes BOS
    and EOS as ``"\\n<s>\\n"`` and ``"\\n</s>\\n"``; they are read back as ``<s>`` and ``</s>``.
    """
    data = Path(path).read_bytes()
    if len(data) < 4:
        raise ValueError(f"{path} holds {len(data)} bytes: not a llama2.c tokenizer (no header).")
    (longest,) = struct.unpack_from("<i", data, 0)
    pieces, scores, at = [], [], 4
    while at < len(data):
        if at + 8 > len(data):
            raise ValueError(
                f"{path} ends inside the header of token {len(pieces)} (byte {at}); the file is cut."
            )
        score, length = struct.unpack_from("<fi", data, at)
        if length < 0 or length > longest or at + 8 + length > len(data):
            raise ValueError(
                f"{path}: token {len(pieces)} claims {length} bytes at byte {at + 8}, but the longest is "
                f"{longest} and {len(data) - at - 8} remain; is it a llama2.c tokenizer.bin?"
            )
        piece = data[at + 8 : at + 8 + length].decode("utf-8")
        pieces.append(piece.strip("\n") if len(pieces) in (SP_BOS, SP_EOS) else piece.replace(" ", SPACE))
        scores.append(score)
        at += 8 + length
    return SentencePieceBPE(pieces, scores)


__all__ = ["SPACE", "SP_BOS", "SP_EOS", "SP_UNK", "SentencePieceBPE", "read_llama2c_tokenizer"]
