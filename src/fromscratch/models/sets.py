"""Models of sets (chapter 13): DeepSets, and the same with transformer blocks, a set transformer.

A set has no order, so a model of sets should not care about one. Two ways to get there:

- **DeepSets** (Zaheer et al. 2017): encode every element on its own with one MLP ``φ``, average
  the codes, and read the answer from the average with a second MLP ``ρ``:
  ``ρ(mean_i φ(x_i))``. The mean ignores order, so the model is *permutation invariant*; but the
  elements never see each other before they are averaged.
- **Set transformer**: the same ``φ`` and ``ρ`` with transformer blocks between them, *without*
  position embeddings. Self-attention is permutation *equivariant* (shuffle the inputs and the
  outputs shuffle the same way, chapter 02), so the pooled result is again invariant; but now every
  element is compared with every other one before the average.

``pooling=None`` keeps one output per element (equivariant): node classification on a graph, where
the blocks take the graph as their attention mask (:func:`~fromscratch.attention.masks.graph_mask`).

Shape legend: ``b`` batch of sets, ``n`` elements per set, ``d`` features per element, ``e`` embedding.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.blocks.transformer import TransformerBlock
from fromscratch.models.classifier import mean_over_tokens
from fromscratch.models.config import resolve_config

__all__ = ["SET_POOLINGS", "DeepSets", "SetConfig", "SetTransformer"]

SET_POOLINGS = ("mean", None)


@dataclass(frozen=True)
class SetConfig:
    """Sizes of a :class:`SetTransformer` (and of :class:`DeepSets`, which has ``depth = 0``)."""

    input_dim: int = 784  # d: features per element (a flattened 28 x 28 digit)
    hidden: int = 128  # width of the hidden layers of φ (per element) and ρ (on the pooled vector)
    emb: int = 64  # e: an element's code, and the width of the transformer blocks
    heads: int = 4  # h: attention heads per block
    depth: int = 2  # transformer blocks between φ and the pooling (0: DeepSets, no interaction)
    ff_mult: int = 4  # feed-forward hidden width = ff_mult * e
    norm: str = "pre"  # "pre" or "post" (the blog's block)
    num_classes: int = 10  # logits per set (or per element with pooling=None)
    pooling: str | None = "mean"  # "mean": one answer per set (invariant); None: one per element

    def __post_init__(self) -> None:
        if self.pooling not in SET_POOLINGS:
            raise ValueError(
                f"pooling must be 'mean' (one answer per set) or None (one per element); "
                f"got {self.pooling!r}."
            )


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers of the given sizes with ReLUs between them (none after the last)."""
    layers: list[nn.Module] = []
    for n, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers += [nn.Linear(a, b)] + ([nn.ReLU()] if n < len(sizes) - 2 else [])
    return nn.Sequential(*layers)


class SetTransformer(nn.Module):
    """φ per element -> ``depth`` transformer blocks (no positions) -> mean -> ρ (chapter 13).

    ``SetTransformer(config, **fields)``. x: ``(b, n, d)``. Returns logits ``(b, num_classes)``
    (``pooling="mean"``: the same for any order of the elements), or ``(b, n, num_classes)``
    (``pooling=None``: shuffled as the elements are).
    """

    def __init__(self, config: SetConfig | None = None, **fields) -> None:
        super().__init__()
        self.config = c = resolve_config(SetConfig, config, fields)
        self.phi = mlp([c.input_dim, c.hidden, c.emb])  # each element on its own: (..., d) -> (..., e)
        self.blocks = nn.ModuleList(
            TransformerBlock(c.emb, c.heads, ff_mult=c.ff_mult, norm=c.norm) for _ in range(c.depth)
        )
        self.final_norm = nn.LayerNorm(c.emb) if c.norm == "pre" and c.depth else nn.Identity()
        self.rho = mlp([c.emb, c.hidden, c.num_classes])  # the pooled code (or each element's) -> logits

    def forward(
        self,
        x: Tensor,
        *,
        padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        attention: list[Tensor] | None = None,
    ) -> Tensor:
        """x ``(b, n, d)`` -> logits. ``padding_mask`` bool ``(b, n)`` (True = a real element),
        ``attn_mask`` (True = may attend, e.g. a graph) and ``attention`` (gets one ``(b, h, n, n)``
        tensor per block) go to every block."""
        if x.dim() != 3 or x.size(-1) != self.config.input_dim:
            raise ValueError(
                f"x must be a batch of sets (b, n, d) with d={self.config.input_dim}, got {tuple(x.shape)}; "
                f"flatten each element (e.g. a digit: x.flatten(2)) and add a batch dimension with x[None]."
            )
        h = self.phi(x)  # (b, n, e)
        for block in self.blocks:
            h = block(h, padding_mask=padding_mask, attn_mask=attn_mask, attention=attention)  # (b, n, e)
        h = self.final_norm(h)  # (b, n, e)
        if self.config.pooling == "mean":
            h = mean_over_tokens(h, padding_mask)  # (b, e): the order is gone
        return self.rho(h)  # (b, num_classes) or (b, n, num_classes)


class DeepSets(SetTransformer):
    """DeepSets (Zaheer et al. 2017): ``ρ(mean_i φ(x_i))``, a :class:`SetTransformer` without blocks.

    ``DeepSets(config, **fields)`` takes the same :class:`SetConfig` and ignores its ``depth``: the
    same φ, pooling and ρ, so a comparison with the set transformer changes one thing, the blocks.
    """

    def __init__(self, config: SetConfig | None = None, **fields) -> None:
        super().__init__(config, **{**fields, "depth": 0})
