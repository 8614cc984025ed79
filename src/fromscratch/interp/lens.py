"""Where a language model's blocks are, and the logit lens: a residual stream read as next-token logits.

The course's decoders name their parts alike: a list of blocks (``blocks`` in GPT-2, the Llama and
chapter 11's generator; ``stack.blocks`` in chapter 07's :class:`~fromscratch.models.Generator`;
``layers`` in Transformer-XL), a final norm (``final_norm``, ``stack.final_norm``) and an output
layer ``to_logits``. The **logit lens** (nostalgebraist 2020) sends the residual stream after any
block through the final norm and the output layer, as if the model stopped there (chapter 18).

Shape legend: ``b`` batch, ``t`` length, ``e`` embedding, ``V`` vocabulary.
"""

from __future__ import annotations

from torch import Tensor, nn

from fromscratch.interp.hooks import module_named

__all__ = ["block_names", "unembed"]

_BLOCKS = ("blocks", "stack.blocks", "layers")  # where each family keeps its blocks
_FINAL_NORMS = ("final_norm", "stack.final_norm")


def _first(model: nn.Module, names: tuple[str, ...], what: str) -> tuple[str, nn.Module]:
    modules = dict(model.named_modules())
    for name in names:
        if name in modules:
            return name, modules[name]
    raise ValueError(
        f"{type(model).__name__} has no {what} under any of the names {', '.join(names)}; "
        "name the module yourself (model.named_modules() lists them)."
    )


def block_names(model: nn.Module) -> list[str]:
    """The names of ``model``'s blocks in order, for :func:`~fromscratch.interp.record` and
    :func:`~fromscratch.interp.patch`: ``["blocks.0", "blocks.1", ...]`` (``stack.blocks.0``, ...)."""
    prefix, blocks = _first(model, _BLOCKS, "list of blocks")
    return [f"{prefix}.{i}" for i in range(len(blocks))]


def unembed(model: nn.Module, x: Tensor) -> Tensor:
    """The residual stream ``x (b, t, e)`` through ``model``'s final norm and output layer: logits
    ``(b, t, V)``. On the last block's output these are the model's logits; on an earlier block's,
    the logit lens."""
    _, final_norm = _first(model, _FINAL_NORMS, "final norm")
    return module_named(model, "to_logits")(final_norm(x))  # (b, t, V)
