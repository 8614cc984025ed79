"""A Llama-style decoder (Touvron et al. 2023), top to bottom in one file (chapter 14).

GPT-2 (chapter 10) with the changes today's open models share: **RMSNorm** before each sub-layer, a
**SwiGLU** feed-forward, **rotary** positions (RoPE, chapter 11) with base ``rope_theta``,
**grouped-query attention** (``kv_heads`` key/value heads shared by the ``heads`` query heads, so the
KV cache holds ``(b, hk, t, s)``), no biases, and an output layer tied to the token embedding or not.
ids ``(b, t)`` -> logits ``(b, t, V)``, where ``logits[:, i]`` scores the token at ``i + 1``.

Chapter 14's ablation walks there from GPT-2 one field of :class:`LlamaConfig` at a time: ``norm``
("layer" or "rms"), ``feedforward`` ("gelu": GPT-2's MLP, or "swiglu"), ``positions`` ("learned" or
"rope"), ``kv_heads`` and ``bias``.

RoPE rotates **interleaved pairs** ``(2m, 2m+1)`` of each head (Meta's and llama2.c's layout);
Hugging Face's Llama rotates the two halves, and :mod:`fromscratch.interop.hf_llama` reorders the
query and key weights when it converts.

Shape legend: ``b`` batch, ``t`` new positions, ``tk`` all positions (cached + new), ``e`` embedding,
``h`` query heads, ``hk`` key/value heads, ``s = e // h``, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.dot_product import attend
from fromscratch.attention.masks import check_padding_mask
from fromscratch.attention.positions import RotaryEmbedding, check_tokens
from fromscratch.models.config import resolve_config


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
    norm_eps: float = 1e-5  # the norms' epsilon (Llama 2: 1e-5)
    tied: bool = True  # output layer = token embedding (SmolLM2, stories260K: yes; Llama 2: no)
    norm_kind: str = "rms"  # "rms" (Llama) or "layer" (GPT-2's LayerNorm; chapter 14's ablation)
    feedforward: str = "swiglu"  # "swiglu" (Llama) or "gelu_tanh" (GPT-2's MLP, hidden wide; the ablation)
    positions: str = "rope"  # "rope" (Llama) or "learned" (GPT-2's; the ablation)
    bias: bool = False  # biases in every linear layer (Llama: none; GPT-2: all, its MLP's always)
    dropout: float = 0.0  # after the embeddings and each sub-layer (Llama: 0)

    def __post_init__(self) -> None:
        c = self
        if c.emb % c.heads or c.head_dim % 2:
            raise ValueError(
                f"emb={c.emb} must be a multiple of heads={c.heads} with an even head width (RoPE turns "
                f"pairs); got head width {c.emb / c.heads:g}."
            )
        if c.kv_heads <= 0 or c.heads % c.kv_heads:
            divisors = [n for n in range(1, c.heads + 1) if c.heads % n == 0]
            raise ValueError(
                f"kv_heads={c.kv_heads} must divide heads={c.heads}: each key/value head serves "
                f"heads / kv_heads query heads. Pick kv_heads from {divisors}."
            )
        for name, value, choices in [
            ("norm_kind", c.norm_kind, ("rms", "layer")),
            ("feedforward", c.feedforward, ("swiglu", "gelu_tanh")),
            ("positions", c.positions, ("rope", "learned")),
        ]:
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}.")

    @property
    def head_dim(self) -> int:
        """s = e // h, the width of one head."""
        return self.emb // self.heads


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x²) + eps) · weight`` over the last dimension, computed in float32 (as Llama's
    code); x ``(..., e)`` -> ``(..., e)``. Equal to ``torch.nn.RMSNorm(e, eps)`` (PyTorch >= 2.4)."""

    def __init__(self, emb: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(emb))  # (e,): the gain γ, no bias

    def extra_repr(self) -> str:
        return f"{self.weight.numel()}, eps={self.eps:g}"

    def forward(self, x: Tensor) -> Tensor:
        x32 = x.float()  # (..., e)
        rms = torch.sqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return (x32 / rms).to(x.dtype) * self.weight  # (..., e)


def swiglu_hidden(emb: int, ff_mult: int = 4, multiple_of: int = 1) -> int:
    """SwiGLU's hidden width with as many weights as an MLP of width ``ff_mult · e``: ``2/3`` of it,
    rounded up to a multiple of ``multiple_of`` (Llama: 256). ``swiglu_hidden(768) == 2048``."""
    width = 2 * ff_mult * emb // 3
    return -(-width // multiple_of) * multiple_of


class SwiGLU(nn.Module):
    """Llama's gated feed-forward: ``down(silu(gate(x)) * up(x))``, ``hidden`` wide inside.

    Hugging Face's ``gate_proj, up_proj, down_proj``; llama2.c's ``w1, w3, w2``. x ``(b, t, e)`` ->
    ``(b, t, e)``.
    """

    def __init__(self, emb: int, hidden: int, dropout: float = 0.0, *, bias: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(emb, hidden, bias=bias)
        self.up = nn.Linear(emb, hidden, bias=bias)
        self.down = nn.Linear(hidden, emb, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        gated = F.silu(self.gate(x)) * self.up(x)  # (b, t, hidden): silu(z) = z · sigmoid(z)
        return self.down(self.dropout(gated))  # (b, t, e)


# Same as blocks.FeedForward(activation="gelu_tanh"), GPT-2's; tests/test_llama.py loads one into the other
class MLP(nn.Module):
    """GPT-2's feed-forward, ``hidden`` wide (chapter 14's ablation): linear, GELU (tanh form), linear."""

    def __init__(self, emb: int, hidden: int, dropout: float = 0.0, *, bias: bool = True) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(emb, hidden, bias=bias),
            nn.GELU(approximate="tanh"),
            nn.Dropout(dropout),
            nn.Linear(hidden, emb, bias=bias),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)  # (b, t, e)


class GroupedQueryAttention(nn.Module):
    """Causal attention with ``h`` query heads and ``hk`` key/value heads, RoPE and a KV cache.

    Query head ``j`` reads key/value head ``j // (h / hk)``. ``hk = h``: multi-head attention.
    """

    def __init__(self, emb: int, heads: int, kv_heads: int, *, bias: bool = False) -> None:
        super().__init__()
        self.heads, self.kv_heads, s = heads, kv_heads, emb // heads
        self.to_queries = nn.Linear(emb, heads * s, bias=bias)
        self.to_keys = nn.Linear(emb, kv_heads * s, bias=bias)
        self.to_values = nn.Linear(emb, kv_heads * s, bias=bias)
        self.unify_heads = nn.Linear(heads * s, emb, bias=bias)

    def forward(
        self,
        x: Tensor,
        *,
        rotary: RotaryEmbedding | None = None,
        padding_mask: Tensor | None = None,
        cache: KVCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x: the new positions ``(b, t, e)`` -> ``(b, t, e)``. ``rotary`` turns queries and keys at their
        absolute positions; ``padding_mask (b, tk)``; ``cache`` gets these keys and values (``hk`` heads).
        Appends ``(b, h, t, tk)`` weights to ``attention``."""
        b, t, e = x.shape
        h, hk = self.heads, self.kv_heads
        past = len(cache) if cache is not None else 0  # positions already cached
        q = self.to_queries(x).view(b, t, h, -1).transpose(1, 2)  # (b, h, t, s)
        k = self.to_keys(x).view(b, t, hk, -1).transpose(1, 2)  # (b, hk, t, s)
        v = self.to_values(x).view(b, t, hk, -1).transpose(1, 2)  # (b, hk, t, s)
        if rotary is not None:
            q, k = rotary(q, offset=past), rotary(k, offset=past)  # positions past .. past + t - 1
        if cache is not None:
            k, v = cache.append(k, v)  # (b, hk, tk, s)
        keys = padding_mask[:, None, None, :] if padding_mask is not None else None  # (b, 1, 1, tk)
        out = attend(q, k, v, keys, causal=True, weights=attention)  # (b, h, t, s); hk heads shared
        return self.unify_heads(out.transpose(1, 2).reshape(b, t, -1))  # (b, t, e)


class LlamaBlock(nn.Module):
    """A pre-norm block: ``x + attention(norm1(x))``, then ``x + ff(norm2(x))``."""

    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.attention = GroupedQueryAttention(c.emb, c.heads, c.kv_heads, bias=c.bias)
        self.norm1 = RMSNorm(c.emb, c.norm_eps) if c.norm_kind == "rms" else nn.LayerNorm(c.emb, c.norm_eps)
        self.norm2 = RMSNorm(c.emb, c.norm_eps) if c.norm_kind == "rms" else nn.LayerNorm(c.emb, c.norm_eps)
        if c.feedforward == "swiglu":
            self.ff = SwiGLU(c.emb, c.hidden, c.dropout, bias=c.bias)
        else:
            self.ff = MLP(c.emb, c.hidden, c.dropout, bias=c.bias)
        self.dropout = nn.Dropout(c.dropout)

    def forward(
        self,
        x: Tensor,
        *,
        rotary: RotaryEmbedding | None = None,
        padding_mask: Tensor | None = None,
        cache: KVCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``; the keywords go to :class:`GroupedQueryAttention`."""
        a = self.attention(
            self.norm1(x), rotary=rotary, padding_mask=padding_mask, cache=cache, attention=attention
        )
        x = x + self.dropout(a)  # (b, t, e)
        return x + self.dropout(self.ff(self.norm2(x)))  # (b, t, e)


class Llama(nn.Module):
    """A Llama-style decoder: ``Llama(config, **fields)``; ``forward(tokens)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: LlamaConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(LlamaConfig, config, fields)
        self.context, self.vocab_size = c.context, c.vocab_size
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        if c.positions == "learned":
            self.position_embedding = nn.Embedding(c.context, c.emb)  # GPT-2's: one vector per position
        else:
            self.rotary = RotaryEmbedding(c.head_dim, base=c.rope_theta)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(LlamaBlock(c) for _ in range(c.depth))
        self.final_norm = (
            RMSNorm(c.emb, c.norm_eps) if c.norm_kind == "rms" else nn.LayerNorm(c.emb, c.norm_eps)
        )
        self.to_logits = nn.Linear(c.emb, c.vocab_size, bias=False)
        for module in self.modules():  # GPT-2's initialisation: normal(0, 0.02), zero biases
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        if c.tied:
            self.to_logits.weight = self.token_embedding.weight  # one (V, e) matrix

    def new_cache(self) -> list[KVCache]:
        """An empty KV cache for :meth:`forward`: one :class:`KVCache` per block, each to hold
        ``(b, hk, t, s)`` keys and values."""
        return [KVCache() for _ in self.blocks]

    def forward(
        self,
        tokens: Tensor,
        *,
        padding_mask: Tensor | None = None,
        cache: list[KVCache] | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tokens int ``(b, t)`` -> logits ``(b, t, V)``: :meth:`hidden`, then the output layer."""
        x = self.hidden(tokens, padding_mask=padding_mask, cache=cache, attention=attention)  # (b, t, e)
        return self.to_logits(x)  # (b, t, V)

    def hidden(
        self,
        tokens: Tensor,
        *,
        padding_mask: Tensor | None = None,
        cache: list[KVCache] | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tokens int ``(b, t)`` -> the last hidden states ``(b, t, e)``, after the final norm (Hugging
        Face's ``LlamaModel``; :meth:`forward` is its ``LlamaForCausalLM``). ``padding_mask`` bool
        ``(b, tk)``, True at real tokens (padding at the end). ``cache`` (:meth:`new_cache`, filled by
        earlier calls): ``tokens`` are the positions after the cached ones. ``attention`` gets one
        ``(b, h, t, tk)`` tensor per block."""
        past = len(cache[0]) if cache else 0  # positions already in the cache
        check_tokens(tokens, self.context, self.vocab_size, past)
        b, t = tokens.shape
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, past + t)
        x = self.token_embedding(tokens)  # (b, t, e)
        if self.config.positions == "learned":
            x = x + self.position_embedding(torch.arange(past, past + t, device=x.device))  # (b, t, e)
        x = self.dropout(x)
        rotary = self.rotary if self.config.positions == "rope" else None
        for i, block in enumerate(self.blocks):
            layer_cache = cache[i] if cache is not None else None
            x = block(x, rotary=rotary, padding_mask=padding_mask, cache=layer_cache, attention=attention)
        return self.final_norm(x)  # (b, t, e)


__all__ = ["Llama", "LlamaConfig", "MLP", "RMSNorm", "SwiGLU", "swiglu_hidden"]
