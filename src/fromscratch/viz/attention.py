"""Pictures of attention (chapters 02-04, used again in 06-07).

- ``attention_heatmap``: one ``(tq, tk)`` weight matrix as a labelled heatmap (the canonical view);
- ``attention_grid``: every head of one layer side by side;
- ``scaling_plot``: chapter 03's curves of what the softmax sees as the head width ``d`` grows;
- ``bertviz_view``: our models' attention in bertviz's interactive head / model views.

Heatmaps read queries down the rows and keys along the columns, the layout of the weight matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.viz.style import HEATMAP_CMAP

__all__ = ["attention_heatmap", "attention_grid", "scaling_plot", "bertviz_view"]

ANNOTATE_UP_TO = 12  # write the weights into the cells when both sides have at most this many tokens


def _as_numpy(weights) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    return np.asarray(weights, dtype=float)


def attention_heatmap(weights, query_tokens: Sequence[str], key_tokens: Sequence[str] | None = None, ax=None, *,
                      title: str | None = None, vmax: float | None = 1.0, annotate: bool | None = None,
                      colorbar: bool = True):
    """Draw one attention matrix as a heatmap (chapters 02-04): row ``i`` shows query ``i``'s weights.

    weights: ``(tq, tk)`` (a tensor or array; leading dims of size 1 are dropped); query_tokens:
    ``tq`` labels; key_tokens: ``tk`` labels (default: the query tokens, as in self-attention).
    ``vmax=1`` fixes the colour scale so heads and layers compare; ``None`` uses the largest weight.
    Cells carry their values when the matrix is small. Returns the matplotlib ``Axes``.
    """
    w = _as_numpy(weights)
    while w.ndim > 2 and w.shape[0] == 1:
        w = w[0]
    key_tokens = list(query_tokens if key_tokens is None else key_tokens)
    if w.ndim != 2 or w.shape != (len(query_tokens), len(key_tokens)):
        raise ValueError(f"weights must have shape (tq, tk) = ({len(query_tokens)}, {len(key_tokens)}) to match the "
                         f"tokens, got {tuple(w.shape)}; pick one head and example, e.g. weights[0, head].")
    if ax is None:
        size = max(2.5, 0.45 * max(w.shape) + 1.5)
        _, ax = plt.subplots(figsize=(size + (1 if colorbar else 0), size))
    top = vmax if vmax is not None else max(float(w.max()), 1e-12)
    image = ax.imshow(w, cmap=HEATMAP_CMAP, vmin=0.0, vmax=top, aspect="equal")
    ax.grid(False)
    ax.set_xticks(range(len(key_tokens)), key_tokens, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(query_tokens)), list(query_tokens))
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.tick_params(length=0)
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = max(w.shape) <= ANNOTATE_UP_TO
    if annotate:
        for (i, j), value in np.ndenumerate(w):
            # viridis is dark at the bottom of its scale and light at the top
            colour = "black" if value > 0.6 * top else "white"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def attention_grid(weights, tokens: Sequence[str], key_tokens: Sequence[str] | None = None, *, example: int = 0,
                   ncols: int = 4, title: str | None = None, vmax: float | None = 1.0):
    """All heads of one layer side by side (chapter 04), one shared colour scale.

    weights: ``(h, tq, tk)`` or ``(b, h, tq, tk)`` (then batch element ``example`` is shown).
    Returns the matplotlib ``Figure``.
    """
    w = _as_numpy(weights)
    if w.ndim == 4:
        w = w[example]
    if w.ndim != 3:
        raise ValueError(f"weights must have shape (h, tq, tk) or (b, h, tq, tk), got {tuple(w.shape)}.")
    heads = w.shape[0]
    ncols = min(ncols, heads)
    nrows = -(-heads // ncols)
    side = max(2.2, 0.4 * max(w.shape[1:]) + 1.2)
    fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols + 0.8, side * nrows + 0.3), squeeze=False,
                             constrained_layout=True)
    top = vmax if vmax is not None else float(w.max())
    for head, ax in enumerate(axes.flat):
        if head >= heads:
            ax.axis("off")
            continue
        attention_heatmap(w[head], tokens, key_tokens, ax=ax, title=f"head {head}", vmax=top,
                          annotate=False, colorbar=False)
        if head % ncols:
            ax.set_ylabel("")  # label the outer axes only
        if head < heads - ncols:
            ax.set_xlabel("")
    image = axes.flat[0].images[0]
    fig.colorbar(image, ax=axes, shrink=0.8)
    if title:
        fig.suptitle(title)
    return fig


def scaling_plot(dims: Sequence[int], curves: Mapping[str, Mapping[str, Sequence[float]]], *, logy=(),
                 xlabel: str = "head width d"):
    """Chapter 03: one panel per quantity (the mapping's keys), one line per variant, against ``d``.

    curves: ``{"quantity": {"unscaled": [...], "scaled by 1/sqrt(d)": [...]}, ...}``, each list as
    long as ``dims``. Quantities named in ``logy`` get a log y-axis. Returns the ``Figure``.
    """
    fig, axes = plt.subplots(1, len(curves), figsize=(max(6.0, 4.2 * len(curves)), 3.6), squeeze=False,
                             constrained_layout=True)
    for ax, (quantity, lines) in zip(axes[0], curves.items()):
        for label, values in lines.items():
            if len(values) != len(dims):
                raise ValueError(f"{quantity!r}/{label!r} has {len(values)} values for {len(dims)} dims.")
            ax.plot(dims, values, marker="o", label=label)
        ax.set_xscale("log", base=2)
        if quantity in logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_title(quantity)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize="small")
    return fig


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
            raise ValueError(f"layer {n}: expected attention (b, h, t, t) or (h, t, t), got {tuple(layer.shape)}.")
        layers.append(layer[example:example + 1])  # (1, h, t, t)
    return layers


def bertviz_view(model_or_weights, tokens: Sequence[str], kind: str = "head", *, inputs=None, example: int = 0,
                 **options):
    """Our attention in bertviz's interactive views (chapters 04, 06, 07).

    model_or_weights: a list (one per layer) of ``(b, h, t, t)`` tensors, one such tensor, or a
    model; a model is called as ``model(inputs, return_attention=True)`` and must return
    ``(output, attention)`` with ``attention`` one tensor or a list per layer. Batch element
    ``example`` is shown. tokens: ``t`` labels. kind: ``"head"`` (bertviz ``head_view``) or
    ``"model"`` (``model_view``, every head of every layer). Extra options go to bertviz.

    Returns an ``IPython.display.HTML`` object: the last expression of a cell renders it, in
    Jupyter and in the built book alike. The HTML loads require.js itself before using it (a
    second copy, such as the one the book's ``_config.yml`` puts on every page, is a no-op),
    and fetches d3 and jQuery online.
    """
    try:
        from bertviz import head_view, model_view
    except ImportError as error:  # optional dependency (pip install fromscratch[viz])
        raise ImportError("bertviz_view needs bertviz: pip install bertviz (or pip install 'fromscratch[viz]'); "
                          "attention_heatmap draws the same weights without it.") from error
    if kind not in ("head", "model"):
        raise ValueError(f"kind must be 'head' or 'model', got {kind!r}.")
    attention = model_or_weights
    if isinstance(model_or_weights, torch.nn.Module):
        if inputs is None:
            raise ValueError("pass inputs=... (what the model takes) to draw a model's attention.")
        with torch.no_grad():
            _, attention = model_or_weights(inputs, return_attention=True)
    layers = _per_layer(attention, example)
    t = layers[0].shape[-1]
    if len(tokens) != t:
        raise ValueError(f"got {len(tokens)} tokens for attention over t={t} positions; pass one label per position.")
    tokens = list(tokens)
    if kind == "head":
        return head_view(layers, tokens, html_action="return", **options)
    options.setdefault("display_mode", "light")
    return model_view(layers, tokens, html_action="return", **options)
