"""Byte-level byte-pair encoding (BPE) from scratch: train merges, encode, decode (chapter 10).

A text becomes UTF-8 bytes, and every byte starts as a token of its own (ids 0-255), so any
string, in any script, with emoji, combining marks or NUL, has an encoding and nothing is ever
"unknown". Training then repeats one step: find the most frequent pair of neighbouring tokens and
*merge* it into a new token (Sennrich et al. 2016; GPT-2's byte-level variant, Radford et al. 2019).
Each merge adds one id to the vocabulary and makes frequent words shorter.

Before counting, a **pre-tokeniser** cuts the text into chunks (GPT-2's regex, :data:`GPT2_PATTERN`:
words with their leading space, numbers, punctuation runs, whitespace), and merges never cross a
chunk boundary, so a token is never half of one word and half of the next.

Encoding a chunk replays the learned merges in the order they were learned: of all neighbouring
pairs, the one learned first is merged everywhere, until no learned pair is left. Decoding joins
the tokens' bytes and reads them as UTF-8. Python strings may hold lone surrogates (``"\\ud800"``),
which are not valid UTF-8; they are encoded with ``surrogatepass``, so ``decode(encode(x)) == x``
for *every* string.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable

import regex
from tqdm.auto import tqdm

# GPT-2's pre-tokeniser (OpenAI's encoder.py; tiktoken's "r50k" pattern): contractions, an optional
# space + letters, an optional space + digits, an optional space + other symbols, whitespace runs.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

Pair = tuple[int, int]


def text_bytes(text: str) -> bytes:
    """The UTF-8 bytes of ``text``; lone surrogates are kept as their 3-byte ``surrogatepass`` form."""
    return text.encode("utf-8", errors="surrogatepass")


def bytes_text(data: bytes) -> str:
    """``data`` read as UTF-8 (surrogates as written by :func:`text_bytes`); invalid bytes become U+FFFD."""
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:  # e.g. a character cut in half by generation
        return data.decode("utf-8", errors="replace")


def pair_counts(ids: list[int], counts: Counter | None = None, weight: int = 1) -> Counter:
    """How often each neighbouring pair occurs in ``ids`` (added to ``counts``, ``weight`` per occurrence)."""
    counts = Counter() if counts is None else counts
    for pair in zip(ids, ids[1:], strict=False):
        counts[pair] += weight
    return counts


def merge(ids: list[int], pair: Pair, new_id: int) -> list[int]:
    """One merge step: every occurrence of ``pair`` in ``ids``, left to right, becomes ``new_id``.

    >>> merge([1, 2, 3, 1, 2, 2], (1, 2), 9)
    [9, 3, 9, 2]
    """
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class BytePairEncoding:
    """A byte-level BPE tokeniser: ``encode(text) -> ids``, ``decode(ids) -> text``.

    merges: ``{(left id, right id): new id}``; a pair learned earlier has a smaller new id and is
    merged first. vocab: ``{id: bytes}`` for every id. byte_ids: the id of each byte value 0-255
    (``range(256)`` for a tokeniser trained here; GPT-2 numbers its bytes otherwise).
    special: ``{text: id}`` of special tokens such as ``<|endoftext|>``: always decoded; :meth:`encode`
    produces them only where ``allowed_special`` names them (as ``tiktoken``'s ``allowed_special``),
    and otherwise treats their text as ordinary text (as ``tiktoken``'s ``encode_ordinary``).
    """

    def __init__(
        self,
        merges: dict[Pair, int],
        vocab: dict[int, bytes],
        *,
        byte_ids: list[int] | None = None,
        pattern: str = GPT2_PATTERN,
        special: dict[str, int] | None = None,
    ) -> None:
        self.merges, self.vocab, self.pattern = dict(merges), dict(vocab), pattern
        self.byte_ids = list(range(256)) if byte_ids is None else list(byte_ids)
        if len(self.byte_ids) != 256:
            raise ValueError(
                f"byte_ids must give an id for each of the 256 byte values, got {len(self.byte_ids)}."
            )
        self.special = dict(special or {})
        for text, i in self.special.items():
            self.vocab[i] = text.encode("utf-8")
        self._regex = regex.compile(pattern)
        self._cache: dict[bytes, list[int]] = {}  # chunk -> ids: words repeat, so encoding gets much faster

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return (
            f"BytePairEncoding({len(self)} tokens: 256 bytes, {len(self.merges)} merges, "
            f"{len(self.special)} special)"
        )

    def clear_cache(self) -> None:
        """Forget the chunks encoded so far, so that the next ``encode`` does all its merges again (chapter
        10 times a first pass this way)."""
        self._cache.clear()

    def chunks(self, text: str) -> list[str]:
        """The pre-tokeniser's pieces of ``text`` (merges never cross their boundaries)."""
        return self._regex.findall(text)

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """The ids of one pre-tokenised chunk: replay the merges, the earliest-learned pair first."""
        cached = self._cache.get(chunk)
        if cached is not None:
            return list(cached)
        ids = [self.byte_ids[b] for b in chunk]
        while len(ids) > 1:
            pairs = set(zip(ids, ids[1:], strict=False))
            pair = min(pairs, key=lambda p: self.merges.get(p, float("inf")))  # the earliest-learned pair
            if pair not in self.merges:
                break  # no learned merge applies any more
            ids = merge(ids, pair, self.merges[pair])
        if len(self._cache) < 200_000:
            self._cache[chunk] = list(ids)
        return ids

    def encode(self, text: str, *, allowed_special: Collection[str] | str = ()) -> list[int]:
        """Token ids of ``text``: pre-tokenise, then BPE each chunk's UTF-8 bytes.

        ``allowed_special``: special tokens (``"all"``: every one) whose text becomes their one id
        wherever it occurs, the longest first where two overlap; the text between them is encoded as
        usual. Others' text is ordinary text, e.g. ``"<|endoftext|>"`` is then 7 tokens.
        """
        allowed = set(self.special) if allowed_special == "all" else set(allowed_special)
        unknown = sorted(allowed - set(self.special))
        if unknown:
            raise ValueError(
                f"{unknown} are not special tokens of this tokeniser; it has {sorted(self.special)}."
            )
        ids: list[int] = []
        pieces = [text]
        if allowed:  # split around the allowed specials; the capturing group keeps them in the list
            longest_first = sorted(allowed, key=len, reverse=True)
            pieces = regex.split("(" + "|".join(map(regex.escape, longest_first)) + ")", text)
        for n, piece in enumerate(pieces):
            if n % 2:  # an allowed special token
                ids.append(self.special[piece])
                continue
            for chunk in self.chunks(piece):
                ids.extend(self.encode_chunk(text_bytes(chunk)))
        return ids

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes the ids stand for, joined."""
        try:
            return b"".join(self.vocab[int(i)] for i in ids)
        except KeyError as error:
            raise ValueError(
                f"Token id {error.args[0]} is not in this vocabulary of {len(self)} ids."
            ) from None

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 (a character cut in half) become U+FFFD."""
        return bytes_text(self.decode_bytes(ids))

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        """Each id's own text, for display (a piece of a multi-byte character shows as U+FFFD)."""
        return [self.vocab[int(i)].decode("utf-8", errors="replace") for i in ids]


def train_bpe(
    texts: Iterable[str], vocab_size: int, *, pattern: str = GPT2_PATTERN, progress: bool = True
) -> BytePairEncoding:
    """Learn ``vocab_size - 256`` merges from ``texts`` (chapter 10).

    Each step merges the most frequent neighbouring pair (ties: the smallest pair of ids, so the
    result is deterministic). The chunks are counted once, and after a merge only the chunks that
    held the pair are recounted (a heap finds the next most frequent pair), so training on thousands
    of reviews takes seconds, not hours. Stops early when no pair occurs twice.
    """
    if vocab_size < 256:
        raise ValueError(f"vocab_size must be at least 256 (one token per byte value), got {vocab_size}.")
    splitter = regex.compile(pattern)
    chunk_counts: Counter = Counter()
    for text in texts:
        chunk_counts.update(splitter.findall(text))
    words = [list(text_bytes(chunk)) for chunk in chunk_counts]  # each distinct chunk as ids
    freqs = list(chunk_counts.values())
    stats: Counter = Counter()
    where: dict[Pair, set[int]] = defaultdict(set)  # pair -> chunks that (may) contain it
    for i, (word, freq) in enumerate(zip(words, freqs, strict=True)):
        for pair in zip(word, word[1:], strict=False):
            stats[pair] += freq
            where[pair].add(i)
    heap = [(-count, pair) for pair, count in stats.items()]
    heapq.heapify(heap)
    merges: dict[Pair, int] = {}
    vocab = {i: bytes([i]) for i in range(256)}
    for new_id in tqdm(range(256, vocab_size), disable=not progress, desc="BPE merges", unit="merge"):
        while heap and stats.get(heap[0][1], 0) != -heap[0][0]:
            heapq.heappop(heap)  # a stale entry: that pair's count has changed since
        if not heap or -heap[0][0] < 2:
            break
        _, pair = heapq.heappop(heap)
        merges[pair] = new_id
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        changed = set()
        for i in where.pop(pair):
            word, freq = words[i], freqs[i]
            merged = merge(word, pair, new_id)
            if len(merged) == len(word):
                continue  # a stale entry: this chunk no longer holds the pair
            for p in zip(word, word[1:], strict=False):
                stats[p] -= freq
                changed.add(p)
            for p in zip(merged, merged[1:], strict=False):
                stats[p] += freq
                where[p].add(i)
                changed.add(p)
            words[i] = merged
        stats.pop(pair, None)
        for p in changed:
            if stats.get(p, 0) > 0:
                heapq.heappush(heap, (-stats[p], p))
            else:
                stats.pop(p, None)
    return BytePairEncoding(merges, vocab, pattern=pattern)


__all__ = [
    "GPT2_PATTERN",
    "BytePairEncoding",
    "bytes_text",
    "merge",
    "pair_counts",
    "text_bytes",
    "train_bpe",
]
