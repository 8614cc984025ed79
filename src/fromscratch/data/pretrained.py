"""Pretrained files in the registry: GPT-2's tokeniser, all-MiniLM-L6-v2 and GPT-2 124M (chapter 10),
llama2.c's stories260K and its tokeniser (chapter 14).

Like the datasets (:mod:`fromscratch.data.registry`), each file has its canonical URL and official
sha256, and :func:`~fromscratch.data.registry.fetch` finds it in the mirror, the cache, or downloads it.

- GPT-2's byte-level BPE: OpenAI's ``encoder.json`` and ``vocab.bpe`` (the hashes ``tiktoken`` pins);
- sentence-transformers/all-MiniLM-L6-v2 (a 6-layer BERT, hidden 384, 12 heads; Apache-2.0) at a
  pinned revision: weights, config, WordPiece vocabulary and tokenizer;
- GPT-2 124M's weights (548 MB, MIT): not mirrored; :func:`fetch_online` gets them only where a
  network answers, so an offline run fails fast with a :class:`DataError` instead of hanging.
- llama2.c's stories260K (Karpathy's tinyllamas; MIT): ``stories260K.bin`` and ``tok512.bin``, and
  ``tok512.model`` for the ``sentencepiece`` package (mirror only: see :data:`STORIES260K`).
"""

from __future__ import annotations

import socket
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

from fromscratch.data.registry import (
    DataError,
    DataFile,
    _from_mirror,
    cache_dir,
    fetch,
    lookup,
    register,
    sha256sum,
)
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.gpt2 import read_gpt2_files, read_tiktoken_gpt2

_OPENAI = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main"
MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
_MINILM = f"https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/{MINILM_REVISION}"
GPT2_REVISION = "607a30d783dfa663caf39e06633721c8d4cfcd7e"

GPT2_ENCODER = register(
    DataFile(
        name="gpt2-encoder.json",
        url=f"{_OPENAI}/encoder.json",
        sha256="196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
        fname="gpt2-encoder.json",
        description="GPT-2's 50,257 BPE tokens and their ids (OpenAI; MIT).",
    )
)
GPT2_MERGES = register(
    DataFile(
        name="gpt2-vocab.bpe",
        url=f"{_OPENAI}/vocab.bpe",
        sha256="1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
        fname="gpt2-vocab.bpe",
        description="GPT-2's 50,000 BPE merges in the order they were learned (OpenAI; MIT).",
    )
)
_MINILM_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
MINILM = {
    part: register(
        DataFile(
            name=f"all-MiniLM-L6-v2-{part}",
            url=f"{_MINILM}/{part}",
            sha256=digest,
            fname=f"all-MiniLM-L6-v2-{part}",
            description=(
                f"sentence-transformers/all-MiniLM-L6-v2 {part} (revision {MINILM_REVISION[:7]}; Apache-2.0)."
            ),
        )
    )
    for part, digest in _MINILM_FILES.items()
}
GPT2_124M = register(
    DataFile(
        name="gpt2-124M-model.safetensors",
        url=f"https://huggingface.co/openai-community/gpt2/resolve/{GPT2_REVISION}/model.safetensors",
        sha256="248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707",
        fname="gpt2-124M-model.safetensors",
        description="GPT-2 124M's weights, 548,105,171 bytes (openai-community/gpt2; MIT). Not mirrored.",
    )
)
_TINYLLAMAS = "https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K"
_STORIES260K_FILES = {  # file -> (sha256, what it is); the model's licence: MIT (llama2.c)
    "stories260K.bin": (
        "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696",
        "llama2.c's stories260K, a 260,032-parameter Llama trained on TinyStories (llama2.c binary format)",
    ),
    "tok512.bin": (
        "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312",
        "its 512-token sentencepiece vocabulary in llama2.c's tokenizer.bin format",
    ),
}
STORIES260K = {
    part: register(
        DataFile(name=part, url=f"{_TINYLLAMAS}/{part}", sha256=digest, fname=part, description=f"{what}.")
    )
    for part, (digest, what) in _STORIES260K_FILES.items()
}
# The sentencepiece model is only an oracle for chapter 14's tokeniser (the `sentencepiece` package reads
# it). The mirror's copy holds the same pieces and scores as the published tok512.model but is not
# byte-identical to it, so no official hash is known for it: it comes from a mirror only.
STORIES260K["tok512.model"] = register(
    DataFile(
        name="tok512.model",
        url=None,
        sha256=None,
        fname="tok512.model",
        description="stories260K's vocabulary as a sentencepiece model (chapter 14's oracle; mirror only).",
    )
)
PRETRAINED = {
    "all-MiniLM-L6-v2": MINILM,
    "gpt2": {"model.safetensors": GPT2_124M},
    "stories260K": STORIES260K,
}


def online(url: str, timeout: float = 3.0) -> bool:
    """Whether the host of ``url`` accepts a connection within ``timeout`` seconds."""
    host = urlparse(url).hostname or ""
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def fetch_online(dataset: DataFile | str, *, timeout: float = 3.0) -> Path:
    """:func:`fetch`, but first check a local copy, then that the server answers (for large, unmirrored
    files).

    Raises :class:`DataError` at once when there is no local copy and no network.
    """
    dataset = lookup(dataset)
    local = _from_mirror(dataset)
    cached = cache_dir() / dataset.fname
    if local is not None:
        return local
    if cached.is_file() and sha256sum(cached) == dataset.sha256:
        return cached
    if dataset.url is None or not online(dataset.url, timeout):
        raise DataError(
            f"{dataset.fname} is not here and {urlparse(dataset.url or '').hostname} cannot be reached. "
            f"Run where there is a network (e.g. Colab), or put the file at {cached}."
        )
    return fetch(dataset)


def gpt2_files() -> tuple[Path, Path]:
    """Verified local copies of GPT-2's ``encoder.json`` and ``vocab.bpe`` (mirror, cache or download)."""
    return fetch(GPT2_ENCODER), fetch(GPT2_MERGES)


@cache
def gpt2_tokenizer() -> BytePairEncoding:
    """GPT-2's tokeniser in our code (chapter 10): ``gpt2_tokenizer().encode("Hello world") == [15496, 995]``.

    Built once per process from the registered files (:func:`gpt2_files`).
    """
    return read_gpt2_files(*gpt2_files())


@cache
def tiktoken_gpt2():
    """``tiktoken``'s ``gpt2`` encoding built from the same registered files, without network: the oracle."""
    return read_tiktoken_gpt2(*gpt2_files())


__all__ = [
    "gpt2_files",
    "gpt2_tokenizer",
    "tiktoken_gpt2",
    "GPT2_124M",
    "GPT2_ENCODER",
    "GPT2_MERGES",
    "MINILM",
    "PRETRAINED",
    "STORIES260K",
    "fetch_online",
    "online",
]
