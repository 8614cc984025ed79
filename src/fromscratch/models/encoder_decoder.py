"""The transformer encoder-decoder of Vaswani et al. (2017), for translation (chapter 09).

The **encoder** reads the whole source sentence with (unmasked) self-attention: a stack of the
blocks of chapter 05. The **decoder** writes the target one token at a time; each of its blocks
(:class:`DecoderBlock`) has three sub-layers:

1. masked (causal) self-attention over the target so far, as in chapter 07's generator;
2. **cross-attention**: queries from the decoder, keys and values from the encoder's output
   (``Attention(x, memory)``), so every target position can look at every source word;
3. the position-wise feed-forward.

Training uses **teacher forcing**: the decoder's input is ``<s>`` + the reference translation minus
its last token, and every position predicts the next reference token, all positions at once.
Decoding feeds one new token per step with ``decode(..., cache=model.new_cache())``: each decoder
block keeps its self-attention's keys and values and its cross-attention's projection of the source
(:class:`~fromscratch.attention.cache.KVCache`), so a step costs one position, not the whole prefix.

Shape legend: ``b`` batch, ``ts`` source length, ``tt`` target length, ``e`` embedding, ``h`` heads,
``V`` vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.attention.cache import KVCache
from fromscratch.attention.dot_product import attend
from fromscratch.attention.masks import check_padding_mask
from fromscratch.attention.positions import PositionEmbedding, PositionEncoding, check_length
from fromscratch.blocks.feedforward import FeedForward
from fromscratch.blocks.transformer import TransformerBlock
from fromscratch.models.config import resolve_config
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.tokenizers.special import PAD


@dataclass(frozen=True)
class EncoderDecoderConfig:
    """Sizes and options of an :class:`EncoderDecoder`; the defaults are a small Vaswani-style model."""

    src_vocab_size: int = 8000  # V of the source language (equal to tgt_vocab_size when shared)
    tgt_vocab_size: int = 8000  # V of the target language
    emb: int = 256  # e: embedding width (Vaswani et al. base: 512)
    heads: int = 8  # h: attention heads in every attention layer
    encoder_depth: int = 3  # encoder blocks (base: 6)
    decoder_depth: int = 3  # decoder blocks (base: 6)
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e (base: 4)
    dropout: float = 0.1  # after embeddings and each sub-layer (base: 0.1)
    norm: str = "post"  # "post" (Vaswani et al.) or "pre" (then a final LayerNorm ends each stack)
    context: int = 128  # longest source or target in tokens (and learned positions)
    positions: str | None = "sinusoidal"  # "sinusoidal" (Vaswani et al.), "learned" or None (no positions)
    share_embeddings: bool = True  # one token embedding for source and target (a joint vocabulary)
    tie_output: bool = True  # the output layer reuses the target embedding matrix (Press & Wolf 2017)
    pad_id: int = PAD  # the <pad> token (tokenizers.special: 0): its embedding starts at zero
    pool_dropout: bool = False  # cheaper dropout masks for CPU training (models.pool_dropout)

    def __post_init__(self) -> None:
        if self.positions not in ("sinusoidal", "learned", None):
            raise ValueError(f"positions must be 'sinusoidal', 'learned' or None; got {self.positions!r}.")
        if self.norm not in ("post", "pre"):
            raise ValueError(f"norm must be 'post' or 'pre', got {self.norm!r}.")


class Attention(nn.Module):
    """The decoder's multi-head attention (chapter 09): causal self-attention over the target, with
    its KV cache, or cross-attention from the target to the encoder's output, whose projection the
    cache keeps (it is the same at every decoding step)."""

    def __init__(self, emb: int, heads: int, *, causal: bool) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.to_queries = nn.Linear(emb, emb, bias=False)
        self.to_keys = nn.Linear(emb, emb, bias=False)
        self.to_values = nn.Linear(emb, emb, bias=False)
        self.unify_heads = nn.Linear(emb, emb)

    def heads_of(self, projection: nn.Module, x: Tensor) -> Tensor:
        """``x (b, t, e)`` projected and split into heads: ``(b, h, t, s)``."""
        b, t, _ = x.shape
        return projection(x).view(b, t, self.heads, -1).transpose(1, 2)  # (b, h, t, s)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        *,
        padding_mask: Tensor | None = None,
        cache: KVCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, t, e)`` -> ``(b, t, e)``. Keys and values from ``memory (b, tk, e)``, the encoder's
        output (cross-attention), or from ``x`` (self-attention, after the cached positions);
        ``padding_mask (b, tk)`` True at real keys. Appends ``(b, h, t, tk)`` weights to ``attention``."""
        b, t, e = x.shape
        q = self.heads_of(self.to_queries, x)  # (b, h, t, s)
        if memory is not None and cache is not None and len(cache):
            k, v = cache.keys, cache.values  # the source's (b, h, tk, s), projected at the first step
        else:
            source = x if memory is None else memory  # (b, t or tk, e)
            k, v = self.heads_of(self.to_keys, source), self.heads_of(self.to_values, source)  # (b, h, ., s)
            if cache is not None:
                k, v = cache.append(k, v)  # (b, h, tk, s)
        keys = padding_mask[:, None, None, :] if padding_mask is not None else None  # (b, 1, 1, tk)
        out = attend(q, k, v, keys, causal=self.causal, weights=attention)  # (b, h, t, s)
        return self.unify_heads(out.transpose(1, 2).reshape(b, t, e))  # (b, t, e)


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention to the encoder's output, feed-forward (chapter 09).

    Each sub-layer has a residual connection and a LayerNorm, after (``norm="post"``) or before
    (``norm="pre"``) the sub-layer, as in :class:`~fromscratch.blocks.TransformerBlock`.
    """

    def __init__(
        self, emb: int, heads: int, *, ff_mult: int = 4, dropout: float = 0.0, norm: str = "post"
    ) -> None:
        super().__init__()
        if norm not in ("post", "pre"):
            raise ValueError(f"norm must be 'post' or 'pre', got {norm!r}.")
        self.norm = norm
        self.self_attention = Attention(emb, heads, causal=True)
        self.cross_attention = Attention(emb, heads, causal=False)
        self.ff = FeedForward(emb, ff_mult, dropout)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(emb), nn.LayerNorm(emb), nn.LayerNorm(emb)
        self.dropout = nn.Dropout(dropout)

    def sublayer(self, x: Tensor, norm: nn.Module, layer) -> Tensor:
        """``x + layer(norm(x))`` (pre-norm) or ``norm(x + layer(x))`` (post-norm), with dropout."""
        if self.norm == "pre":
            return x + self.dropout(layer(norm(x)))  # (b, tt, e)
        return norm(x + self.dropout(layer(x)))  # (b, tt, e)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        *,
        memory_padding_mask: Tensor | None = None,
        cache: tuple[KVCache, KVCache] | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x: decoder states ``(b, tt, e)``; memory: the encoder's output ``(b, ts, e)``;
        ``memory_padding_mask (b, ts)`` True at real source tokens. ``cache``: (self-attention's,
        cross-attention's) :class:`KVCache`; ``x`` then holds only the new positions. Returns
        ``(b, tt, e)``; appends the self- ``(b, h, tt, tk)`` and the cross-attention ``(b, h, tt, ts)``
        weights."""
        self_cache, cross_cache = cache if cache is not None else (None, None)
        # 1. masked self-attention: position i sees target positions 0..i
        x = self.sublayer(
            x, self.norm1, lambda y: self.self_attention(y, cache=self_cache, attention=attention)
        )
        # 2. cross-attention: queries from the target, keys and values from the source's encoding
        options = dict(padding_mask=memory_padding_mask, cache=cross_cache, attention=attention)
        x = self.sublayer(x, self.norm2, lambda y: self.cross_attention(y, memory, **options))
        # 3. the feed-forward, position by position
        return self.sublayer(x, self.norm3, self.ff)  # (b, tt, e)


class EncoderDecoder(nn.Module):
    """A transformer encoder-decoder (Vaswani et al. 2017) built from an :class:`EncoderDecoderConfig`.

    ``EncoderDecoder(config, **fields)`` (fields replace those of the config). ``encode`` runs the
    encoder once per source; ``decode`` runs the decoder on a target prefix; ``forward`` does both.
    Token embeddings are scaled by ``sqrt(e)`` before the positions are added (as in the paper).
    """

    def __init__(self, config: EncoderDecoderConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(EncoderDecoderConfig, config, fields)
        if c.share_embeddings and c.src_vocab_size != c.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings=True needs one joint vocabulary, got src_vocab_size={c.src_vocab_size} "
                f"and tgt_vocab_size={c.tgt_vocab_size}; set share_embeddings=False."
            )
        self.context, self.scale = c.context, math.sqrt(c.emb)
        self.src_embedding = nn.Embedding(c.src_vocab_size, c.emb, padding_idx=c.pad_id)
        if c.share_embeddings:  # one table for both languages (a joint vocabulary)
            self.tgt_embedding = self.src_embedding
        else:
            self.tgt_embedding = nn.Embedding(c.tgt_vocab_size, c.emb, padding_idx=c.pad_id)
        for table in dict.fromkeys([self.src_embedding, self.tgt_embedding]):  # each table once, in order
            nn.init.normal_(table.weight, std=c.emb**-0.5)  # unit-size rows after the sqrt(e) scale
            table.weight.data[c.pad_id] = 0
        self.src_positions = self.positions(c)  # added to the embeddings, or None
        self.tgt_positions = self.positions(c)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = nn.ModuleList(
            TransformerBlock(c.emb, c.heads, ff_mult=c.ff_mult, dropout=c.dropout, norm=c.norm)
            for _ in range(c.encoder_depth)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.emb, c.heads, ff_mult=c.ff_mult, dropout=c.dropout, norm=c.norm)
            for _ in range(c.decoder_depth)
        )
        self.encoder_norm = nn.LayerNorm(c.emb) if c.norm == "pre" else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.emb) if c.norm == "pre" else nn.Identity()
        self.to_logits = nn.Linear(c.emb, c.tgt_vocab_size)
        if c.tie_output:
            self.to_logits.weight = self.tgt_embedding.weight  # (V, e), one matrix
        if c.pool_dropout:
            use_pool_dropout(self)

    @staticmethod
    def positions(c: EncoderDecoderConfig) -> nn.Module | None:
        """The position vectors ``config.positions`` names: sinusoidal, learned, or None."""
        if c.positions is None:
            return None
        return {"sinusoidal": PositionEncoding, "learned": PositionEmbedding}[c.positions](c.context, c.emb)

    def _embed(
        self, tokens: Tensor, table: nn.Embedding, positions: nn.Module | None, name: str, offset: int = 0
    ) -> Tensor:
        """Token vectors times sqrt(e) plus the vectors of positions ``offset .. offset + t - 1``:
        ``(b, t, e)``."""
        if tokens.dim() != 2:
            raise ValueError(f"{name} must be (b, t), got {tuple(tokens.shape)}; add a batch dimension.")
        check_length(offset + tokens.size(1), self.context)
        x = table(tokens) * self.scale  # (b, t, e)
        if positions is not None:  # positions=None: nothing added
            x = x + positions.positions(offset + tokens.size(1))[offset:]  # (t, e) broadcast over b
        return self.dropout(x)  # (b, t, e)

    def new_cache(self) -> list[tuple[KVCache, KVCache]]:
        """An empty decoding cache: (self-attention, cross-attention) :class:`KVCache` per decoder block."""
        return [(KVCache(), KVCache()) for _ in self.decoder]

    def encode(
        self, src: Tensor, src_padding_mask: Tensor | None = None, *, attention: list[Tensor] | None = None
    ) -> Tensor:
        """src int ``(b, ts)`` -> the memory ``(b, ts, e)``; ``attention`` gets one ``(b, h, ts, ts)``
        tensor per encoder block."""
        x = self._embed(src, self.src_embedding, self.src_positions, "src")  # (b, ts, e)
        if src_padding_mask is not None:
            check_padding_mask(src_padding_mask, *src.shape)
        for block in self.encoder:
            x = block(x, padding_mask=src_padding_mask, attention=attention)  # (b, ts, e)
        return self.encoder_norm(x)  # (b, ts, e)

    def decode(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        src_padding_mask: Tensor | None = None,
        *,
        cache: list[tuple[KVCache, KVCache]] | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tgt_in int ``(b, tt)`` (``<s>`` first), memory ``(b, ts, e)`` -> logits ``(b, tt, V)``, one row
        per position of ``tgt_in``. ``cache`` (:meth:`new_cache`, filled by earlier calls): ``tgt_in``
        holds only the tokens after those already decoded. ``attention`` gets, per decoder block, the
        self- ``(b, h, tt, tk)`` and the cross-attention ``(b, h, tt, ts)`` weights.

        No target padding mask: target padding sits at the end, after every real token, so the causal
        mask already hides it from every real position (and its own outputs are never scored)."""
        past = len(cache[0][0]) if cache is not None else 0  # target positions already decoded
        x = self._embed(tgt_in, self.tgt_embedding, self.tgt_positions, "tgt_in", offset=past)  # (b, tt, e)
        if src_padding_mask is not None:
            check_padding_mask(src_padding_mask, memory.size(0), memory.size(1))
        for i, block in enumerate(self.decoder):
            options = dict(memory_padding_mask=src_padding_mask, attention=attention)
            x = block(x, memory, cache=None if cache is None else cache[i], **options)  # (b, tt, e)
        return self.to_logits(self.decoder_norm(x))  # (b, tt, V)

    def forward(
        self,
        src: Tensor,
        tgt_in: Tensor,
        src_padding_mask: Tensor | None = None,
        *,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """src ``(b, ts)``, tgt_in ``(b, tt)``, ``src_padding_mask (b, ts)`` True at real tokens -> logits
        ``(b, tt, V)``. ``attention`` gets the encoder's weights, then the decoder's (self, cross per
        block): :meth:`attention_parts` sorts them. (No target padding mask: see :meth:`decode`.)"""
        memory = self.encode(src, src_padding_mask, attention=attention)  # (b, ts, e)
        return self.decode(tgt_in, memory, src_padding_mask, attention=attention)  # (b, tt, V)

    def attention_parts(self, weights: list[Tensor]) -> dict[str, list[Tensor]]:
        """The list ``forward(..., attention=weights)`` filled, by kind: ``"encoder"`` ``(b, h, ts, ts)``,
        ``"decoder"`` (self-attention) ``(b, h, tt, tt)`` and ``"cross"`` ``(b, h, tt, ts)``, one per
        block."""
        n = self.config.encoder_depth
        return {"encoder": weights[:n], "decoder": weights[n::2], "cross": weights[n + 1 :: 2]}


__all__ = ["Attention", "DecoderBlock", "EncoderDecoder", "EncoderDecoderConfig"]
