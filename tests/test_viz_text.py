"""Pictures of text (fromscratch.viz.text) and of positions and lengths (chapters 05-06's own figures)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from fromscratch.attention import sinusoidal_encoding
from fromscratch.chapters.ch05_transformer_block.figures import position_plot
from fromscratch.chapters.ch06_imdb_classifier.figures import length_histogram
from fromscratch.viz import highlight_tokens


def test_highlight_tokens_html_and_text():
    shown = highlight_tokens(
        ["a", "<b>", "great", "film"], torch.tensor([0.0, -0.5, 1.0, 0.25]), caption="review 1"
    )
    html = shown._repr_html_()
    assert "&lt;b&gt;" in html and "<b>" not in html  # tokens are escaped
    assert (
        html.count("<span title=") == 4 and "rgba(0, 158, 115, 0.85)" in html
    )  # the largest score: full green
    text = repr(shown)
    assert text.splitlines()[0] == "review 1"
    assert "most positive: great (+1.00)" in text and "most negative: <b> (-0.50)" in text
    assert highlight_tokens(["x", "y"], [0.1, 0.2]).signed is False  # all scores >= 0: one colour
    assert "<span" not in highlight_tokens(["plain", "text"])._repr_html_()
    with pytest.raises(ValueError, match="one score per token"):
        highlight_tokens(["a", "b"], [1.0])


def test_length_histogram_marks_the_cut():
    ax = length_histogram(torch.tensor([10, 20, 30, 400]), context=100, bins=4)
    assert "25% are cut" in ax.get_legend().get_texts()[0].get_text()
    assert ax.get_xlabel() == "length (tokens)" and ax.get_title() == "4 texts, median 25 tokens"
    assert sum(bar.get_height() for bar in ax.patches) == 4  # every length counted once
    assert ax.lines[0].get_xdata()[0] == 100  # the cut is marked at context
    plt.close("all")


def test_position_plot():
    vectors = sinusoidal_encoding(32, 8)  # (t, e)
    fig = position_plot(vectors)
    assert len(fig.axes) == 4  # two images, two colour bars
    left, right = (ax for ax in fig.axes if ax.images)
    np.testing.assert_allclose(left.images[0].get_array(), vectors.numpy())
    np.testing.assert_allclose(right.images[0].get_array(), (vectors @ vectors.T).numpy(), rtol=1e-5)
    assert (left.get_xlabel(), left.get_ylabel()) == ("dimension", "position")
    with pytest.raises(ValueError, match=r"\(t, e\)"):
        position_plot(torch.zeros(2, 3, 4))
    plt.close("all")
