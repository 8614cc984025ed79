"""The attention pictures draw what they are given, and refuse shapes that do not fit the tokens."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from fromscratch.attention import SelfAttention
from fromscratch.viz import attention_grid, attention_heatmap, bertviz_view, scaling_plot

TOKENS = ["mary", "gave", "roses", "to", "susan"]


def test_heatmap_shows_the_weights_with_token_labels():
    weights = torch.softmax(torch.randn(1, 5, 5), dim=-1)
    ax = attention_heatmap(weights, TOKENS)
    np.testing.assert_allclose(ax.images[0].get_array(), weights[0].numpy(), rtol=1e-6)
    assert [label.get_text() for label in ax.get_xticklabels()] == TOKENS
    assert len(ax.texts) == 25  # small matrices carry their values
    plt.close("all")


def test_heatmap_cross_attention_and_wrong_shape():
    ax = attention_heatmap(torch.full((2, 3), 1 / 3), ["die", "Katze"], ["the", "cat", "danced"])
    assert ax.images[0].get_array().shape == (2, 3)
    with pytest.raises(ValueError, match=r"\(tq, tk\) = \(2, 2\)"):
        attention_heatmap(torch.ones(2, 3), ["die", "Katze"])
    plt.close("all")


def test_grid_has_one_panel_per_head():
    weights = []
    SelfAttention(8, 4)(torch.randn(2, 5, 8), attention=weights)
    (weights,) = weights
    fig = attention_grid(weights, TOKENS, example=1, ncols=3)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 4
    np.testing.assert_allclose(panels[3].images[0].get_array(), weights[1, 3].detach().numpy(), rtol=1e-6)
    plt.close("all")


def test_scaling_plot_draws_every_line():
    fig = scaling_plot(
        [2, 4, 8], {"std": {"a": [1, 2, 3], "b": [1, 1, 1]}, "max": {"a": [3, 2, 1]}}, logy=("std",)
    )
    assert [len(ax.lines) for ax in fig.axes] == [2, 1]
    assert [ax.get_title() for ax in fig.axes] == ["std", "max"]
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "linear"]
    assert list(fig.axes[0].lines[0].get_xdata()) == [2, 4, 8] and list(fig.axes[0].lines[0].get_ydata()) == [
        1,
        2,
        3,
    ]
    with pytest.raises(ValueError, match="3 dims"):
        scaling_plot([2, 4, 8], {"std": {"a": [1, 2]}})
    plt.close("all")


def test_bertviz_view_from_weights_and_from_a_module():
    pytest.importorskip("bertviz")
    attention = SelfAttention(8, 2)
    x = torch.randn(1, 5, 8)
    weights = []
    attention(x, attention=weights)
    (weights,) = weights
    for view in (
        bertviz_view([weights, weights], TOKENS),
        bertviz_view(attention, TOKENS, "model", inputs=x),
    ):
        assert "susan" in view.data
        # the view loads require.js before its script uses it, so it also renders on a page without it
        assert view.data.index("require.min.js") < view.data.index("require.config(")
    with pytest.raises(ValueError, match="one label per position"):
        bertviz_view(weights, TOKENS[:3])
