"""Reading and rewriting what a model's modules compute, by PyTorch forward hooks (chapter 18).

A module is named as ``model.named_modules()`` names it: ``blocks.1`` (a block's output, the residual
stream after it), ``blocks.1.attention`` (what attention adds to it), ``blocks.1.attention.unify_heads``,
``stack.blocks.0`` in the models built on :class:`~fromscratch.blocks.TransformerStack`.

- :func:`record` keeps what the named modules produce while it is open;
- :func:`patch` replaces a module's output by ``fn(output)``: zero- or mean-ablation, activation
  patching (the output of a clean run put into a corrupted one), steering (a direction added).

Both remove their hooks when the block ends, also when the forward pass raises. Opened inside each
other they act in the order they were opened: ``with patch(...): with record(...)`` records the
patched output of a module both name.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from torch import Tensor, nn

__all__ = ["module_named", "patch", "record"]


def module_named(model: nn.Module, name: str) -> nn.Module:
    """The submodule of ``model`` called ``name`` (``"blocks.1.attention"``); an unknown name raises a
    ``ValueError`` that lists the closest names ``model.named_modules()`` knows."""
    modules = dict(model.named_modules())
    if name in modules:
        return modules[name]
    close = difflib.get_close_matches(name, [n for n in modules if n], n=5, cutoff=0.5)
    hint = (
        f"Close names: {', '.join(close)}."
        if close
        else "Names look like: " + ", ".join(n for n in list(modules)[1:6])
    )
    raise ValueError(
        f"{type(model).__name__} has no module named {name!r}. {hint} "
        "(Every name: [n for n, _ in model.named_modules()].)"
    )


def _detached(output):
    """``output`` cut from the autograd graph: a tensor, or a tuple/list of them (others as they are)."""
    if isinstance(output, Tensor):
        return output.detach()
    if isinstance(output, (tuple, list)):
        return type(output)(_detached(o) for o in output)
    return output


@contextmanager
def record(model: nn.Module, names: Iterable[str], *, detach: bool = True) -> Iterator[dict[str, list]]:
    """Record what the modules ``names`` produce while the block is open.

    Yields ``{name: [output of call 1, output of call 2, ...]}``, one entry per call (a forward pass
    calls each block once; generating with a KV cache, once per step), e.g. ``(b, t, e)`` tensors
    for ``blocks.i`` (a block under chapter 12's activation checkpointing runs, and is recorded, again
    in the backward pass). ``detach=True`` cuts them from the graph (no memory held for a backward pass);
    ``detach=False`` keeps it (a probe's gradient through the model)::

        with record(model, ["blocks.0", "blocks.1"]) as acts:
            model(tokens)
        acts["blocks.1"][0].shape  # (b, t, e): the residual stream after block 1
    """
    names = [names] if isinstance(names, str) else list(dict.fromkeys(names))  # one name, or each once
    modules = {name: module_named(model, name) for name in names}  # unknown names fail before any hook
    outputs: dict[str, list] = {name: [] for name in names}

    def keep(name: str) -> Callable:
        def hook(module: nn.Module, inputs: tuple, output):
            outputs[name].append(_detached(output) if detach else output)

        return hook

    handles = [module.register_forward_hook(keep(name)) for name, module in modules.items()]
    try:
        yield outputs
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def patch(model: nn.Module, fns: dict[str, Callable]) -> Iterator[None]:
    """Replace each named module's output by ``fn(output)`` while the block is open.

    ``fns``: ``{name: fn}``; ``fn`` gets the module's output (a ``(b, t, e)`` tensor for a block or an
    attention layer) and returns what the next layers get instead, of the same shape. E.g. zero-ablate
    block 1's attention: ``patch(model, {"blocks.1.attention": torch.zeros_like})``; patch in a clean
    run's block output: ``patch(model, {"blocks.1": lambda out: clean})``.
    """
    modules = {name: module_named(model, name) for name in fns}

    def replace(name: str, fn: Callable) -> Callable:
        def hook(module: nn.Module, inputs: tuple, output):
            new = fn(output)
            if new is None:
                raise ValueError(
                    f"patch: the function for {name!r} returned None; it must return the new output "
                    "(write `return out` after changing it in place)."
                )
            if isinstance(output, Tensor) and (not isinstance(new, Tensor) or new.shape != output.shape):
                got = tuple(new.shape) if isinstance(new, Tensor) else type(new).__name__
                raise ValueError(
                    f"patch: the function for {name!r} must return a tensor shaped like the output "
                    f"{tuple(output.shape)}; got {got}."
                )
            return new

        return hook

    handles = [module.register_forward_hook(replace(name, fns[name])) for name, module in modules.items()]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
