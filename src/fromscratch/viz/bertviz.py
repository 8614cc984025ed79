"""bertviz's interactive attention views for our models (chapters 04, 06, 07): ``(b, h, t, t)`` per layer."""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["bertviz_view"]


def _per_layer(attention, example: int) -> list[torch.Tensor]:
    """Normalise to a list (one per layer) of ``(1, h, t, t)`` CPU float tensors."""
    if isinstance(attention, torch.Tensor):
        attention = [attention]
    layers = []
    for n, layer in enumerate(attention):
        layer = torch.as_tensor(layer).detach().float().cpu()
        if layer.dim() == 3:
            layer = layer[None]  # (1, h, t, t)
        if layer.dim() != 4 or layer.shape[-1] != layer.shape[-2]:
            raise ValueError(
                f"layer {n}: expected attention (b, h, t, t) or (h, t, t), got {tuple(layer.shape)}."
            )
        layers.append(layer[example : example + 1])  # (1, h, t, t)
    return layers


def bertviz_view(
    model_or_weights, tokens: Sequence[str], kind: str = "head", *, inputs=None, example: int = 0, **options
):
    """Our attention in bertviz's interactive views (chapters 04, 06, 07).

    model_or_weights: a list (one per layer) of ``(b, h, t, t)`` tensors, one such tensor, or a
    model; a model is called as ``model(inputs, attention=weights)`` and appends one tensor per
    layer to the list ``weights``. Batch element
    ``example`` is shown. tokens: ``t`` labels. kind: ``"head"`` (bertviz ``head_view``) or
    ``"model"`` (``model_view``, every head of every layer). Extra options go to bertviz.

    Returns an ``IPython.display.HTML`` object: the last expression of a cell renders it, in
    Jupyter and in the built book alike. The HTML loads require.js itself before using it (a
    second copy, such as the one the book's ``_config.yml`` puts on every page, is a no-op),
    and fetches d3 and jQuery online.
    """
    try:
        from bertviz import head_view, model_view
    except (
        ImportError
    ) as error:  # a dependency of fromscratch, imported here only because it is slow to import
        raise ImportError(
            "bertviz_view needs bertviz, a dependency of fromscratch: reinstall the package "
            "(pip install bertviz); attention_heatmap draws the same weights without it."
        ) from error
    if kind not in ("head", "model"):
        raise ValueError(f"kind must be 'head' or 'model', got {kind!r}.")
    attention = model_or_weights
    if isinstance(model_or_weights, torch.nn.Module):
        if inputs is None:
            raise ValueError("pass inputs=... (what the model takes) to draw a model's attention.")
        attention = []
        with torch.no_grad():
            model_or_weights(inputs, attention=attention)
    layers = _per_layer(attention, example)
    t = layers[0].shape[-1]
    if len(tokens) != t:
        raise ValueError(
            f"got {len(tokens)} tokens for attention over t={t} positions; pass one label per position."
        )
    tokens = list(tokens)
    if kind == "head":
        return head_view(layers, tokens, html_action="return", **options)
    options.setdefault("display_mode", "light")
    return model_view(layers, tokens, html_action="return", **options)
