"""A small convolutional network for images (chapter 13): the baseline of the Vision Transformer.

Each stage is a ``3 x 3`` convolution (padding 1, so the size is kept), a ReLU and a ``2 x 2``
max-pool (halving the size); then the feature maps are flattened into a hidden layer and the
logits (LeCun et al. 1998's recipe, in today's sizes). A convolution looks only at a pixel's
neighbours and uses the same weights everywhere: the *locality* and *translation* prior that a
transformer has to learn from data (or be given as a mask, chapter 13).

Shape legend: ``b`` batch, ``c`` channels, ``s`` image side.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.models.config import resolve_config

__all__ = ["CNN", "CNNConfig"]


@dataclass(frozen=True)
class CNNConfig:
    """Sizes of a :class:`CNN`; the defaults suit MNIST."""

    image_size: int = 28  # side of the square images in pixels (MNIST: 28)
    channels: int = 1  # c: input channels (MNIST: 1)
    num_classes: int = 10  # logits per image
    widths: tuple[int, ...] = (32, 64)  # output channels of each conv + ReLU + max-pool stage
    hidden: int = 128  # width of the hidden layer after flattening
    dropout: float = 0.0  # before the hidden and the output layer

    def __post_init__(self) -> None:
        if self.image_size % 2 ** len(self.widths):
            raise ValueError(
                f"{len(self.widths)} stages halve the image {len(self.widths)} times, so image_size must be "
                f"a multiple of {2 ** len(self.widths)}; got {self.image_size}. Use fewer stages."
            )


class CNN(nn.Module):
    """A convolutional classifier (chapter 13) from a :class:`CNNConfig` (``CNN(config, **fields)``).

    images ``(b, c, s, s)`` -> stages ``(b, widths[-1], s / 2^k, s / 2^k)`` -> flattened -> hidden ->
    logits ``(b, num_classes)``.
    """

    def __init__(self, config: CNNConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(CNNConfig, config, fields)
        stages, width = [], c.channels
        for out in c.widths:
            stages += [nn.Conv2d(width, out, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            width = out
        self.features = nn.Sequential(*stages)
        side = c.image_size // 2 ** len(c.widths)
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(c.dropout),
            nn.Linear(width * side * side, c.hidden),
            nn.ReLU(),
            nn.Dropout(c.dropout),
            nn.Linear(c.hidden, c.num_classes),
        )

    def forward(self, images: Tensor) -> Tensor:
        """images: float ``(b, c, s, s)``. Returns logits ``(b, num_classes)``."""
        c = self.config
        if images.dim() != 4 or images.shape[1:] != (c.channels, c.image_size, c.image_size):
            raise ValueError(
                f"images must be (b, {c.channels}, {c.image_size}, {c.image_size}), "
                f"got {tuple(images.shape)}."
            )
        return self.head(self.features(images))  # (b, num_classes)
