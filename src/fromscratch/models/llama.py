"""A Llama-style decoder (Touvron et al. 2023), in our own blocks (chapter 14).

GPT-2 (chapter 10) with the changes today's open models share: **pre-norm with RMSNorm**, a
**SwiGLU** feed-forward, **rotary** positions (RoPE, chapter 11) with a base ``rope_theta``,
**grouped-query attention** (``kv_heads`` key/value heads shared by the ``heads`` query heads), no
biases, and an output layer tied to the token embedding or not. ids ``(b, t)`` -> logits
``(b, t, V)``, where ``logits[:, i]`` scores the token at ``i + 1``.

Each change is a field of :class:`LlamaConfig`, so chapter 14 can also build the way there: with
``norm="layer", feedforward="gelu", positions="learned", kv_heads=heads, bias=True`` the same class
is a GPT-2-style decoder (pre-norm LayerNorm, GELU MLP, learned positions, biases, tied output),
and the ablation switches one field at a time.

RoPE here rotates **interleaved pairs** ``(2m, 2m+1)`` of each head (:func:`~fromscratch.attention.rotate`,
as Meta's and llama2.c's code); Hugging Face's Llama rotates the two **halves** ``(m, m + s/2)``.
Both are RoPE, with the coordinates of each head in another order; :mod:`fromscratch.interop.hf_llama`
reorders the query and key weights when it converts.

Module layout: ``token_embedding``, ``position_embedding`` (added positions only), ``rotary``,
``position_bias``,
``blocks`` (a ``ModuleList`` of pre-norm causal :class:`~fromscratch.blocks.TransformerBlock`:
``norm1``, ``attention`` (``to_queries``, ``to_keys``, ``to_values``, ``unify_heads``), ``norm2``,
``ff`` (``gate``, ``up``, ``down``)), ``final_norm``, ``to_logits``. The KV cache
(:meth:`Llama.new_cache`) holds ``(b, hk, t, s)`` keys and values per block: ``heads / kv_heads``
times less than multi-head attention's.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``hk`` key/value heads,
``s = e // h``, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.attention import KVCache, check_length, position_parts
from fromscratch.attention.grouped import check_kv_heads
from fromscratch.attention.masks import check_padding_mask
from fromscratch.blocks import TransformerBlock, make_norm
from fromscratch.models.config import resolve_config
from fromscratch.models.gpt2 import gpt2_init

NORMS = ("rms", "layer")  # the block's norm_kind
FEEDFORWARDS = {"swiglu": ("swiglu", "relu"), "gelu": ("mlp", "gelu")}  # a block's options


@dataclass(frozen=True)
class LlamaConfig:
    """Sizes and choices of a Llama-style decoder; the defaults are SmolLM2-135M (Llama 2 7B in comments)."""

    vocab_size: int = 49_152  # V (Llama 2: 32,000 sentencepiece tokens; stories260K: 512)
    context: int = 8_192  # longest input t (Llama 2: 4,096); RoPE needs no table, this is only a limit
    emb: int = 576  # e: hidden size (Llama 2 7B: 4,096)
    heads: int = 9  # h: query heads (Llama 2 7B: 32)
    kv_heads: int = 3  # hk: key/value heads, dividing h (Llama 2 7B: 32 = h, i.e. no GQA; 70B: 8)
    depth: int = 30  # blocks (Llama 2 7B: 32)
    hidden: int = 1_536  # the feed-forward's inner width (Llama 2 7B: 11,008, about 8e/3 rounded up)
    rope_theta: float = 100_000.0  # RoPE base θ: pair m turns by θ^(-2m/s) per position (Llama 2: 10,000)
    norm_eps: float = 1e-5  # RMSNorm epsilon (Llama 2: 1e-5)
    tied: bool = True  # output layer = token embedding (SmolLM2, stories260K: yes; Llama 2: no)
    norm: str = "rms"  # "rms" (Llama) or "layer" (GPT-2's LayerNorm; chapter 14's ablation)
    feedforward: str = "swiglu"  # "swiglu" (Llama) or "gelu" (GPT-2's MLP, hidden wide; the ablation)
    positions: str = "rope"  # "rope" (Llama), "learned" (GPT-2's; the ablation), any attention.SCHEMES name
    bias: bool = False  # biases in every linear layer (Llama: none; GPT-2: all)
    dropout: float = 0.0  # after the embeddings and each sub-layer (Llama: 0)

    @property
    def head_dim(self) -> int:
        """s = e // h, the width of one head."""
        return self.emb // self.heads


class Llama(nn.Module):
    """A Llama-style decoder; ``Llama(config, **fields)``. ``forward(ids)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: LlamaConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(LlamaConfig, config, fields)
        if c.emb % c.heads or c.head_dim % 2:
            raise ValueError(
                f"emb={c.emb} must be a multiple of heads={c.heads} with an even head width (RoPE turns "
                f"pairs); got head width {c.emb / c.heads:g}."
            )
        check_kv_heads(c.heads, c.kv_heads)
        for name, value, choices in [
            ("norm", c.norm, NORMS),
            ("feedforward", c.feedforward, FEEDFORWARDS),
        ]:
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}.")
        self.context, self.vocab_size = c.context, c.vocab_size
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        parts = position_parts(
            c.positions, max_len=c.context, emb=c.emb, heads=c.heads, head_dim=c.head_dim, base=c.rope_theta
        )
        self.position_embedding, self.rotary, self.position_bias = parts.added, parts.rotary, parts.bias
        self._register_load_state_dict_pre_hook(_renamed_positions)
        self.dropout = nn.Dropout(c.dropout)
        feedforward, activation = FEEDFORWARDS[c.feedforward]
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.emb,
                c.heads,
                dropout=c.dropout,
                norm="pre",
                causal=True,
                qkv_bias=c.bias,
                activation=activation,
                norm_eps=c.norm_eps,
                norm_kind=c.norm,
                feedforward=feedforward,
                hidden=c.hidden,
                bias=c.bias,
                kv_heads=c.kv_heads,
            )
            for _ in range(c.depth)
        )
        self.final_norm = make_norm(c.norm, c.emb, c.norm_eps)
        self.to_logits = nn.Linear(c.emb, c.vocab_size, bias=False)
        self.apply(gpt2_init)  # GPT-2's initialisation: normal(0, 0.02), zero biases
        if c.tied:
            self.to_logits.weight = self.token_embedding.weight  # one (V, e) matrix

    def new_cache(self) -> list[KVCache]:
        """An empty key-value cache, one :class:`~fromscratch.attention.KVCache` per block (chapter 11);
        each will hold ``(b, hk, t, s)`` keys and values."""
        return [KVCache() for _ in self.blocks]

    def forward(
        self,
        input_ids: Tensor,
        *,
        padding_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: list[KVCache] | None = None,
    ):
        """input_ids: int ``(b, t)``, ``t <= context``; padding_mask: bool ``(b, t)`` (True at real tokens,
        padding at the end). Returns logits ``(b, t, V)``, or ``(logits, weights)`` with one ``(b, h, t, tk)``
        tensor per block when ``return_attention=True``.

        ``cache``: the list :meth:`new_cache` made, filled by earlier calls; ``input_ids`` are then the
        positions after the cached ones (their rotations and positions count from there)."""
        if input_ids.dim() != 2:
            raise ValueError(
                f"input_ids must have shape (b, t), got {tuple(input_ids.shape)}; add a batch dimension "
                f"with ids[None]."
            )
        if cache is not None and len(cache) != len(self.blocks):
            raise ValueError(f"cache must hold one KVCache per block ({len(self.blocks)}), got {len(cache)}.")
        b, t = input_ids.shape
        past = len(cache[0]) if cache else 0  # positions already in the cache
        check_length(past + t, self.context)
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, t)
        x = self.token_embedding(input_ids)  # (b, t, e)
        if self.position_embedding is not None:
            x = (
                x + self.position_embedding.positions(past + t)[past:]
            )  # (b, t, e): positions past .. past+t-1
        x = self.dropout(x)
        bias = self.position_bias(t, past + t) if self.position_bias is not None else None  # (h, t, tk)
        weights = []
        for i, block in enumerate(self.blocks):
            extra = {"rotary": self.rotary, "bias": bias, "padding_mask": padding_mask}
            if cache is not None:
                extra["cache"] = cache[i]
            if return_attention:
                x, w = block(x, return_attention=True, **extra)  # (b, t, e), (b, h, t, tk)
                weights.append(w)
            else:
                x = block(x, **extra)  # (b, t, e)
        logits = self.to_logits(self.final_norm(x))  # (b, t, V)
        return (logits, weights) if return_attention else logits


def _renamed_positions(state: dict, prefix: str, *args) -> None:
    """Checkpoints written before the position registry kept learned positions as a bare ``nn.Embedding``
    (``position_embedding.weight``); they now live in a ``PositionEmbedding``: read the old name too."""
    old, new = f"{prefix}position_embedding.weight", f"{prefix}position_embedding.embedding.weight"
    if old in state and new not in state:
        state[new] = state.pop(old)


__all__ = ["Llama", "LlamaConfig"]
