"""Cheaper dropout for training on a CPU: masks cut from a pool of random numbers (chapter 09).

``nn.Dropout`` draws a fresh Bernoulli mask for every call. On a CPU, PyTorch's default generator
(a Mersenne twister) produces these numbers one after the other, and for a small transformer that
costs a noticeable share of every training step. :class:`PoolDropout` draws one large pool of
scaled keep-masks (values ``0`` or ``1 / (1 - p)``) once, and for each call multiplies the input by a
slice of the pool starting at a random offset. Each element is still dropped with probability
``p``; masks of different calls overlap at random, which does not matter in practice for regularisation.
In eval mode it is the identity, as ``nn.Dropout``. :func:`use_pool_dropout` swaps it in for every
``nn.Dropout`` of a model.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

POOL_SIZE = 1 << 23  # scaled keep-mask values in the pool (32 MB of float32)
REFRESH_EVERY = 2000  # calls between two fresh pools


class PoolDropout(nn.Module):
    """Dropout with probability ``p`` whose masks are random slices of a pre-drawn pool. x: any shape."""

    def __init__(self, p: float = 0.1, *, pool_size: int = POOL_SIZE) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must lie in [0, 1), got {p}.")
        self.p, self.pool_size = p, pool_size
        self.pool: Tensor | None = None  # (pool_size,), drawn on first use (not saved with the model)
        self.calls = 0

    def extra_repr(self) -> str:
        return f"p={self.p}, pool_size={self.pool_size}"

    def _refresh(self, device: torch.device, dtype: torch.dtype) -> None:
        keep = torch.rand(self.pool_size, device=device) >= self.p  # (pool_size,) bool
        self.pool = keep.to(dtype) / (1.0 - self.p)  # 0 or 1/(1-p): the expected value stays x
        self.calls = 0

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        n = x.numel()
        if n > self.pool_size:  # larger than the pool: fall back to a fresh mask
            return nn.functional.dropout(x, self.p, training=True)
        if (
            self.pool is None
            or self.pool.device != x.device
            or self.pool.dtype != x.dtype
            or self.calls >= REFRESH_EVERY
        ):
            self._refresh(x.device, x.dtype)
        self.calls += 1
        start = int(torch.randint(0, self.pool_size - n + 1, ()))
        return x * self.pool[start : start + n].view(x.shape)


def use_pool_dropout(model: nn.Module) -> nn.Module:
    """Swap every ``nn.Dropout`` inside ``model`` for a :class:`PoolDropout` with the same ``p``; returns
    ``model``.
    """
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Dropout):
                setattr(module, name, PoolDropout(child.p))
    return model


__all__ = ["PoolDropout", "use_pool_dropout"]
