"""Multi30k (task 1, English -> German): sentence pairs, a subword tokenizer, padded batches (chapter 09).

Multi30k (Elliott et al. 2016) pairs the English captions of 31,014 Flickr30k images with
professional German translations: 29,000 training pairs, 1,014 for validation and 1,000 for the
2016 test set (``test_2016_flickr``), on which translation results are usually quoted.

Where it comes from, in this order (the registry's rules, :mod:`fromscratch.data.registry`):

1. the mirror's ``multi30k-task1-raw.tar.gz`` (six flat members ``{train,val,test_2016_flickr}.{en,de}``,
   each byte-identical to the official files), checked against the mirror's ``SHA256SUMS``;
2. the six official ``.gz`` files of multi30k/dataset (``data/task1/raw``), from the cache or
   downloaded into it, each checked against its official md5.

With neither and no network, :class:`~fromscratch.data.registry.DataError` says what to do.

Tokens: one byte-level BPE vocabulary for both languages (:mod:`fromscratch.data.multi30k_tokenizer`),
with the course's one table of special ids (:mod:`fromscratch.tokenizers.special`: ``<s>`` 3, ``</s>`` 4).

Shape legend: ``b`` sentences in a batch, ``ts`` source length, ``tt`` target length.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from fromscratch.data.batching import pad_batch
from fromscratch.data.registry import DataError, DataFile, cache_dir, extract, register
from fromscratch.tokenizers.special import BOS, EOS, PAD

SPLITS = ("train", "val", "test")
FILE_STEMS = {"train": "train", "val": "val", "test": "test_2016_flickr"}  # split -> official file stem
LANGUAGES = ("en", "de")
RAW_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/"
OFFICIAL_MD5 = {  # the official .gz files and their md5s (as recorded by torchtext 0.9)
    "train.en.gz": "0065d13af80720a55ca8153d126e6627",
    "train.de.gz": "81ff90b99829c0cd4b1b587d394afd39",
    "val.en.gz": "2b69aa9253948ac9f67e94917272dd40",
    "val.de.gz": "6e0e229eb049e3fc99a1ef02fb2d5f91",
    "test_2016_flickr.en.gz": "ff2c0fcb4893a13bd73414306bc250ae",
    "test_2016_flickr.de.gz": "efd67d314d98489b716b145475101932",
}

MULTI30K = register(
    DataFile(
        name="multi30k",
        url=None,  # no official archive of this layout: a mirror holds it, else the six .gz files below
        sha256=None,
        fname="multi30k-task1-raw.tar.gz",
        description=(
            "Multi30k task 1 EN-DE raw text: train (29,000 pairs), val (1,014), test_2016_flickr (1,000)."
        ),
    )
)


# --- getting the files -------------------------------------------------------------------------------
def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _official_dir() -> Path:
    """The six official ``.gz`` files (cache, else download), md5-checked and unpacked once, atomically."""
    cache = cache_dir() / "multi30k-official"
    target = cache_dir() / "extracted" / "multi30k-official"
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    import pooch  # only here, for a download

    for fname, md5 in OFFICIAL_MD5.items():
        local = cache / fname
        if local.is_file() and _md5(local) == md5:
            continue
        try:
            pooch.retrieve(
                RAW_URL + fname, known_hash=f"md5:{md5}", fname=fname, path=cache, progressbar=False
            )
        except Exception as error:  # no network, a corrupt download, ...
            raise DataError(
                f"Multi30k: no mirror copy of {MULTI30K.fname} and could not get {RAW_URL + fname}: "
                f"{error.__class__.__name__}: {error}. Connect to the internet and run again, put the six "
                f"official .gz files in {cache}, or point $FROMSCRATCH_MIRROR at a directory whose "
                f"SHA256SUMS lists {MULTI30K.fname}."
            ) from error
    tmp = Path(tempfile.mkdtemp(prefix=".multi30k-", dir=cache_dir()))
    try:
        for fname in OFFICIAL_MD5:
            (tmp / fname.removesuffix(".gz")).write_bytes(gzip.decompress((cache / fname).read_bytes()))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(target)
    except OSError:
        if not target.is_dir():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def raw_dir() -> Path:
    """A directory holding ``{train,val,test_2016_flickr}.{en,de}``: the mirror's archive, else the official
    files."""
    try:
        return extract(MULTI30K, progressbar=False)
    except DataError as error:
        if "no public download address" not in str(error):
            raise  # a mirror copy exists but is corrupt: say so rather than silently download
    return _official_dir()


def _read_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return text.removesuffix("\n").split("\n")


@dataclass(frozen=True)
class Multi30k:
    """The three splits as lists of ``(english, german)`` sentence pairs."""

    train: list[tuple[str, str]]  # 29,000 pairs
    val: list[tuple[str, str]]  # 1,014 pairs
    test: list[tuple[str, str]]  # 1,000 pairs (test_2016_flickr)

    def __repr__(self) -> str:
        sizes = f"train={len(self.train):,}, val={len(self.val):,}, test={len(self.test):,}"
        return f"Multi30k({sizes} pairs, en->de)"


def load_multi30k() -> Multi30k:
    """Multi30k task 1, English -> German, as :class:`Multi30k` (see the module docstring for the source)."""
    folder = raw_dir()
    splits = {}
    for split, stem in FILE_STEMS.items():
        paths = {lang: folder / f"{stem}.{lang}" for lang in LANGUAGES}
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            raise DataError(f"Multi30k: {', '.join(missing)} missing; delete {folder} and run again.")
        en, de = _read_lines(paths["en"]), _read_lines(paths["de"])
        if len(en) != len(de):
            raise DataError(
                f"Multi30k {split}: {len(en)} English but {len(de)} German lines; the copy is damaged."
            )
        splits[split] = list(zip(en, de, strict=True))
    return Multi30k(**splits)


# --- batches -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EncodedPairs:
    """Sentence pairs as token ids: sources without specials, targets as ``<s> ... </s>``."""

    src: list[torch.Tensor]  # one int (ts_i,) tensor per pair
    tgt: list[torch.Tensor]  # one int (tt_i,) tensor per pair, starting with <s> and ending with </s>
    pairs: list[tuple[str, str]]  # the text, for BLEU and for showing examples

    def __len__(self) -> int:
        return len(self.pairs)


def encode_pairs(pairs: list[tuple[str, str]], tokenizer, *, context: int | None = None) -> EncodedPairs:
    """Token ids of every pair; with ``context``, pairs whose source or target is longer are left out."""
    src_ids = [e.ids for e in tokenizer.encode_batch([en for en, _ in pairs])]
    tgt_ids = [[BOS, *e.ids, EOS] for e in tokenizer.encode_batch([de for _, de in pairs])]
    keep = [
        i for i in range(len(pairs)) if context is None or max(len(src_ids[i]), len(tgt_ids[i])) <= context
    ]
    return EncodedPairs(
        src=[torch.tensor(src_ids[i], dtype=torch.long) for i in keep],
        tgt=[torch.tensor(tgt_ids[i], dtype=torch.long) for i in keep],
        pairs=[pairs[i] for i in keep],
    )


def collate(src: list[torch.Tensor], tgt: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    """Pad a list of pairs into one batch for teacher forcing.

    Returns ``src (b, ts)``, ``src_padding_mask (b, ts)``, ``tgt_in (b, tt)`` = ``<s>`` + target[:-1],
    ``tgt_out (b, tt)`` = the target shifted left (what each position must predict; ``<pad>`` where
    there is nothing) and ``tgt_padding_mask (b, tt)``, True where ``tgt_out`` is a real token (the loss
    counts only those). Masks: True at real tokens.
    """
    src_tokens, src_mask = pad_batch(src, PAD)  # (b, ts), (b, ts)
    tgt_tokens, tgt_mask = pad_batch(tgt, PAD)  # (b, tt + 1), (b, tt + 1)
    return {
        "src": src_tokens,
        "src_padding_mask": src_mask,
        "tgt_in": tgt_tokens[:, :-1],  # (b, tt): <s> w1 ... wn
        "tgt_out": tgt_tokens[:, 1:],  # (b, tt): w1 ... wn </s>
        "tgt_padding_mask": tgt_mask[:, 1:],  # (b, tt): True where tgt_out is a real token
    }


class TokenBatches:
    """Length-bucketed batches of about ``max_tokens`` tokens each, a fresh random order per pass.

    As :func:`fromscratch.data.batching.bucketed_batches`: a random order is cut into chunks, each
    chunk is sorted by length, and batches are cut so that ``b * longest`` (source plus target) stays
    within ``max_tokens``; the batches come in random order. ``shuffle=False``: sorted by length.
    Iterating yields :func:`collate` dicts; the randomness comes from a generator seeded with ``seed``.
    """

    def __init__(self, data: EncodedPairs, max_tokens: int, *, shuffle: bool = True, seed: int = 0) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}.")
        self.data, self.max_tokens, self.shuffle = data, max_tokens, shuffle
        self.generator = torch.Generator().manual_seed(seed)
        self.lengths = torch.tensor([len(s) + len(t) for s, t in zip(data.src, data.tgt, strict=True)])

    def batches(self) -> list[torch.Tensor]:
        """One pass: a list of index tensors ``(b,)``."""
        n = len(self.lengths)
        order = torch.randperm(n, generator=self.generator) if self.shuffle else torch.arange(n)
        chunk_size = (
            n if not self.shuffle else max(1, 100 * self.max_tokens // max(1, int(self.lengths.median())))
        )
        out = []
        for chunk in order.split(chunk_size):
            chunk = chunk[torch.argsort(self.lengths[chunk], stable=True)]
            start = 0
            while start < len(chunk):
                end = start + 1
                while (
                    end < len(chunk) and (end + 1 - start) * int(self.lengths[chunk[end]]) <= self.max_tokens
                ):
                    end += 1
                out.append(chunk[start:end])
                start = end
        if self.shuffle:
            out = [out[i] for i in torch.randperm(len(out), generator=self.generator).tolist()]
        return out

    def __iter__(self):
        for index in self.batches():
            yield collate([self.data.src[i] for i in index], [self.data.tgt[i] for i in index])

    def __len__(self) -> int:
        """Batches in one pass (computed without using up the generator's randomness)."""
        state = self.generator.get_state()
        n = len(self.batches())
        self.generator.set_state(state)
        return n


__all__ = [
    "MULTI30K",
    "EncodedPairs",
    "Multi30k",
    "TokenBatches",
    "collate",
    "encode_pairs",
    "load_multi30k",
    "raw_dir",
]
