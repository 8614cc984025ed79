"""A sequence classifier (chapter 06): a transformer stack, a pooled summary, a linear layer.

tokens ``(b, t)`` -> embeddings + positions -> ``depth`` blocks -> one vector per sequence ->
``num_classes`` logits. The blog classifies IMDb reviews with ``ClassifierConfig()``'s defaults.

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``h`` heads, ``V`` vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.attention.masks import check_padding_mask
from fromscratch.blocks.transformer import StackConfig, TransformerStack
from fromscratch.models.config import resolve_config

POOLINGS = ("mean", "cls")


@dataclass(frozen=True)
class ClassifierConfig:
    """Sizes and options of a :class:`Classifier`; the defaults are the blog's IMDb model."""

    vocab_size: int = 50_003  # V: token ids 0..V-1 (blog: 50,000 words + <pad>, <unk>, <cls>)
    num_classes: int = 2  # logits per sequence (IMDb: negative, positive)
    emb: int = 128  # e: embedding width (blog: 128)
    heads: int = 8  # h: attention heads per block (blog: 8)
    depth: int = 6  # transformer blocks (blog: 6)
    context: int = 512  # longest input in tokens (blog: 512)
    pooling: str = "mean"  # "mean" over the real tokens (blog) or "cls": the output at position 0 (BERT)
    positions: str | None = "learned"  # "learned" (blog), "sinusoidal" or None
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e (blog: 4)
    dropout: float = 0.0  # after the embeddings and each sub-layer (blog: 0.0)
    norm: str = "post"  # "post": normalise after each residual sum (blog), "pre": before each sub-layer
    pad_id: int | None = 0  # id of <pad>: without a padding_mask, these positions count as padding
    checkpoint: bool = False  # recompute each block in the backward pass: less memory, more time (ch. 12)

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(
                f"pooling must be 'mean' (average the outputs) or 'cls' (the output at position 0); "
                f"got {self.pooling!r}."
            )


def classifier_padding_mask(tokens: Tensor, padding_mask: Tensor | None, pad_id: int | None) -> Tensor | None:
    """The padding mask a classifier reads ``tokens (b, t)`` with (chapters 06, 08): the given one
    (checked: bool ``(b, t)``), else ``tokens != pad_id``, else None (every position real)."""
    if tokens.dim() != 2:
        raise ValueError(
            f"tokens must be (b, t), got {tuple(tokens.shape)}; add a batch dimension with tokens[None]."
        )
    if padding_mask is None and pad_id is not None:
        padding_mask = tokens != pad_id  # (b, t)
    if padding_mask is not None:
        check_padding_mask(padding_mask, *tokens.shape)
    return padding_mask


def mean_over_tokens(x: Tensor, padding_mask: Tensor | None) -> Tensor:
    """The average of ``x (b, t, e)`` over the real tokens (``padding_mask (b, t)``): ``(b, e)``;
    zeros for a sequence without real tokens."""
    if padding_mask is None:
        return x.mean(dim=1)  # (b, e)
    keep = padding_mask[..., None].to(x.dtype)  # (b, t, 1)
    return (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)  # (b, e)


class Classifier(nn.Module):
    """A sequence classifier (chapter 06): ``Classifier(config, **fields)``.

    ``pooling="mean"``: the average output of the real tokens (the blog); ``"cls"``: the output at
    position 0, where the data put a ``<cls>`` token (BERT's way). Padding is hidden from attention.
    """

    def __init__(self, config: ClassifierConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(ClassifierConfig, config, fields)
        self.pooling, self.pad_id = c.pooling, c.pad_id
        self.stack = TransformerStack(StackConfig.of(c))
        self.to_logits = nn.Linear(c.emb, c.num_classes)

    def forward(
        self, tokens: Tensor, *, padding_mask: Tensor | None = None, attention: list[Tensor] | None = None
    ) -> Tensor:
        """tokens int ``(b, t)`` -> logits ``(b, num_classes)``. ``padding_mask`` bool ``(b, t)``, True
        at real tokens (None: ``tokens != pad_id``); ``attention``: a list that gets one
        ``(b, h, t, t)`` weight tensor per block."""
        padding_mask = classifier_padding_mask(tokens, padding_mask, self.pad_id)  # (b, t) or None
        x = self.stack(tokens, padding_mask=padding_mask, attention=attention)  # (b, t, e)
        summary = x[:, 0] if self.pooling == "cls" else mean_over_tokens(x, padding_mask)  # (b, e)
        return self.to_logits(summary)  # (b, num_classes)
