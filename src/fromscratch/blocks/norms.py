"""Normalising the residual stream: LayerNorm (chapter 05) and RMSNorm (chapter 14).

**LayerNorm** (Ba et al. 2016) centres each token's vector and scales it to unit variance, then
applies a learned gain ``γ`` and bias ``β``: ``y = (x - mean(x)) / sqrt(var(x) + ε) · γ + β``.

**RMSNorm** (Zhang & Sennrich 2019) drops the centring and the bias: it only divides by the root
mean square, ``y = x / sqrt(mean(x²) + ε) · γ``. One statistic instead of two, no ``β``, and in
their experiments the same quality; Llama, Mistral, Qwen and Gemma all use it. Like Llama's
reference code, :class:`RMSNorm` computes in float32 whatever the input's type, and returns the
input's type.

:func:`make_norm` builds either from its name (``"layer"`` or ``"rms"``), for blocks whose norm is
a config option. Shape legend: ``b`` batch, ``t`` length, ``e`` embedding.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

NORM_KINDS = ("layer", "rms")  # nn.LayerNorm (GPT-2, BERT), RMSNorm (Llama and most open models since)


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learned gain: ``x / sqrt(mean(x²) + eps) · weight``.

    x: ``(..., e)`` -> ``(..., e)``; the mean runs over the last dimension only. ``weight`` ``(e,)``
    starts at ones. Equal to ``torch.nn.RMSNorm(e, eps)`` (PyTorch >= 2.4), written out.
    """

    def __init__(self, emb: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(emb))  # (e,): the gain γ

    def extra_repr(self) -> str:
        return f"{self.weight.numel()}, eps={self.eps:g}"

    def forward(self, x: Tensor) -> Tensor:
        x32 = x.float()  # (..., e): the mean of squares in float32, as Llama's code does
        rms = torch.sqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return (x32 / rms).to(x.dtype) * self.weight  # (..., e)


def make_norm(kind: str, emb: int, eps: float = 1e-5) -> nn.Module:
    """A norm over ``e`` by name: ``"layer"`` (``nn.LayerNorm``, with a bias) or ``"rms"`` (no bias)."""
    if kind == "layer":
        return nn.LayerNorm(emb, eps=eps)
    if kind == "rms":
        return RMSNorm(emb, eps=eps)
    raise ValueError(f"norm kind must be one of {', '.join(map(repr, NORM_KINDS))}; got {kind!r}.")


__all__ = ["NORM_KINDS", "RMSNorm", "make_norm"]
