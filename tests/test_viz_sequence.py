"""Chapter 08's plots: each draws what it is given, labelled, within the book's width."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.chapters.ch08_design_considerations import figures as ch08_figures
from fromscratch.viz.style import BOOK_WIDTH


def legend_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_step_time_plot_gives_each_slope():
    lengths = [64, 128, 256, 512]
    seconds = {"rnn": [t * 1e-3 for t in lengths], "transformer": [t**2 * 1e-6 for t in lengths]}
    fig = ch08_figures.step_time_plot(lengths, seconds)
    assert legend_texts(fig) == ["GRU (slope 1.00)", "transformer (slope 2.00)"]
    assert fig.get_figwidth() <= BOOK_WIDTH
    plt.close(fig)


def test_distance_plot_marks_chance_and_the_cnn_limit():
    fig = ch08_figures.distance_plot(
        [2, 8, 32], {"bag": [0.5, 0.5, 0.5], "cnn": [1.0, 1.0, 0.5]}, cnn_limit=8
    )
    assert legend_texts(fig) == ["bag of embeddings", "CNN", "chance", "CNN's reach (pooled)"]
    assert fig.get_figwidth() <= BOOK_WIDTH
    plt.close(fig)


def test_reachability_maps_leave_exact_zeros_white():
    band = torch.tensor([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]])
    fig = ch08_figures.reachability_maps({"cnn": band, "transformer": torch.ones(3, 3)}, title="t = 3")
    image = fig.axes[0].images[0].get_array()
    assert np.ma.is_masked(image) and image.mask.sum() == 2  # the two zeros: no path
    assert [ax.get_title() for ax in fig.axes[:2]] == ["CNN", "transformer"]
    assert fig.get_figwidth() <= BOOK_WIDTH
    plt.close(fig)


def test_time_curves_draw_accuracy_against_seconds():
    fig = ch08_figures.time_curves({"bag": ([1.0, 2.0], [0.6, 0.7]), "rnn": ([1.5, 3.0], [0.55, 0.8])})
    ax = fig.axes[0]
    assert "seconds" in ax.get_xlabel() and list(ax.lines[1].get_xdata()) == [1.5, 3.0]
    plt.close(fig)
