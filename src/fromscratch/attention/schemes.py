"""Position schemes by name: one registry that every model offering positions builds from (ch. 05, 11, 14).

A scheme enters a transformer in one (or none) of three ways, and :class:`Scheme` says which:

- ``added``: a module with ``positions(t) -> (t, e)``, vectors added to the token embeddings
  (chapter 05: ``"learned"``, ``"sinusoidal"``);
- ``rotary``: a module that rotates queries and keys in every layer (chapter 11: ``"rope"``);
- ``bias``: a module with ``bias(tq, tk) -> (h, tq, tk)``, added to every layer's scores (chapter 11:
  ``"alibi"``, ``"t5"``).

``"none"`` adds nothing (NoPE: a causal model can still tell positions apart by what it may attend to).
A new scheme is one module and one line in :data:`SCHEMES`; :func:`position_parts` builds it for
``TransformerStack`` (the classifier and the generator) and ``Llama``; ``EncoderDecoder`` takes the added
kind. The names are the ``positions=`` of their configs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import nn

from fromscratch.attention.positions import ALiBi, PositionEmbedding, PositionEncoding, RotaryEmbedding
from fromscratch.attention.relative_bias import RelativeBias


@dataclass(frozen=True)
class Scheme:
    """How one scheme enters a transformer (each field a factory, or None)."""

    added: Callable[[int, int], nn.Module] | None = None  # (max_len, e) -> .positions(t): (t, e)
    rotary: Callable[[int, float], nn.Module] | None = None  # (head width, base) -> rotates q and k
    bias: Callable[[int], nn.Module] | None = None  # heads -> bias(tq, tk): (h, tq, tk)


SCHEMES: dict[str, Scheme] = {
    "learned": Scheme(added=PositionEmbedding),  # chapter 05: one trained vector per position
    "sinusoidal": Scheme(added=PositionEncoding),  # chapter 05: Vaswani et al.'s fixed clocks
    "rope": Scheme(rotary=lambda head_dim, base: RotaryEmbedding(head_dim, base=base)),  # chapter 11
    "alibi": Scheme(bias=ALiBi),  # chapter 11: a fixed penalty growing with distance
    "t5": Scheme(bias=RelativeBias),  # chapter 11: a learned bias per bucket of distance
    "none": Scheme(),  # NoPE: nothing at all
}


@dataclass
class PositionParts:
    """The modules a model holds for its scheme (None where the scheme has no such part)."""

    added: nn.Module | None
    rotary: nn.Module | None
    bias: nn.Module | None


def position_parts(
    name: str | None,
    *,
    max_len: int,
    emb: int,
    heads: int,
    head_dim: int,
    base: float = 10_000.0,
    kinds: tuple[str, ...] = ("added", "rotary", "bias"),
) -> PositionParts:
    """The parts of scheme ``name`` (None means ``"none"``) for a model of these sizes; ``kinds``: the
    ways the model can take positions in (a clear error for a scheme it cannot)."""
    scheme = SCHEMES.get("none" if name is None else name)
    if scheme is None:
        raise ValueError(f"positions must be one of {', '.join(map(repr, SCHEMES))}; got {name!r}.")
    missing = [k for k in ("added", "rotary", "bias") if getattr(scheme, k) is not None and k not in kinds]
    if missing:
        usable = [n for n, s in SCHEMES.items() if all(getattr(s, k) is None for k in missing)]
        raise ValueError(
            f"positions={name!r} acts through {missing[0]}, which this model does not take; "
            f"use one of {', '.join(map(repr, usable))}."
        )
    return PositionParts(
        added=scheme.added(max_len, emb) if scheme.added else None,
        rotary=scheme.rotary(head_dim, base) if scheme.rotary else None,
        bias=scheme.bias(heads) if scheme.bias else None,
    )


__all__ = ["SCHEMES", "PositionParts", "Scheme", "position_parts"]
