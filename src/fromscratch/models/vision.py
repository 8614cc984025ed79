"""A Vision Transformer (chapter 13): an image as a set of patches, read by the course's own blocks.

Dosovitskiy et al. (2021) cut an image into ``p x p`` patches, flatten each into one token, map it
linearly to ``e`` dimensions, add a position, prepend a learned *class token*, and run a plain
transformer encoder; the class token's output (or the mean of all outputs) is classified. Nothing
in the blocks knows it is looking at an image: the structure lives in the positions (1-D, 2-D or
none) and, optionally, in the attention mask (:func:`~fromscratch.attention.masks.local_mask`: each
patch sees only its neighbours, a convolution's prior written as a mask).

:class:`ImageQuestion` (section 13.4) puts words and patches in one set, told apart by a type
embedding: a toy of how one transformer reads two kinds of units.

:func:`patchify` cuts an image into its patch tokens, :func:`unpatchify` puts it back together and
:func:`check_patch` says which patch sizes fit.

Shape legend: ``b`` batch, ``c`` channels, ``p`` patch side, ``n`` patches, ``e`` embedding,
``h`` heads, ``t`` tokens in the sequence (``n`` + 1 with a class token), ``w`` words.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from fromscratch.attention.masks import local_mask
from fromscratch.attention.positions import GridPositionEmbedding, PositionEmbedding
from fromscratch.blocks.transformer import TransformerBlock
from fromscratch.models.config import resolve_config

__all__ = [
    "GRID_POSITIONS",
    "IMAGE_POOLINGS",
    "ImageQuestion",
    "ImageQuestionConfig",
    "ViT",
    "ViTConfig",
    "check_patch",
    "patchify",
    "unpatchify",
]

# --- images as tokens: cut into p x p patches, numbered row by row (the order local_mask and
# GridPositionEmbedding assume), each flattened into one token of p·p·c values ---


def check_patch(height: int, width: int, patch: int) -> None:
    """Raise a ValueError naming the patch sizes that fit unless ``patch`` divides both sides."""
    if patch > 0 and height % patch == 0 and width % patch == 0:
        return
    fits = [p for p in range(1, min(height, width) + 1) if height % p == 0 and width % p == 0]
    raise ValueError(
        f"A {height}x{width} image cannot be cut into {patch}x{patch} patches: both sides must be "
        f"multiples of the patch. Patch sizes that work: {', '.join(map(str, fits))} (or pad or crop "
        f"the image to a multiple of {patch})."
    )


def patchify(images: Tensor, patch: int) -> Tensor:
    """Cut images into non-overlapping ``p x p`` patches, each flattened into one token (chapter 13).

    images: ``(b, c, height, width)``, both sides multiples of ``p``. Returns ``(b, n, p·p·c)`` with
    ``n = (height/p)·(width/p)`` patches numbered row by row; inside a patch the values run row by
    row, pixel by pixel, with a pixel's ``c`` channels side by side. :func:`unpatchify` undoes it.
    """
    if images.dim() != 4:
        raise ValueError(
            f"images must be (b, c, height, width), got shape {tuple(images.shape)}; "
            f"add a channel dimension with images[:, None]."
        )
    b, c, height, width = images.shape
    check_patch(height, width, patch)
    rows, cols = height // patch, width // patch
    x = images.reshape(b, c, rows, patch, cols, patch)  # (b, c, rows, p, cols, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, c)
    return x.reshape(b, rows * cols, patch * patch * c)  # (b, n, p·p·c)


def unpatchify(patches: Tensor, patch: int, height: int, width: int) -> Tensor:
    """Put :func:`patchify`'s ``(b, n, p·p·c)`` tokens back together: ``(b, c, height, width)``."""
    check_patch(height, width, patch)
    rows, cols = height // patch, width // patch
    b, n, size = patches.shape
    if n != rows * cols or size % (patch * patch):
        raise ValueError(
            f"patches {tuple(patches.shape)} do not make a {height}x{width} image of {patch}x{patch} "
            f"patches: expected (b, {rows * cols}, {patch * patch}·c)."
        )
    c = size // (patch * patch)
    x = patches.reshape(b, rows, cols, patch, patch, c)  # (b, rows, cols, p, p, c)
    return x.permute(0, 5, 1, 3, 2, 4).reshape(b, c, height, width)  # (b, c, height, width)


IMAGE_POOLINGS = ("cls", "mean")
GRID_POSITIONS = ("grid", "learned", None)  # 2-D (row + column), 1-D (patch number), none


@dataclass(frozen=True)
class ViTConfig:
    """Sizes and options of a :class:`ViT`; the defaults are a small MNIST model (ViT-Base: e 768,
    12 heads, depth 12, 16 x 16 patches of 224 x 224 images)."""

    image_size: int = 28  # side of the square images in pixels (MNIST: 28)
    channels: int = 1  # c: colour channels (MNIST: 1, grey)
    patch: int = 4  # p: side of a patch; image_size must be a multiple of it (28: 1, 2, 4, 7, 14, 28)
    num_classes: int = 10  # logits per image
    emb: int = 64  # e: token width
    heads: int = 4  # h: attention heads per block
    depth: int = 6  # transformer blocks
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e
    dropout: float = 0.0  # after the embeddings and each sub-layer
    norm: str = "pre"  # "pre" (ViT's choice) or "post" (the blog's block)
    pooling: str = "cls"  # "cls": the class token's output (ViT); "mean": the mean of the patches' outputs
    positions: str | None = "grid"  # "grid": learned row + column vectors; "learned": one per patch; None
    local: int | None = None  # each patch attends to patches at most this many rows/columns away (None: all)

    def __post_init__(self) -> None:
        check_patch(self.image_size, self.image_size, self.patch)
        if self.pooling not in IMAGE_POOLINGS:
            raise ValueError(f"pooling must be one of {IMAGE_POOLINGS}; got {self.pooling!r}.")
        if self.positions not in GRID_POSITIONS:
            raise ValueError(f"positions must be one of {GRID_POSITIONS}; got {self.positions!r}.")

    @property
    def grid(self) -> int:
        """Patches per row (and per column): ``image_size // patch``."""
        return self.image_size // self.patch


class ViT(nn.Module):
    """A Vision Transformer (chapter 13) built from a :class:`ViTConfig` (``ViT(config, **fields)``).

    images ``(b, c, s, s)`` -> :func:`patchify` ``(b, n, p·p·c)`` -> a linear map to ``e`` ->
    positions -> [class token] -> ``depth`` :class:`~fromscratch.blocks.TransformerBlock` s -> pooled
    ``(b, e)`` -> logits ``(b, num_classes)``. With ``local = r``, a patch attends only to the patches
    in the ``(2r+1) x (2r+1)`` window around it; the class token still sees every patch (and no patch
    sees the class token), so information spreads one window per block, as in a stack of convolutions.
    """

    def __init__(self, config: ViTConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(ViTConfig, config, fields)
        n = c.grid * c.grid
        self.patch_embedding = nn.Linear(c.patch * c.patch * c.channels, c.emb)  # one patch -> one token
        self.class_token = nn.Parameter(torch.randn(1, 1, c.emb) * 0.02) if c.pooling == "cls" else None
        if c.positions == "grid":
            self.positions = GridPositionEmbedding(c.grid, c.grid, c.emb)
        elif c.positions == "learned":
            self.positions = PositionEmbedding(n, c.emb)
        else:
            self.positions = None  # a bag of patches: the model cannot tell where a patch was
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.emb, c.heads, ff_mult=c.ff_mult, dropout=c.dropout, norm=c.norm, activation="gelu"
            )
            for _ in range(c.depth)
        )
        self.final_norm = nn.LayerNorm(c.emb) if c.norm == "pre" else nn.Identity()
        self.to_logits = nn.Linear(c.emb, c.num_classes)
        mask = None if c.local is None else self._local_pattern(c.grid, c.local, c.pooling == "cls")
        self.register_buffer("mask", mask, persistent=False)  # (t, t) or None

    @staticmethod
    def _local_pattern(grid: int, radius: int, with_class: bool) -> Tensor:
        """The local mask, with the class token (if any) at position 0 seeing every patch: ``(t, t)``."""
        patches = local_mask(grid, grid, radius)  # (n, n)
        if not with_class:
            return patches
        n = grid * grid
        mask = torch.zeros(n + 1, n + 1, dtype=torch.bool)
        mask[0] = True  # the class token reads every patch
        mask[1:, 1:] = patches  # patches read their neighbours only
        return mask  # (n + 1, n + 1)

    def embed_patches(self, images: Tensor) -> Tensor:
        """images ``(b, c, s, s)`` -> patch tokens with their positions ``(b, n, e)``."""
        c = self.config
        if images.dim() != 4 or images.shape[1:] != (c.channels, c.image_size, c.image_size):
            raise ValueError(
                f"images must be (b, {c.channels}, {c.image_size}, {c.image_size}), "
                f"got {tuple(images.shape)}; "
                f"fromscratch.data.mnist.to_float turns (b, h, w) uint8 pixels into that."
            )
        x = self.patch_embedding(patchify(images, c.patch))  # (b, n, p·p·c) -> (b, n, e)
        return x if self.positions is None else self.positions(x)  # (b, n, e)

    def encode(
        self, x: Tensor, *, attn_mask: Tensor | None = None, attention: list[Tensor] | None = None
    ) -> Tensor:
        """Run the blocks on tokens ``x (b, t, e)`` -> ``(b, t, e)``; ``attention`` gets one
        ``(b, h, t, t)`` tensor per block."""
        x = self.dropout(x)
        for block in self.blocks:
            x = block(x, attn_mask=attn_mask, attention=attention)  # (b, t, e)
        return self.final_norm(x)  # (b, t, e)

    def forward(
        self, images: Tensor, *, attn_mask: Tensor | None = None, attention: list[Tensor] | None = None
    ) -> Tensor:
        """images float ``(b, c, s, s)`` -> logits ``(b, num_classes)``. ``attn_mask`` (bool ``(t, t)``,
        True = may attend) replaces the config's local mask, if any. ``attention`` gets one
        ``(b, h, t, t)`` tensor per block (with a class token, token 0 is the class token and tokens
        ``1..n`` the patches, row by row)."""
        x = self.embed_patches(images)  # (b, n, e)
        if self.class_token is not None:
            x = torch.cat([self.class_token.expand(len(x), -1, -1), x], dim=1)  # (b, n + 1, e)
        mask = self.mask if attn_mask is None else attn_mask
        x = self.encode(x, attn_mask=mask, attention=attention)  # (b, t, e)
        summary = x[:, 0] if self.class_token is not None else x.mean(dim=1)  # (b, e)
        return self.to_logits(summary)  # (b, num_classes)


# --- 13.4: two kinds of units in one set ------------------------------------------------------------
@dataclass(frozen=True)
class ImageQuestionConfig:
    """Sizes of an :class:`ImageQuestion` model: a ViT that also reads a short question in words."""

    vit: ViTConfig  # the image side: patches, grid positions, class token, blocks (its num_classes = answers)
    vocab_size: int = 32  # V: word ids of the questions
    max_words: int = 8  # longest question, in words (learned 1-D positions for the words)


class ImageQuestion(nn.Module):
    """Answer a question about an image (chapter 13.4, a toy): one set of word and patch tokens.

    tokens = [class] + words (word embedding + 1-D position + type 0) + patches (linear patch
    embedding + 2-D position + type 1). The *type embedding* tells the blocks which kind of unit each
    token is; otherwise the model is the :class:`ViT`, whose class token gives the answer logits.
    """

    def __init__(self, config: ImageQuestionConfig) -> None:
        super().__init__()
        self.config = config
        if config.vit.pooling != "cls":
            raise ValueError(
                "ImageQuestion answers from the class token; build its ViTConfig with pooling='cls'."
            )
        self.vit = ViT(config.vit)
        self.words = nn.Embedding(config.vocab_size, config.vit.emb)
        self.word_positions = PositionEmbedding(config.max_words, config.vit.emb)
        self.types = nn.Embedding(2, config.vit.emb)  # 0: a word, 1: an image patch

    def forward(self, images: Tensor, words: Tensor, *, attention: list[Tensor] | None = None) -> Tensor:
        """images ``(b, c, s, s)``, words int ``(b, w)`` -> answer logits ``(b, num_classes)``;
        ``attention`` gets one ``(b, h, t, t)`` tensor per block (tokens: class, words, patches)."""
        patches = self.vit.embed_patches(images) + self.types.weight[1]  # (b, n, e)
        text = self.word_positions(self.words(words)) + self.types.weight[0]  # (b, w, e)
        cls = self.vit.class_token.expand(len(images), -1, -1)  # (b, 1, e)
        x = torch.cat([cls, text, patches], dim=1)  # (b, 1 + w + n, e)
        x = self.vit.encode(x, attention=attention)  # (b, t, e)
        return self.vit.to_logits(x[:, 0])  # (b, num_classes)
