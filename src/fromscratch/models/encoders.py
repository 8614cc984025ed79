"""The alternatives to attention: recurrent and convolutional sequence encoders (chapter 08).

Every encoder here maps token ids ``(b, t)`` to one vector per position ``(b, t, e)``, as
:class:`~fromscratch.blocks.TransformerStack` does, so that one classification head serves all four
sequence models (:class:`~fromscratch.models.SequenceClassifier`). They differ in how positions mix:

- :class:`BagEncoder`: the token embedding alone; positions never mix (a bag of embeddings);
- :class:`RecurrentEncoder`: a GRU or LSTM reads the tokens one after another, so output ``i`` sees
  inputs ``0..i`` (every input with ``bidirectional=True``), after ``t`` sequential steps;
- :class:`ConvEncoder`: ``depth`` residual blocks of 1-D convolutions; a block sees
  ``(kernel - 1) // 2`` positions to either side (times its dilation), so the reach grows with depth.

Padding: ``padding_mask (b, t)`` is True at real tokens (:func:`fromscratch.attention.masks.padding_mask`) and
real tokens come first (right padding). These encoders return zeros at padded positions, and
appending padding never changes the outputs at real positions. A sequence with no real token at
all gets zeros everywhere (the recurrent network never runs on it), as attention gives all-zero
weights to a row whose keys are all blocked.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``V`` vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from fromscratch.attention import check_length, masks

ENCODERS = ("bag", "rnn", "cnn", "transformer")  # the four ways to mix a sequence (chapter 08)
CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}


def real_tokens(tokens: Tensor, padding_mask: Tensor | None, context: int) -> Tensor:
    """Check ``tokens (b, t)`` against ``context`` and return the padding mask ``(b, t)`` to use.

    ``padding_mask`` None means every position is a real token.
    """
    if tokens.dim() != 2:
        raise ValueError(
            f"tokens must have shape (b, t), got {tuple(tokens.shape)}; "
            "add a batch dimension with tokens[None]."
        )
    check_length(tokens.size(1), context)
    if padding_mask is None:
        return torch.ones_like(tokens, dtype=torch.bool)  # (b, t)
    masks.check_padding_mask(padding_mask, *tokens.shape)
    return padding_mask  # (b, t)


class BagEncoder(nn.Module):
    """A bag of embeddings (chapter 08): each token's embedding, untouched by its neighbours.

    ``forward(tokens (b, t), *, padding_mask (b, t) | None) -> (b, t, e)``, zeros at padding.
    Mean pooling on top gives the order-blind baseline that every mixing layer must beat.
    """

    def __init__(self, *, vocab_size: int, emb: int, context: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.context = context
        self.token_embedding = nn.Embedding(vocab_size, emb)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: Tensor, *, padding_mask: Tensor | None = None) -> Tensor:
        keep = real_tokens(tokens, padding_mask, self.context)  # (b, t)
        x = self.dropout(self.token_embedding(tokens))  # (b, t, e)
        return x * keep[..., None]  # (b, t, e), zero at padding


class RecurrentEncoder(nn.Module):
    """A recurrent encoder (chapter 08): a GRU or LSTM over the token embeddings, then a linear map.

    ``depth`` layers, ``hidden`` units per direction (None: ``e``); the states ``(b, t, hidden)``
    (``2 * hidden`` bidirectional) are mapped back to ``e``. Packing runs each sequence over its real
    tokens only (the backward direction starts at its last real token).
    ``forward(tokens (b, t), *, padding_mask (b, t) | None) -> (b, t, e)``, zeros at padding (all of a
    sequence that is only padding).
    """

    def __init__(
        self,
        *,
        vocab_size: int,
        emb: int,
        context: int,
        hidden: int | None = None,
        depth: int = 1,
        cell: str = "gru",
        bidirectional: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell must be 'gru' or 'lstm'; got {cell!r}.")
        if depth < 1:
            raise ValueError(f"a recurrent encoder needs depth >= 1 layers; got {depth}.")
        hidden = hidden or emb
        self.context = context
        self.token_embedding = nn.Embedding(vocab_size, emb)
        self.dropout = nn.Dropout(dropout)
        self.rnn = CELLS[cell](
            emb,
            hidden,
            num_layers=depth,
            batch_first=True,
            bidirectional=bidirectional,
            dropout=dropout if depth > 1 else 0.0,
        )
        self.width = hidden * (2 if bidirectional else 1)  # size of the state vector at each position
        self.to_output = nn.Linear(self.width, emb)

    def forward(self, tokens: Tensor, *, padding_mask: Tensor | None = None) -> Tensor:
        keep = real_tokens(tokens, padding_mask, self.context)  # (b, t)
        b, t = tokens.shape
        lengths = keep.sum(dim=1)  # (b,)
        if not torch.equal(keep, masks.padding_mask(lengths, t)):
            raise ValueError(
                "RecurrentEncoder needs right padding: real tokens first, then padding (each padding_mask "
                "row True then False); build the mask with masks.padding_mask(lengths, t)."
            )
        x = self.dropout(self.token_embedding(tokens))  # (b, t, e)
        rows = lengths.nonzero().squeeze(1)  # (b',): the sequences with at least one real token
        states = x.new_zeros(b, t, self.width)  # (b, t, width); all-padding rows stay zero
        if len(rows):
            packed = pack_padded_sequence(
                x[rows], lengths[rows].cpu(), batch_first=True, enforce_sorted=False
            )
            out, _ = self.rnn(packed)  # the recurrence: t steps, one after another
            out, _ = pad_packed_sequence(
                out, batch_first=True, total_length=t
            )  # (b', t, width), zero at padding
            # on a GPU, autocast runs the recurrence in 16 bits while `states` is fp32
            states = states.index_copy(0, rows, out.to(states.dtype))  # (b, t, width)
        return self.to_output(states) * keep[..., None]  # (b, t, e), zero at padding


class ConvBlock(nn.Module):
    """One residual convolution block (chapter 08): ``x = norm(x + W relu(conv(x)))``.

    ``conv`` is a centred ("same") 1-D convolution from ``e`` to ``hidden`` channels over ``kernel``
    positions spaced ``dilation`` apart; ``W`` maps back to ``e`` at each position (the block's
    feed-forward part); post-norm as in the blog's transformer block. Padded positions are zeroed
    before the convolution, so they look exactly like the zeros beyond the sequence's end.
    x: ``(b, t, e)``, keep: bool ``(b, t)`` (True at real tokens) -> ``(b, t, e)``.
    """

    def __init__(
        self, emb: int, hidden: int, *, kernel: int, dilation: int = 1, dropout: float = 0.0
    ) -> None:
        super().__init__()
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(
                f"kernel must be odd (a window centred on each position), e.g. 3 or 5; got {kernel}."
            )
        self.conv = nn.Conv1d(emb, hidden, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2)
        self.proj = nn.Linear(hidden, emb)
        self.norm = nn.LayerNorm(emb)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, keep: Tensor) -> Tensor:
        x = x * keep[..., None]  # (b, t, e): padding contributes nothing to real positions
        mixed = self.conv(x.transpose(1, 2)).transpose(1, 2)  # (b, e, t) -> (b, hidden, t) -> (b, t, hidden)
        return self.norm(x + self.dropout(self.proj(torch.relu(mixed))))  # (b, t, e)


class ConvEncoder(nn.Module):
    """A convolutional encoder (chapter 08): token embeddings, then ``depth`` :class:`ConvBlock` s.

    Block ``l`` (from 0) has dilation ``2**l`` when ``dilated`` (WaveNet), else 1; with
    ``r = (kernel - 1) // 2`` an output sees ``r * depth`` positions to either side, or
    ``r * (2**depth - 1)`` dilated (:func:`fromscratch.metrics.paths.conv_reach`). ``hidden``: channels
    between each convolution and its linear map back to ``e`` (None: ``e``).

    ``forward(tokens (b, t), *, padding_mask (b, t) | None) -> (b, t, e)``, zeros at padding.
    """

    def __init__(
        self,
        *,
        vocab_size: int,
        emb: int,
        context: int,
        hidden: int | None = None,
        depth: int = 1,
        kernel: int = 3,
        dilated: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.context = context
        self.token_embedding = nn.Embedding(vocab_size, emb)
        self.dropout = nn.Dropout(dropout)
        self.dilations = [2**layer if dilated else 1 for layer in range(depth)]
        self.blocks = nn.ModuleList(
            ConvBlock(emb, hidden or emb, kernel=kernel, dilation=dilation, dropout=dropout)
            for dilation in self.dilations
        )

    def forward(self, tokens: Tensor, *, padding_mask: Tensor | None = None) -> Tensor:
        keep = real_tokens(tokens, padding_mask, self.context)  # (b, t)
        x = self.dropout(self.token_embedding(tokens))  # (b, t, e)
        for block in self.blocks:
            x = block(x, keep)  # (b, t, e)
        return x * keep[..., None]  # (b, t, e), zero at padding


__all__ = ["ENCODERS", "CELLS", "BagEncoder", "ConvBlock", "ConvEncoder", "RecurrentEncoder", "real_tokens"]
