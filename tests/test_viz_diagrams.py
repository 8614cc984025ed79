"""The architecture diagrams draw what the package computes, fit the book's column and read on a dark page."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from PIL import Image

from fromscratch.attention.masks import causal_mask
from fromscratch.viz import block_diagram, encoder_decoder_diagram, mask_diagram, multi_head_diagram
from fromscratch.viz.style import BOOK_WIDTH

DIAGRAMS = {
    "block post": lambda: block_diagram(),
    "block pre": lambda: block_diagram(norm="pre"),
    "block both": lambda: block_diagram(norm="both"),
    "multi-head": lambda: multi_head_diagram(heads=4),
    "masks": lambda: mask_diagram((6, 4)),
    "encoder-decoder": lambda: encoder_decoder_diagram(layers=6),
}


def texts(fig) -> str:
    return (
        " | ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        + " | "
        + " ".join(ax.get_title() for ax in fig.axes)
    )


@pytest.mark.parametrize("name", DIAGRAMS)
def test_diagram_is_an_opaque_card_within_the_column(name):
    fig = DIAGRAMS[name]()
    assert fig.get_figwidth() <= BOOK_WIDTH + 1e-9
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)  # a white card on the dark theme too
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", facecolor=fig.get_facecolor())
    pixels = np.asarray(Image.open(buffer).convert("RGBA"))
    assert pixels[..., 3].min() == 255, "a transparent pixel would show the page behind it"
    assert (pixels[..., :3].mean(axis=-1) < 100).mean() > 0.002, "no dark ink: text would be invisible"
    plt.close(fig)


def test_block_diagram_orders_the_norms():
    post, pre = texts(block_diagram()), texts(block_diagram(norm="pre"))
    assert post.index("self-attention") < post.index("layer norm")  # post-norm: attention, then norm
    assert pre.index("layer norm") < pre.index("self-attention")  # pre-norm: norm, then attention
    assert post.count("+") == pre.count("+") == 2  # two residual adds
    both = block_diagram(norm="both")
    assert texts(both).count("+") == 4 and both.get_figwidth() == 2 * block_diagram().get_figwidth()
    with pytest.raises(ValueError, match="'post', 'pre' or 'both'"):
        block_diagram(norm="middle")
    plt.close("all")


def test_multi_head_diagram_shows_the_folded_shapes():
    fig = multi_head_diagram(heads=3)
    assert "(b*h, t, s)" in texts(fig) and "h = 3" in texts(fig)
    with pytest.raises(ValueError, match="between 1 and 8"):
        multi_head_diagram(heads=12)
    plt.close("all")


def test_mask_diagram_draws_the_package_masks():
    fig = mask_diagram((6, 4))
    causal, padding, both = (ax.images[0].get_array() for ax in fig.axes)
    np.testing.assert_array_equal(causal, causal_mask(6).numpy())
    np.testing.assert_array_equal(padding[0], [True] * 4 + [False] * 2)
    np.testing.assert_array_equal(both, causal & padding)
    with pytest.raises(ValueError, match="positive"):
        mask_diagram(())
    plt.close("all")


def test_encoder_decoder_diagram_has_cross_attention():
    labels = texts(encoder_decoder_diagram(layers=2))
    for part in ("cross-attention", "masked self-attention", "encoder × 2", "decoder × 2", "(b, tq, V)"):
        assert part in labels
    with pytest.raises(ValueError, match="at least 1"):
        encoder_decoder_diagram(layers=0)
    plt.close("all")
