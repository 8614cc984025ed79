"""The encoder-decoders before the transformer: a GRU bottleneck, and Bahdanau attention (chapter 09).

**The bottleneck** (Cho et al. 2014; Sutskever et al. 2014). A bidirectional GRU reads the source;
only its final states, one vector ``c`` for the whole sentence, reach the decoder. The decoder is a
GRU started from ``c`` that sees ``c`` again at every step: whatever the sentence's length, all the
decoder knows of it has to fit in that one vector.

**Bahdanau attention** (Bahdanau, Cho & Bengio 2015). The decoder keeps every encoder state
``h_j``. Before writing target token ``i`` it scores each ``h_j`` against its own previous state
``s_{i-1}`` with a small network, ``e_ij = vᵀ tanh(W s_{i-1} + U h_j)``, turns the scores into
weights ``α_ij = softmax_j(e_ij)`` (the **alignment**), and reads the context vector
``c_i = Σ_j α_ij h_j``, a fresh summary for every target token. Attention, before transformers.

Both models share everything else; ``RNNSeq2SeqConfig(attention=...)`` picks one. They have the
``encode``/``decode``/``new_cache`` methods that :mod:`fromscratch.generate.beam` decodes with: the
cache (:class:`RecurrentCache`) carries the decoder's state ``s_i`` from one step to the next.

Shape legend: ``b`` batch, ``ts`` source length, ``tt`` target length, ``H`` GRU width,
``E`` embedding width, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from fromscratch.attention.positions import check_length
from fromscratch.models.config import resolve_config
from fromscratch.tokenizers.special import PAD


class RecurrentCache:
    """The decoder's state between decoding steps: ``s_i (b, H)`` and how many tokens it has read."""

    def __init__(self) -> None:
        self.state: Tensor | None = None  # (b, H), None before the first step
        self.steps = 0

    def __len__(self) -> int:
        return self.steps

    def select(self, rows: Tensor) -> None:
        """Keep the sequences ``rows`` ``(b',)``, as :meth:`fromscratch.attention.cache.KVCache.select`
        does (beam search)."""
        if self.state is not None:
            self.state = self.state.index_select(0, rows)


@dataclass(frozen=True)
class RNNSeq2SeqConfig:
    """Sizes and options of an :class:`RNNSeq2Seq`."""

    vocab_size: int = 8000  # V: one joint vocabulary for source and target
    emb: int = 128  # E: token embedding width
    hidden: int = 256  # H: GRU state width (the encoder has H per direction)
    attention: bool = True  # True: Bahdanau attention; False: only the final states (the bottleneck)
    dropout: float = 0.1  # on embeddings and before the output layer
    context: int = 128  # longest source or target in tokens
    pad_id: int = PAD  # the <pad> token (tokenizers.special: 0)


class RNNSeq2Seq(nn.Module):
    """A GRU encoder-decoder, with (``attention=True``) or without Bahdanau attention (chapter 09)."""

    def __init__(self, config: RNNSeq2SeqConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(RNNSeq2SeqConfig, config, fields)
        self.context, self.attention = c.context, c.attention
        self.embedding = nn.Embedding(c.vocab_size, c.emb, padding_idx=c.pad_id)
        self.encoder = nn.GRU(c.emb, c.hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * c.hidden, c.hidden)  # final encoder states -> the decoder's first state
        self.cell = nn.GRUCell(c.emb + 2 * c.hidden, c.hidden)  # input: [token embedding; context vector]
        if c.attention:
            self.score_state = nn.Linear(c.hidden, c.hidden, bias=False)  # W
            self.score_source = nn.Linear(2 * c.hidden, c.hidden)  # U (and a bias)
            self.score_out = nn.Linear(c.hidden, 1, bias=False)  # v
        self.dropout = nn.Dropout(c.dropout)
        self.to_output = nn.Linear(3 * c.hidden, c.emb)  # [state; context] -> an embedding-sized vector
        self.to_logits = nn.Linear(c.emb, c.vocab_size)  # its scores against every token's embedding
        self.to_logits.weight = self.embedding.weight  # tied (Press & Wolf 2017): (V, E), one matrix

    def encode(self, src: Tensor, src_padding_mask: Tensor | None = None):
        """src ``(b, ts)``. Returns the memory: encoder states ``(b, ts, 2H)``, the sentence summary
        ``(b, 2H)`` (the final states of both directions) and ``U h`` ``(b, ts, H)`` (or None)."""
        if src.dim() != 2:
            raise ValueError(f"src must have shape (b, ts), got {tuple(src.shape)}.")
        check_length(src.size(1), self.context)
        mask = src_padding_mask if src_padding_mask is not None else torch.ones_like(src, dtype=torch.bool)
        lengths = mask.sum(1).clamp(min=1).cpu()  # (b,)
        packed = pack_padded_sequence(
            self.dropout(self.embedding(src)), lengths, batch_first=True, enforce_sorted=False
        )
        out, final = self.encoder(packed)  # final: (2, b, H), forward and backward
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))  # (b, ts, 2H)
        summary = torch.cat([final[0], final[1]], dim=-1)  # (b, 2H)
        keys = self.score_source(states) if self.attention else None  # (b, ts, H)
        return states, summary, keys, mask

    def _align(self, state: Tensor, states: Tensor, keys: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """Bahdanau's step: state ``(b, H)`` -> context ``(b, 2H)`` and alignment ``α (b, ts)``."""
        scores = self.score_out(torch.tanh(self.score_state(state)[:, None] + keys)).squeeze(-1)  # (b, ts)
        alpha = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (b, ts)
        return (alpha[:, None] @ states).squeeze(1), alpha  # (b, 2H), (b, ts)

    def decode(
        self,
        tgt_in: Tensor,
        memory,
        src_padding_mask: Tensor | None = None,
        *,
        cache: RecurrentCache | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tgt_in ``(b, tt)`` (``<s>`` first) -> logits ``(b, tt, V)``, one row per position of ``tgt_in``.
        ``attention`` gets the alignment as one head, ``(b, 1, tt, ts)`` (zeros for the bottleneck model).
        ``cache`` (from :meth:`new_cache`): ``tgt_in`` holds only the tokens after those already read.
        ``src_padding_mask`` is in the memory already; it is taken as every decoder's third argument."""
        check_length(tgt_in.size(1) + (len(cache) if cache is not None else 0), self.context)
        states, summary, keys, mask = memory
        resume = cache is not None and cache.state is not None  # go on from where the previous call stopped
        state = cache.state if resume else torch.tanh(self.bridge(summary))  # (b, H): s_0 or the last s_i
        embedded = self.dropout(self.embedding(tgt_in))  # (b, tt, E)
        outputs, alignments = [], []
        for i in range(tgt_in.size(1)):
            if self.attention:
                context, alpha = self._align(state, states, keys, mask)  # (b, 2H), (b, ts)
            else:
                context, alpha = summary, states.new_zeros(states.shape[:2])  # the same c at every step
            state = self.cell(torch.cat([embedded[:, i], context], dim=-1), state)  # (b, H): s_i
            outputs.append(torch.cat([state, context], dim=-1))  # (b, 3H)
            alignments.append(alpha)
        if cache is not None:
            cache.state, cache.steps = state, cache.steps + tgt_in.size(1)
        out = torch.stack(outputs, dim=1)  # (b, tt, 3H)
        if attention is not None:
            attention.append(torch.stack(alignments, dim=1)[:, None])  # (b, 1, tt, ts)
        return self.to_logits(self.dropout(torch.tanh(self.to_output(out))))  # (b, tt, V)

    def new_cache(self) -> RecurrentCache:
        """An empty decoding cache for :meth:`decode`."""
        return RecurrentCache()

    def forward(
        self,
        src: Tensor,
        tgt_in: Tensor,
        src_padding_mask: Tensor | None = None,
        *,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """Teacher forcing: logits ``(b, tt, V)`` for every target position; ``attention`` gets the
        alignment ``(b, 1, tt, ts)``."""
        memory = self.encode(src, src_padding_mask)
        return self.decode(tgt_in, memory, src_padding_mask, attention=attention)


__all__ = ["RNNSeq2Seq", "RNNSeq2SeqConfig", "RecurrentCache"]
