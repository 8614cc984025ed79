"""LoRA: fine-tune a big model by training two thin matrices beside each chosen weight (chapter 15).

Hu et al. (2021), "LoRA: Low-Rank Adaptation of Large Language Models". A linear layer ``y = x Wᵀ + b``
with ``W`` of shape ``(out, in)`` keeps ``W`` **frozen** and learns a low-rank change to it:

    y = x Wᵀ + b + (α / r) · x Aᵀ Bᵀ,    A: (r, in),  B: (out, r),  r ≪ min(in, out)

so the layer behaves as if its weight were ``W + (α/r) · B A``. ``A`` starts random (Kaiming-uniform,
as ``peft`` does) and ``B`` at **zero**, so at the start the product is zero and the model is exactly
the pretrained one; training moves ``B`` first, then both. ``r · (in + out)`` numbers are trained
instead of ``in · out``: for SmolLM2's query projection (576 x 576) at ``r = 8``, 9,216 instead of
331,776. After training the change can be **merged** into ``W`` (:meth:`LoRALinear.merged`), and the
model is as fast as before, with nothing extra at inference.

:func:`add_lora` freezes every weight of a model and wraps the linear layers whose attribute name is in
``targets`` (our Llama's ``to_queries``, ``to_keys``, ``to_values``, ``unify_heads``, ``gate``, ``up``,
``down``); :func:`merge_lora` replaces each wrapper by its merged ``nn.Linear``. Shape legend: ``...``
any leading dimensions, ``in``/``out`` the layer's widths, ``r`` the rank.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank change ``(α/r) · B A`` (chapter 15)."""

    def __init__(self, base: nn.Linear, *, rank: int, alpha: float, generator: torch.Generator | None = None):
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise ValueError(f"LoRA wraps an nn.Linear, got {type(base).__name__}.")
        if rank < 1 or rank > min(base.in_features, base.out_features):
            raise ValueError(
                f"rank must lie between 1 and min(in, out) = {min(base.in_features, base.out_features)}, "
                f"got {rank}."
            )
        self.base = base.requires_grad_(False)  # W (out, in) and b: frozen
        self.rank, self.alpha, self.scale = rank, alpha, alpha / rank
        weight = base.weight
        self.A = nn.Parameter(torch.empty(rank, base.in_features, device=weight.device, dtype=weight.dtype))
        self.B = nn.Parameter(torch.zeros(base.out_features, rank, device=weight.device, dtype=weight.dtype))
        # kaiming_uniform_(A, a=sqrt(5)), as peft and nn.Linear do; the LoRA paper draws A from a Gaussian
        bound = 1 / math.sqrt(base.in_features)
        with torch.no_grad():
            self.A.uniform_(-bound, bound, generator=generator)

    def extra_repr(self) -> str:
        base = self.base
        return f"in={base.in_features}, out={base.out_features}, rank={self.rank}, alpha={self.alpha:g}"

    def forward(self, x: Tensor) -> Tensor:
        """x: ``(..., in)`` -> ``(..., out)``: the frozen layer plus ``(α/r) · (x Aᵀ) Bᵀ``."""
        down = x @ self.A.T  # (..., r): through the narrow middle
        return self.base(x) + (down @ self.B.T) * self.scale  # (..., out)

    def delta(self) -> Tensor:
        """The change to the weight, ``(α/r) · B A``: ``(out, in)``."""
        return (self.B @ self.A) * self.scale  # (out, in)

    def merged(self) -> nn.Linear:
        """A plain ``nn.Linear`` with weight ``W + (α/r) · B A`` (and the same bias): the same function."""
        layer = copy.deepcopy(self.base).requires_grad_(True)  # no fresh random init: the RNG is left alone
        with torch.no_grad():
            layer.weight.add_(self.delta())
        return layer


def _named_linears(model: nn.Module, targets: Sequence[str]) -> list[tuple[nn.Module, str, nn.Linear]]:
    """``(parent, attribute, layer)`` of every ``nn.Linear`` whose attribute name is in ``targets``."""
    found = []
    for parent in model.modules():
        for name, child in parent.named_children():
            if name in targets and isinstance(child, nn.Linear):
                found.append((parent, name, child))
    return found


def add_lora(
    model: nn.Module, *, targets: Sequence[str], rank: int, alpha: float, seed: int = 0
) -> list[str]:
    """Freeze every weight of ``model`` and wrap each ``nn.Linear`` named in ``targets`` in a
    :class:`LoRALinear` (in place). ``A`` is drawn from a generator seeded with ``seed`` (the global
    random state is left alone). Returns the wrapped layers' names, e.g. ``blocks.0.attention.to_queries``."""
    if isinstance(targets, str):
        raise ValueError(
            f'targets is a list of layer names, e.g. ["to_queries", "to_values"]; got the string {targets!r}.'
        )
    found = _named_linears(model, targets)
    if not found:
        raise ValueError(f"No nn.Linear of the model is called {', '.join(targets)}; name layers it has.")
    model.requires_grad_(False)
    generator = torch.Generator(device=found[0][2].weight.device).manual_seed(seed)
    names = {id(layer): name for name, layer in model.named_modules()}
    wrapped = []
    for parent, attribute, layer in found:
        wrapped.append(names[id(layer)])
        setattr(parent, attribute, LoRALinear(layer, rank=rank, alpha=alpha, generator=generator))
    return wrapped


def lora_layers(model: nn.Module) -> dict[str, LoRALinear]:
    """Every :class:`LoRALinear` of ``model``, by name."""
    return {name: m for name, m in model.named_modules() if isinstance(m, LoRALinear)}


def merge_lora(model: nn.Module) -> nn.Module:
    """Replace every :class:`LoRALinear` of ``model`` by its merged ``nn.Linear`` (in place); returns it."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, LoRALinear):
                setattr(parent, name, child.merged())
    return model


def trainable_share(model: nn.Module) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts (a tied matrix counted once)."""
    total = sum(p.numel() for p in model.parameters())
    return sum(p.numel() for p in model.parameters() if p.requires_grad), total


__all__ = ["LoRALinear", "add_lora", "lora_layers", "merge_lora", "trainable_share"]
