"""Images as tokens (chapter 13): cut an image into ``p x p`` patches, each flattened into one token.

A ViT (:mod:`fromscratch.models.vision`) reads an image as a sequence of patches: :func:`patchify`
cuts it, :func:`unpatchify` puts it back together, and :func:`check_patch` says which patch sizes fit.
Patches are numbered row by row, the order :func:`~fromscratch.attention.masks.local_mask` and
:class:`~fromscratch.attention.positions.GridPositionEmbedding` assume.

Shape legend: images ``(b, c, height, width)`` with ``b`` batch and ``c`` channels, ``p`` the patch side,
``n = (height/p)·(width/p)`` the patches.
"""

from __future__ import annotations

from torch import Tensor

__all__ = ["check_patch", "patchify", "unpatchify"]


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
