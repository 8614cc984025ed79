"""Karpathy's llama2.c files in our code: a real pretrained Llama, stories260K (chapter 14).

llama2.c (github.com/karpathy/llama2.c) runs Llama-architecture models from one plain C file,
``run.c``, and stores them in a minimal binary format (its "version 0" export):

1. a header of seven int32: ``dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len``
   (a negative ``vocab_size`` means the output layer is *not* tied to the token embedding);
2. the float32 weights, whole tensors one after the other, each layer's tensors stacked, in the
   order ``run.c`` reads them: token embedding ``(V, e)``; every layer's attention RMSNorm gain;
   ``wq`` ``(L, h·s, e)``; ``wk`` and ``wv`` ``(L, hk·s, e)``; ``wo`` ``(L, e, h·s)``; the
   feed-forward RMSNorm gains; ``w1`` ``(L, hidden, e)``; ``w2`` ``(L, e, hidden)``; ``w3``
   ``(L, hidden, e)``; the final RMSNorm gain; a RoPE table ``(seq_len, s)`` that ``run.c`` skips
   (we compute the angles); and, if untied, the output layer ``(V, e)``.

Each matrix is stored ``(out, in)`` row by row, as ``nn.Linear.weight``, so it loads unchanged:
``wq, wk, wv, wo`` -> ``to_queries, to_keys, to_values, unify_heads``; ``w1, w3, w2`` -> SwiGLU's
``gate, up, down``. ``run.c`` rotates **interleaved pairs** ``(2m, 2m+1)`` of each head by
``pos · 10000^(-2m/s)``, exactly :func:`~fromscratch.attention.rotate`, so no reordering is needed
(Hugging Face's Llama rotates halves: :mod:`fromscratch.interop.hf_llama` reorders for it). Its
RMSNorm epsilon is 1e-5 and its attention scale ``1/sqrt(s)``, as ours.

:func:`read_llama2c` checks the file's size against its header before reading a weight.
:func:`load_tinyllama` returns the model and its tokeniser (:mod:`fromscratch.tokenizers.sentencepiece`).
"""

from __future__ import annotations

import struct
from pathlib import Path

import torch

from fromscratch.data.pretrained import STORIES260K
from fromscratch.data.registry import fetch
from fromscratch.models.llama import Llama, LlamaConfig
from fromscratch.tokenizers.sentencepiece import SentencePieceBPE, read_llama2c_tokenizer

HEADER = struct.Struct("<7i")  # dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
MODELS = {"stories260K": ("stories260K.bin", "tok512.bin")}

# llama2.c's own greedy output of stories260K (its test suite's expectation, test_all.py): from BOS,
# 200 steps of argmax, decoded. The shared data's stories260K-greedy-200.txt holds the same text (a
# test checks it); a correct implementation of the model reproduces it character for character.
STORIES260K_GREEDY_200 = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball. She wanted to play with it, but it was too high.\n"
    "Lily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do. "
    'She said, "I want to play with your ball, but I can\'t find it."\n'
    "Lily was sad and didn't know what to do. She said, \"I'm sorry, Lily. I didn't know what to do.\"\n"
    "Lily didn't want to help her mom, so she"
)


def llama2c_config(header: tuple[int, ...]) -> LlamaConfig:
    """Our :class:`LlamaConfig` from llama2.c's seven header numbers (RoPE base 10,000, eps 1e-5)."""
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = header
    return LlamaConfig(
        vocab_size=abs(vocab),
        context=seq_len,
        emb=dim,
        heads=heads,
        kv_heads=kv_heads,
        depth=layers,
        hidden=hidden,
        rope_theta=10_000.0,
        norm_eps=1e-5,
        tied=vocab > 0,
    )


def llama2c_layout(c: LlamaConfig) -> list[tuple[str, tuple[int, ...]]]:
    """The tensors of a version-0 file in order: ``(name, shape)``; ``L`` layers stacked first.

    Each tensor starts where the one before ends: after the 28-byte header, ``4 · numel`` bytes each
    (chapter 14, exercise 14.4 writes it from the header)."""
    e, s, hidden, depth = c.emb, c.head_dim, c.hidden, c.depth
    kv = c.kv_heads * s
    return [
        ("token_embedding", (c.vocab_size, e)),
        ("rms_att", (depth, e)),
        ("wq", (depth, c.heads * s, e)),
        ("wk", (depth, kv, e)),
        ("wv", (depth, kv, e)),
        ("wo", (depth, e, c.heads * s)),
        ("rms_ffn", (depth, e)),
        ("w1", (depth, hidden, e)),
        ("w2", (depth, e, hidden)),
        ("w3", (depth, hidden, e)),
        ("rms_final", (e,)),
        ("freq_cis", (c.context, s)),  # cos and sin tables of (seq_len, s/2) each: not used
        *([] if c.tied else [("wcls", (c.vocab_size, e))]),
    ]


def read_llama2c(path: str | Path) -> Llama:
    """Our :class:`~fromscratch.models.Llama` holding the weights of a llama2.c ``.bin`` file, in eval mode.

    Raises a ValueError giving the expected and the actual number of bytes when the file's size does
    not match what its header announces (a truncated download, or another format version).
    """
    data = Path(path).read_bytes()
    if len(data) < HEADER.size:
        raise ValueError(f"{path} is not a llama2.c model: expected a header of 28 bytes, got {len(data)}.")
    header = HEADER.unpack_from(data)
    if header[5] == 0 or min(header[:5] + header[6:]) <= 0:
        raise ValueError(f"{path}: the header {header} has sizes <= 0; is it a llama2.c version-0 file?")
    config = llama2c_config(header)
    layout = llama2c_layout(config)
    expected = HEADER.size + 4 * sum(torch.Size(shape).numel() for _, shape in layout)
    if len(data) != expected:
        raise ValueError(
            f"{path}: its header (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len) = "
            f"{header} means expected {expected:,} bytes, got {len(data):,}. The file is cut short or "
            f"is not llama2.c's version-0 format; download it again."
        )
    values = torch.frombuffer(bytearray(data[HEADER.size :]), dtype=torch.float32)  # all weights, flat
    tensors, at = {}, 0
    for name, shape in layout:
        n = torch.Size(shape).numel()
        tensors[name] = values[at : at + n].view(shape)
        at += n
    state = {"token_embedding.weight": tensors["token_embedding"], "final_norm.weight": tensors["rms_final"]}
    ours = {  # llama2.c's name -> ours, inside block i
        "rms_att": "norm1.weight",
        "wq": "attention.to_queries.weight",
        "wk": "attention.to_keys.weight",
        "wv": "attention.to_values.weight",
        "wo": "attention.unify_heads.weight",
        "rms_ffn": "norm2.weight",
        "w1": "ff.gate.weight",
        "w2": "ff.down.weight",
        "w3": "ff.up.weight",
    }
    for i in range(config.depth):
        state.update({f"blocks.{i}.{key}": tensors[theirs][i] for theirs, key in ours.items()})
    state["to_logits.weight"] = tensors["token_embedding"] if config.tied else tensors["wcls"]
    model = Llama(config)
    model.load_state_dict(state, strict=True)
    return model.eval()


def load_tinyllama(name: str = "stories260K") -> tuple[Llama, SentencePieceBPE]:
    """``(model, tokenizer)``: llama2.c's ``name`` in our :class:`~fromscratch.models.Llama` (eval mode)
    and its sentencepiece tokeniser, from the registered files (mirror, cache or download).

    ``model(ids)`` with ``ids`` ``(b, t)`` returns logits ``(b, t, 512)``; ``tokenizer.encode(text,
    bos=True, eos=False)`` and ``tokenizer.decode(ids)`` use llama2.c's ids (BOS = 1, EOS = 2)."""
    if name not in MODELS:
        raise ValueError(f"Unknown tiny Llama {name!r}; registered: {', '.join(map(repr, MODELS))}.")
    weights, vocabulary = (fetch(STORIES260K[part]) for part in MODELS[name])
    return read_llama2c(weights), read_llama2c_tokenizer(vocabulary)


__all__ = [
    "HEADER",
    "STORIES260K_GREEDY_200",
    "llama2c_config",
    "llama2c_layout",
    "load_tinyllama",
    "read_llama2c",
]
