"""The transformer encoder-decoder of Vaswani et al. (2017), for translation (chapter 09).

The **encoder** reads the whole source sentence with (unmasked) self-attention: a stack of the
blocks of chapter 05. The **decoder** writes the target one token at a time; each of its blocks
(:class:`DecoderBlock`) has three sub-layers:

1. masked (causal) self-attention over the target so far, as in chapter 07's generator;
2. **cross-attention**: queries from the decoder, keys and values from the encoder's output
   (``SelfAttention(..., context=memory)``), so every target position can look at every source word;
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

from fromscratch.attention import SelfAttention, check_length, position_parts
from fromscratch.attention.cache import KVCache
from fromscratch.blocks import FeedForward, TransformerBlock
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
    max_len: int = 128  # longest source or target in tokens (and learned positions)
    positions: str = "sinusoidal"  # "sinusoidal" (Vaswani et al.), "learned" or "none": added ones only
    share_embeddings: bool = True  # one token embedding for source and target (a joint vocabulary)
    tie_output: bool = True  # the output layer reuses the target embedding matrix (Press & Wolf 2017)
    pad_id: int = PAD  # the <pad> token (tokenizers.special: 0): its embedding starts at zero
    pool_dropout: bool = False  # cheaper dropout masks for CPU training (models.pool_dropout)


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
        self.self_attention = SelfAttention(emb, heads, causal=True)
        self.cross_attention = SelfAttention(emb, heads)
        self.ff = FeedForward(emb, ff_mult, dropout)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(emb), nn.LayerNorm(emb), nn.LayerNorm(emb)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        *,
        padding_mask: Tensor | None = None,
        memory_padding_mask: Tensor | None = None,
        return_attention: bool = False,
        cache: tuple[KVCache, KVCache] | None = None,
    ):
        """x: decoder states ``(b, tt, e)``; memory: the encoder's output ``(b, ts, e)``;
        ``padding_mask (b, tt)`` and ``memory_padding_mask (b, ts)`` are True at real tokens.
        ``cache``: (self-attention's, cross-attention's) :class:`KVCache`; ``x`` then holds only the new
        positions.
        Returns ``(b, tt, e)``, or ``(out, self_weights (b, h, tt, tt), cross_weights (b, h, tt, ts))``."""
        pre = self.norm == "pre"
        self_cache, cross_cache = cache if cache is not None else (None, None)
        # 1. masked self-attention: position i sees target positions 0..i
        inner = self.norm1(x) if pre else x
        out = self.self_attention(
            inner, padding_mask=padding_mask, return_attention=return_attention, cache=self_cache
        )
        attended, self_w = out if return_attention else (out, None)  # (b, tt, e), (b, h, tt, tt)
        x = x + self.dropout(attended) if pre else self.norm1(x + self.dropout(attended))
        # 2. cross-attention: queries from the target, keys and values from the source's encoding
        inner = self.norm2(x) if pre else x
        out = self.cross_attention(
            inner,
            context=memory,
            padding_mask=memory_padding_mask,
            return_attention=return_attention,
            cache=cross_cache,
        )
        attended, cross_w = out if return_attention else (out, None)  # (b, tt, e), (b, h, tt, ts)
        x = x + self.dropout(attended) if pre else self.norm2(x + self.dropout(attended))
        # 3. the feed-forward, position by position
        x = x + self.dropout(self.ff(self.norm3(x))) if pre else self.norm3(x + self.dropout(self.ff(x)))
        return (x, self_w, cross_w) if return_attention else x


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
        self.max_len, self.scale = c.max_len, math.sqrt(c.emb)
        self.src_embedding = nn.Embedding(c.src_vocab_size, c.emb, padding_idx=c.pad_id)
        self.tgt_embedding = (
            self.src_embedding
            if c.share_embeddings
            else nn.Embedding(c.tgt_vocab_size, c.emb, padding_idx=c.pad_id)
        )
        for table in {self.src_embedding, self.tgt_embedding}:
            nn.init.normal_(table.weight, std=c.emb**-0.5)  # unit-size rows after the sqrt(e) scale
            table.weight.data[c.pad_id] = 0
        sizes = dict(max_len=c.max_len, emb=c.emb, heads=c.heads, head_dim=c.emb // c.heads, kinds=("added",))
        self.src_positions = position_parts(c.positions, **sizes).added  # added to the embeddings, or None
        self.tgt_positions = position_parts(c.positions, **sizes).added
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

    def _embed(
        self, tokens: Tensor, table: nn.Embedding, positions: nn.Module | None, name: str, offset: int = 0
    ) -> Tensor:
        """Token vectors times sqrt(e) plus the vectors of positions ``offset .. offset + t - 1``:
        ``(b, t, e)``."""
        if tokens.dim() != 2:
            raise ValueError(
                f"{name} must have shape (b, t), got {tuple(tokens.shape)}; add a batch dimension."
            )
        check_length(offset + tokens.size(1), self.max_len)
        x = table(tokens) * self.scale  # (b, t, e)
        if positions is not None:  # positions="none": nothing added
            x = x + positions.positions(offset + tokens.size(1))[offset:]  # (t, e) broadcast over b
        return self.dropout(x)  # (b, t, e)

    def new_cache(self) -> list[tuple[KVCache, KVCache]]:
        """An empty decoding cache: (self-attention, cross-attention) :class:`KVCache` per decoder block."""
        return [(KVCache(), KVCache()) for _ in self.decoder]

    def encode(self, src: Tensor, src_padding_mask: Tensor | None = None, *, return_attention: bool = False):
        """src: int ``(b, ts)``. Returns the memory ``(b, ts, e)`` (and a list of ``(b, h, ts, ts)``
        weights)."""
        x = self._embed(src, self.src_embedding, self.src_positions, "src")
        weights = []
        for block in self.encoder:
            if return_attention:
                x, w = block(x, padding_mask=src_padding_mask, return_attention=True)
                weights.append(w)
            else:
                x = block(x, padding_mask=src_padding_mask)  # (b, ts, e)
        x = self.encoder_norm(x)
        return (x, weights) if return_attention else x

    def decode(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        src_padding_mask: Tensor | None = None,
        *,
        return_attention: bool = False,
        cache: list[tuple[KVCache, KVCache]] | None = None,
    ):
        """tgt_in: int ``(b, tt)`` (``<s>`` first); memory ``(b, ts, e)``. Returns logits ``(b, tt, V)``, one
        row per position of ``tgt_in`` (and lists of decoder self- ``(b, h, tt, tt)`` and cross-attention
        ``(b, h, tt, ts)`` weights). ``cache`` (from :meth:`new_cache`, filled by earlier calls): ``tgt_in``
        holds only the tokens after those already cached (one, when decoding), and the logits and the
        self-attention weights cover only those new positions.

        No target padding mask: target padding sits at the end, after every real token, so the causal
        mask already hides it from every real position (and its own outputs are never scored); leaving
        it out lets the decoder's self-attention take the fast causal kernel."""
        past = len(cache[0][0]) if cache is not None else 0  # target positions already decoded
        x = self._embed(tgt_in, self.tgt_embedding, self.tgt_positions, "tgt_in", offset=past)
        self_weights, cross_weights = [], []
        for i, block in enumerate(self.decoder):
            options = dict(memory_padding_mask=src_padding_mask, cache=None if cache is None else cache[i])
            if return_attention:
                x, sw, cw = block(x, memory, **options, return_attention=True)
                self_weights.append(sw)
                cross_weights.append(cw)
            else:
                x = block(x, memory, **options)  # (b, tt, e)
        logits = self.to_logits(self.decoder_norm(x))  # (b, tt, V)
        return (logits, self_weights, cross_weights) if return_attention else logits

    def forward(
        self,
        src: Tensor,
        tgt_in: Tensor,
        src_padding_mask: Tensor | None = None,
        *,
        return_attention: bool = False,
    ):
        """src ``(b, ts)``, tgt_in ``(b, tt)``, ``src_padding_mask (b, ts)`` True at real tokens. Returns
        logits ``(b, tt, V)``, or ``(logits, {"encoder": [...], "decoder": [...], "cross": [...]})`` with one
        weight tensor per layer. (No target padding mask: see :meth:`decode`.)"""
        if return_attention:
            memory, enc_w = self.encode(src, src_padding_mask, return_attention=True)
            logits, dec_w, cross_w = self.decode(tgt_in, memory, src_padding_mask, return_attention=True)
            return logits, {"encoder": enc_w, "decoder": dec_w, "cross": cross_w}
        memory = self.encode(src, src_padding_mask)  # (b, ts, e)
        return self.decode(tgt_in, memory, src_padding_mask)  # (b, tt, V)


__all__ = ["DecoderBlock", "EncoderDecoder", "EncoderDecoderConfig"]
