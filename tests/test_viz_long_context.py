"""Chapter 11's figures: fitted slopes, matrix panels (both shared, in ``viz``) and reach plots draw
without error."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from fromscratch.chapters.ch11_longer_contexts import figures as long_context
from fromscratch.utils import loglog_slope
from fromscratch.viz import matrix_panels, scaling_curves


def test_fitted_slope_recovers_a_power_law():
    lengths = [512, 1024, 2048, 4096]
    assert loglog_slope(lengths, [t**1.5 for t in lengths]) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="two points"):
        loglog_slope([1], [1])


def test_figures_draw():
    fig = scaling_curves([256, 512], {"a": [1.0, 4.0]}, xlabel="t", ylabel="ms", loglog=True)
    assert "2.00" in fig.axes[0].get_legend().get_texts()[0].get_text()
    fig = matrix_panels({"mask": torch.ones(4, 4, dtype=torch.bool).tril(), "x": torch.randn(4, 4)})
    assert len(fig.axes) == 2
    fig = long_context.reach_plot({"g": torch.tensor([0.0, 0.1, 1.0, 2.0])}, 2)
    assert fig.axes[0].get_yscale() == "log"
    plt.close("all")
