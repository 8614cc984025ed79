"""The interactive figures several chapters share, each precomputed for every setting of its sliders
with :func:`~fromscratch.viz.precomputed.frames`, so they respond in the book, the decks and a
notebook.

- ``attention_frames``: attention heatmaps per layer and head (chapters 06, 09, 14).

A chapter's own explorers live in its folder (chapter 01's ``taste_frames``, chapter 07's
``distribution_bars``, ...). Each takes what the chapter computed; nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fromscratch.viz.attention import attention_heatmap
from fromscratch.viz.precomputed import Frames, frames

__all__ = ["attention_frames"]


def attention_frames(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    example: int = 0,
    mean: bool = True,
    layer_name: str = "layer",
    title: str = "",
    annotate: bool | None = None,
    vmax: float | None = None,
) -> Frames:
    """Attention heatmaps with a slider for the layer and one for the head (chapters 06, 09, 14).

    weights: a list with one ``(b, h, tq, tk)`` (or ``(h, tq, tk)``) tensor per layer, as models fill
    it (``model(x, attention=weights)``), or one such tensor; batch element ``example`` is shown.
    mean=True adds "mean" to the heads: their average. Every frame shares one colour scale, from 0 to
    ``vmax`` (default: the largest weight of any layer and head), so layers and heads compare and a
    spread-out pattern still shows. The layer slider is left out when there is one layer.
    """
    layers = [weights] if isinstance(weights, torch.Tensor) else list(weights)
    layers = [torch.as_tensor(w).detach().float().cpu() for w in layers]
    layers = [w[example] if w.dim() == 4 else w for w in layers]  # (h, tq, tk) each
    if any(w.dim() != 3 for w in layers):
        shapes = [tuple(w.shape) for w in layers]
        raise ValueError(f"each layer's weights must be (b, h, tq, tk) or (h, tq, tk), got {shapes}.")
    heads = layers[0].shape[0]
    top = vmax if vmax is not None else max(float(w.max()) for w in layers)
    choices: dict[str, object] = {str(n): n for n in range(heads)}
    if mean and heads > 1:
        choices["mean"] = "mean"

    def draw(head, **where):
        layer = where.get(layer_name, 0)
        w = layers[layer].mean(0) if head == "mean" else layers[layer][head]  # (tq, tk)
        where = f"{layer_name} {layer}, " if len(layers) > 1 else ""
        heading = f"{title}: " if title else ""
        return attention_heatmap(
            w, query_tokens, key_tokens, title=f"{heading}{where}head {head}", annotate=annotate, vmax=top
        )

    if len(layers) == 1:
        return frames(draw, head=choices)
    return frames(draw, **{layer_name: range(len(layers))}, head=choices)
