"""BERT (Devlin et al. 2019): an encoder pretrained by filling in masked words (chapter 10).

The architecture is the blog's post-norm transformer block with three details of the real model:
query/key/value projections with biases, the (exact) GELU, and LayerNorm epsilon 1e-12. Tokens get
three embeddings added up (token + learned position + segment, for BERT's sentence pairs), then a
LayerNorm, then ``depth`` blocks. :class:`BertEncoder` returns the last hidden states ``(b, t, e)``;
the heads are separate modules:

- :class:`MaskedLMHead`: dense + GELU + LayerNorm, then scores over the vocabulary with the
  **token embedding matrix itself** (tied weights) plus a bias: ``(b, t, e) -> (b, t, V)``;
- :class:`ClassificationHead`: BERT's pooler (dense + tanh on the ``[CLS]`` vector at position 0),
  dropout, a linear layer: ``(b, t, e) -> (b, num_classes)``.

:func:`fromscratch.data.masking.mask_tokens` corrupts a batch the way BERT's pretraining does: 15 % of
the real tokens are chosen; of those, 80 % become ``[MASK]``, 10 % a random token and 10 % stay as
they are; the model is scored on the chosen positions only (label -100 elsewhere,
``F.cross_entropy``'s ``ignore_index``).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.attention.masks import check_padding_mask
from fromscratch.attention.positions import check_tokens
from fromscratch.blocks.transformer import TransformerBlock
from fromscratch.models.classifier import mean_over_tokens
from fromscratch.models.config import resolve_config


@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT; the defaults are BERT-base (Devlin et al. 2019)."""

    vocab_size: int = 30_522  # V: WordPiece vocabulary (BERT-base uncased: 30,522)
    emb: int = 768  # e: hidden size (BERT-base: 768; all-MiniLM-L6-v2: 384)
    heads: int = 12  # h: attention heads (BERT-base: 12)
    depth: int = 12  # transformer blocks (BERT-base: 12; MiniLM-L6: 6)
    ff_mult: int = 4  # feed-forward width = ff_mult * e (BERT: 4, i.e. 3,072)
    context: int = 512  # max_position_embeddings: the longest input (BERT: 512)
    segments: int = 2  # type_vocab_size: segment ids 0 and 1 (sentence A / B)
    dropout: float = 0.1  # after the embeddings and each sub-layer (BERT: 0.1)
    norm_eps: float = 1e-12  # LayerNorm epsilon (BERT: 1e-12)


def _init_bert(module: nn.Module) -> None:
    """BERT's initialisation: normal(0, 0.02) weights, zero biases, unit LayerNorms."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)


class BertEncoder(nn.Module):
    """BERT's body: ids ``(b, t)`` -> last hidden states ``(b, t, e)``. ``BertEncoder(config, **fields)``."""

    def __init__(self, config: BertConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(BertConfig, config, fields)
        self.token_embedding = nn.Embedding(c.vocab_size, c.emb)
        self.position_embedding = nn.Embedding(c.context, c.emb)
        self.segment_embedding = nn.Embedding(c.segments, c.emb)
        self.embedding_norm = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.emb, c.heads, ff_mult=c.ff_mult, dropout=c.dropout, qkv_bias=True, activation="gelu"
            )
            for _ in range(c.depth)
        )
        for block in self.blocks:  # BERT's LayerNorms divide by sqrt(var + 1e-12)
            block.norm1.eps = block.norm2.eps = c.norm_eps
        self.apply(_init_bert)

    def forward(
        self,
        tokens: Tensor,
        padding_mask: Tensor | None = None,
        *,
        segment_ids: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """tokens int ``(b, t)``, ``t <= context`` -> the last hidden states ``(b, t, e)``.
        ``padding_mask`` bool ``(b, t)``, True at real tokens (None: all real); ``segment_ids (b, t)`` in
        ``0..segments-1`` (None: all 0); ``attention`` gets one ``(b, h, t, t)`` tensor per block."""
        check_tokens(tokens, self.config.context, self.config.vocab_size)
        b, t = tokens.shape
        if padding_mask is not None:
            check_padding_mask(padding_mask, b, t)
        positions = torch.arange(t, device=tokens.device)  # (t,)
        segments = torch.zeros_like(tokens) if segment_ids is None else segment_ids  # (b, t)
        x = (
            self.token_embedding(tokens)
            + self.position_embedding(positions)
            + self.segment_embedding(segments)
        )
        x = self.dropout(self.embedding_norm(x))  # (b, t, e)
        for block in self.blocks:
            x = block(x, padding_mask=padding_mask, attention=attention)  # (b, t, e)
        return x


class MaskedLMHead(nn.Module):
    """Scores every vocabulary entry at every position: ``(b, t, e) -> (b, t, V)``.

    The output layer's weight *is* the encoder's token embedding matrix (tied, as in BERT): a word's
    score is the dot product of the transformed hidden state with that word's input embedding.
    """

    def __init__(self, encoder: BertEncoder) -> None:
        super().__init__()
        c = encoder.config
        self.dense = nn.Linear(c.emb, c.emb)
        self.norm = nn.LayerNorm(c.emb, eps=c.norm_eps)
        self.to_logits = nn.Linear(c.emb, c.vocab_size)
        self.to_logits.weight = encoder.token_embedding.weight  # tied: one (V, e) matrix, two uses
        _init_bert(self.dense)
        nn.init.zeros_(self.to_logits.bias)

    def forward(self, hidden: Tensor) -> Tensor:
        return self.to_logits(self.norm(F.gelu(self.dense(hidden))))  # (..., V)


class ClassificationHead(nn.Module):
    """BERT's sequence classifier: ``tanh(dense([CLS]))`` (the "pooler"), dropout, then logits.

    hidden ``(b, t, e)`` -> ``(b, num_classes)``; pooling="mean" averages the real tokens instead.
    """

    def __init__(self, emb: int, num_classes: int, *, dropout: float = 0.1, pooling: str = "cls") -> None:
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' (position 0, BERT) or 'mean'; got {pooling!r}.")
        self.pooling = pooling
        self.pooler = nn.Linear(emb, emb)
        self.dropout = nn.Dropout(dropout)
        self.to_logits = nn.Linear(emb, num_classes)

    def forward(self, hidden: Tensor, padding_mask: Tensor | None = None) -> Tensor:
        cls = self.pooling == "cls"
        summary = hidden[:, 0] if cls else mean_over_tokens(hidden, padding_mask)  # (b, e): [CLS] or the mean
        return self.to_logits(self.dropout(torch.tanh(self.pooler(summary))))  # (b, num_classes)


class BertForPretraining(nn.Module):
    """Encoder + tied masked-LM head: ids ``(b, t)`` -> logits ``(b, t, V)``."""

    def __init__(self, config: BertConfig | None = None, **fields) -> None:
        super().__init__()
        self.encoder = BertEncoder(config, **fields)
        self.config = self.encoder.config
        self.mlm = MaskedLMHead(self.encoder)

    def forward(
        self, tokens: Tensor, padding_mask: Tensor | None = None, *, only: Tensor | None = None
    ) -> Tensor:
        """Logits ``(b, t, V)``; with ``only`` (a bool ``(b, t)``) just the chosen positions' ``(n, V)``
        (scoring 15 % of the positions over a large vocabulary saves most of the head's work)."""
        hidden = self.encoder(tokens, padding_mask)  # (b, t, e)
        return self.mlm(hidden if only is None else hidden[only])  # (b, t, V) or (n, V)


class BertForClassification(nn.Module):
    """Encoder + classification head: ids ``(b, t)`` -> logits ``(b, num_classes)``."""

    def __init__(
        self, encoder: BertEncoder, num_classes: int, *, dropout: float = 0.1, pooling: str = "cls"
    ) -> None:
        super().__init__()
        self.encoder, self.config = encoder, encoder.config
        self.head = ClassificationHead(encoder.config.emb, num_classes, dropout=dropout, pooling=pooling)
        _init_bert(self.head)

    def forward(self, tokens: Tensor, padding_mask: Tensor | None = None) -> Tensor:
        return self.head(self.encoder(tokens, padding_mask), padding_mask)  # (b, num_classes)


__all__ = [
    "BertConfig",
    "BertEncoder",
    "BertForClassification",
    "BertForPretraining",
    "ClassificationHead",
    "MaskedLMHead",
]
