"""One classifier, four ways to mix positions: bag, recurrent, convolutional, attention (chapter 08).

tokens ``(b, t)`` -> an encoder ``(b, t, e)`` -> the mean over real tokens ``(b, e)`` -> a linear layer
-> ``num_classes`` logits. The embedding and the head are those of :class:`Classifier` (mean pooling);
only the encoder changes with ``config.encoder``:

- "bag": :class:`~fromscratch.models.encoders.BagEncoder` (no mixing at all);
- "rnn": :class:`~fromscratch.models.encoders.RecurrentEncoder` (GRU or LSTM);
- "cnn": :class:`~fromscratch.models.encoders.ConvEncoder` (residual 1-D convolutions);
- "transformer": :class:`~fromscratch.blocks.TransformerStack` (the blog's classifier).

:func:`hidden_for_budget` sizes the recurrent or convolutional model to a parameter count, and
:func:`budget_configs` gives the four configs at one budget, so they can be compared fairly.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``V`` vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from fromscratch.blocks import TransformerStack
from fromscratch.models.classifier import classifier_padding_mask, mean_over_tokens
from fromscratch.models.config import resolve_config
from fromscratch.models.encoders import ENCODERS, BagEncoder, ConvEncoder, RecurrentEncoder
from fromscratch.utils import count_parameters


@dataclass(frozen=True)
class SequenceClassifierConfig:
    """Sizes and options of a :class:`SequenceClassifier`; the defaults are the blog's IMDb transformer."""

    vocab_size: int = 50_003  # V: token ids 0..V-1 (blog: 50,000 words + <pad>, <unk>, <cls>)
    num_classes: int = 2  # logits per sequence (IMDb: negative, positive)
    encoder: str = "transformer"  # how positions mix: "bag" (never), "rnn", "cnn" or "transformer"
    emb: int = 128  # e: token embedding width, and the width of every encoder's output (blog: 128)
    depth: int = 6  # recurrent layers, conv blocks or transformer blocks (blog: 6); unused by "bag"
    context: int = 512  # longest input in tokens (blog: 512)
    hidden: int | None = None  # rnn: state width per direction; cnn: channels of each convolution; None: e
    cell: str = "gru"  # rnn: "gru" or "lstm"
    bidirectional: bool = False  # rnn: also read right to left, so every output sees every input
    kernel: int = 3  # cnn: positions in each convolution window (odd: centred)
    dilated: bool = False  # cnn: dilation 1, 2, 4, ... doubling per block (WaveNet), else 1
    heads: int = 8  # transformer: attention heads per block (blog: 8)
    ff_mult: int = 4  # transformer: feed-forward hidden width = ff_mult * e (blog: 4)
    positions: str | None = "learned"  # transformer: "learned" (blog), "sinusoidal" or None
    dropout: float = 0.0  # after the embeddings and inside each layer (blog: 0.0)
    pad_id: int | None = 0  # id of <pad>: without a padding_mask, these positions count as padding

    def __post_init__(self) -> None:
        if self.encoder not in ENCODERS:
            raise ValueError(
                f"encoder must be one of {', '.join(map(repr, ENCODERS))}; got {self.encoder!r}."
            )


def build_encoder(c: SequenceClassifierConfig) -> nn.Module:
    """The encoder ``config.encoder`` names, sized by ``c``: token ids ``(b, t)`` -> ``(b, t, e)``."""
    common = dict(vocab_size=c.vocab_size, emb=c.emb, context=c.context, dropout=c.dropout)
    if c.encoder == "bag":
        return BagEncoder(**common)
    if c.encoder == "rnn":
        return RecurrentEncoder(
            **common, hidden=c.hidden, depth=c.depth, cell=c.cell, bidirectional=c.bidirectional
        )
    if c.encoder == "cnn":
        return ConvEncoder(**common, hidden=c.hidden, depth=c.depth, kernel=c.kernel, dilated=c.dilated)
    return TransformerStack(**common, heads=c.heads, depth=c.depth, positions=c.positions, ff_mult=c.ff_mult)


class SequenceClassifier(nn.Module):
    """A sequence classifier with any of four encoders (chapter 08), built from a config.

    ``SequenceClassifier(config, **fields)``: keyword arguments replace fields of ``config`` (of
    ``SequenceClassifierConfig()``, the blog's transformer, when no config is given);
    ``model.config`` is the result, ``model.encoder`` the mixing part, ``model.to_logits`` the head.
    With ``encoder="transformer"`` it is :class:`Classifier` with mean pooling, weight for weight.
    """

    def __init__(self, config: SequenceClassifierConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(SequenceClassifierConfig, config, fields)
        self.pad_id = c.pad_id
        self.encoder = build_encoder(c)
        self.to_logits = nn.Linear(c.emb, c.num_classes)

    def forward(self, tokens: Tensor, *, padding_mask: Tensor | None = None) -> Tensor:
        """tokens: int ``(b, t)``; padding_mask: bool ``(b, t)``, True at real tokens (None:
        ``tokens != pad_id``, or every position real when ``pad_id`` is None). Returns logits
        ``(b, num_classes)``. ``t`` above ``context`` is a ValueError."""
        padding_mask = classifier_padding_mask(tokens, padding_mask, self.pad_id)  # (b, t) or None
        x = self.encoder(tokens, padding_mask=padding_mask)  # (b, t, e)
        return self.to_logits(mean_over_tokens(x, padding_mask))  # (b, num_classes)


def hidden_for_budget(budget: int, config: SequenceClassifierConfig | None = None, **fields) -> int:
    """The ``hidden`` width that brings a "rnn" or "cnn" model closest to ``budget`` parameters (ch. 08).

    ``config`` and ``fields`` as for :class:`SequenceClassifier`; everything but ``hidden`` stays.
    Typical use, one budget for all: ``budget = count_parameters(SequenceClassifier(c))`` for the
    transformer, then ``SequenceClassifier(c, encoder="rnn", hidden=hidden_for_budget(budget, c,
    encoder="rnn"))``. The models are built on the "meta" device (shapes only, no memory).
    """
    c = resolve_config(SequenceClassifierConfig, config, fields)
    if c.encoder not in ("rnn", "cnn"):
        raise ValueError(
            f"hidden sizes only the 'rnn' and 'cnn' encoders; got {c.encoder!r}. Size a transformer with "
            f"emb, depth and ff_mult (a bag has nothing but its embedding)."
        )

    def count(hidden: int) -> int:
        with torch.device("meta"):
            return count_parameters(SequenceClassifier(c, hidden=hidden))

    if count(1) > budget:
        raise ValueError(
            f"even hidden=1 gives {count(1):,} parameters, over the budget of {budget:,}; lower emb or depth."
        )
    low, high = 1, 2
    while count(high) < budget:  # the count grows with hidden: double until past the budget
        low, high = high, 2 * high
    while low < high:  # then bisect for the smallest hidden with count >= budget
        middle = (low + high) // 2
        low, high = (middle + 1, high) if count(middle) < budget else (low, middle)
    return min((max(low - 1, 1), low), key=lambda hidden: abs(count(hidden) - budget))


def budget_configs(
    transformer: SequenceClassifierConfig,
    *,
    rnn: SequenceClassifierConfig | None = None,
    cnn: SequenceClassifierConfig | None = None,
    encoders: Iterable[str] = ENCODERS,
) -> dict[str, SequenceClassifierConfig]:
    """One config per encoder in ``encoders``, all at the parameter count of ``transformer`` (ch. 08).

    ``transformer``: the transformer's config (its ``encoder`` field is ignored); ``rnn`` / ``cnn``:
    the recurrent and convolutional models (e.g. ``replace(transformer, depth=1, cell="gru")``;
    None: the transformer's fields), whose ``hidden`` width is sized to the budget with
    :func:`hidden_for_budget`. The bag keeps only the embedding and the head.
    """
    transformer = replace(transformer, encoder="transformer")
    with torch.device("meta"):  # shapes only: count without allocating
        budget = count_parameters(SequenceClassifier(transformer))
    configs = {}
    for encoder in encoders:
        if encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {', '.join(ENCODERS)}; got {encoder!r}.")
        if encoder in ("rnn", "cnn"):
            config = replace((rnn if encoder == "rnn" else cnn) or transformer, encoder=encoder)
            configs[encoder] = replace(config, hidden=hidden_for_budget(budget, config))
        else:
            configs[encoder] = replace(transformer, encoder=encoder)
    return configs


__all__ = [
    "SequenceClassifier",
    "SequenceClassifierConfig",
    "budget_configs",
    "build_encoder",
    "hidden_for_budget",
]
