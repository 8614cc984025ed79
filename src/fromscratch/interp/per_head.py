"""One attention head at a time: record, patch and ablate each head's output (chapter 18).

Every attention layer of the course ends in ``unify_heads``, a linear layer that takes the heads' outputs
side by side, ``(b, t, h · s)``, and mixes them into the residual stream. Cut that input into its heads,
``z (b, t, h, s)`` (TransformerLens's ``hook_z``), and one head can be read or rewritten alone: a forward
*pre*-hook on ``unify_heads`` does it, for the blog's :class:`~fromscratch.attention.SelfAttention` and the
Llama's grouped-query attention alike. A layer is named by its attention module, ``blocks.1.attention``.

- :func:`record_heads` keeps ``z`` while it is open;
- :func:`patch_heads` replaces ``z`` by ``fn(z)`` (activation patching of single heads);
- :func:`ablate_heads` zeroes the heads listed (a zero-ablation: the head adds nothing, ``unify_heads``'s
  bias stays).

Shape legend: ``b`` batch, ``t`` length, ``h`` heads, ``s`` a head's width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from torch import Tensor, nn

from fromscratch.interp.hooks import module_named

__all__ = ["ablate_heads", "patch_heads", "record_heads"]


def _layer(model: nn.Module, name: str) -> tuple[nn.Module, int]:
    """The ``unify_heads`` of the attention module ``name`` and its number of heads."""
    attention = module_named(model, name)
    heads = getattr(attention, "heads", None)
    if not hasattr(attention, "unify_heads") or heads is None:
        raise ValueError(
            f"{name!r} is a {type(attention).__name__}, not an attention layer with `heads` and "
            "`unify_heads`; name the attention module itself, e.g. 'blocks.0.attention'."
        )
    return attention.unify_heads, heads


@contextmanager
def record_heads(model: nn.Module, names: Iterable[str]) -> Iterator[dict[str, list[Tensor]]]:
    """Record each head's output in the attention layers ``names`` while the block is open.

    Yields ``{name: [z of call 1, ...]}``, each ``z`` detached, ``(b, t, h, s)``::

        with record_heads(model, ["blocks.1.attention"]) as z:
            model(tokens)
        z["blocks.1.attention"][0][:, :, 3]  # (b, t, s): what head 3 of layer 1 wrote, before mixing
    """
    names = [names] if isinstance(names, str) else list(dict.fromkeys(names))
    layers = {name: _layer(model, name) for name in names}  # unknown names fail before any hook
    outputs: dict[str, list[Tensor]] = {name: [] for name in names}

    def keep(name: str, heads: int) -> Callable:
        def hook(module: nn.Module, inputs: tuple):
            x = inputs[0]  # (b, t, h·s)
            outputs[name].append(x.detach().unflatten(-1, (heads, -1)))  # (b, t, h, s)

        return hook

    handles = [unify.register_forward_pre_hook(keep(n, h)) for n, (unify, h) in layers.items()]
    try:
        yield outputs
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def patch_heads(model: nn.Module, fns: dict[str, Callable[[Tensor], Tensor]]) -> Iterator[None]:
    """Replace the heads' outputs ``z (b, t, h, s)`` of each named attention layer by ``fn(z)`` (same
    shape) while the block is open. E.g. head 2 of layer 1 from a clean run's recorded ``clean_z``::

        def put_clean(z):
            z = z.clone(); z[:, :, 2] = clean_z[:, :, 2]; return z

        with patch_heads(model, {"blocks.1.attention": put_clean}): ...
    """
    layers = {name: _layer(model, name) for name in fns}

    def replace(name: str, heads: int, fn: Callable) -> Callable:
        def hook(module: nn.Module, inputs: tuple):
            x = inputs[0]  # (b, t, h·s)
            z = x.unflatten(-1, (heads, -1))  # (b, t, h, s)
            new = fn(z)
            if not isinstance(new, Tensor) or new.shape != z.shape:
                got = tuple(new.shape) if isinstance(new, Tensor) else type(new).__name__
                raise ValueError(
                    f"patch_heads: the function for {name!r} must return z's shape {tuple(z.shape)} "
                    f"(b, t, h, s); got {got}."
                )
            return (new.flatten(-2), *inputs[1:])  # (b, t, h·s)

        return hook

    handles = [
        unify.register_forward_pre_hook(replace(name, heads, fns[name]))
        for name, (unify, heads) in layers.items()
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def ablate_heads(model: nn.Module, heads: dict[str, Iterable[int]]):
    """A context manager that zeroes the listed heads: ``{"blocks.1.attention": [0, 3]}``."""
    for name, listed in heads.items():
        _, count = _layer(model, name)
        wrong = [j for j in listed if not 0 <= j < count]
        if wrong:
            raise ValueError(f"{name!r} has heads 0..{count - 1}; got {wrong}.")

    def zeroer(listed: list[int]) -> Callable[[Tensor], Tensor]:
        def fn(z: Tensor) -> Tensor:
            z = z.clone()
            z[:, :, listed] = 0.0  # (b, t, h, s): those heads write nothing
            return z

        return fn

    return patch_heads(model, {name: zeroer(list(listed)) for name, listed in heads.items()})
