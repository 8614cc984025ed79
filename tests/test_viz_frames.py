"""Precomputed interaction (fromscratch.viz.precomputed): every frame drawn once, in order, and
the HTML that holds them; the explorers built on it: the shared one (fromscratch.viz.explorers) and the
chapters' own (in their figures.py)."""

from __future__ import annotations

import json
import re

import matplotlib.pyplot as plt
import pytest
import torch

from fromscratch import viz
from fromscratch.chapters.ch01_dot_products import figures as ch01_figures
from fromscratch.chapters.ch07_masking_generation import figures as ch07_figures
from fromscratch.chapters.ch11_longer_contexts import figures as ch11_figures
from fromscratch.chapters.ch14_modern_decoders import figures as ch14_figures
from fromscratch.models.recommender import MatrixFactorization, recommend, taste_vector
from fromscratch.viz.precomputed import MAX_FRAMES, Frames, frames


def data_of(shown: Frames) -> dict:
    """The JSON a figure's page holds, read back as the browser reads it."""
    page = shown._repr_html_()
    found = re.search(r"<script type='application/json' class='fs-data'>(.*?)</script>", page, re.S)
    return json.loads(found.group(1))


def test_frames_are_drawn_for_every_combination_in_row_major_order():
    calls = []

    def render(a, b):
        calls.append((a, b))
        return f"<p>{a}-{b}</p>"

    shown = frames(render, a=[1, 2, 3], b={"x": "X", "y": "Y"})
    assert calls == [(1, "X"), (1, "Y"), (2, "X"), (2, "Y"), (3, "X"), (3, "Y")]  # the last varies fastest
    assert len(shown) == 6 and shown.sizes == [3, 2] and shown.labels == [["1", "2", "3"], ["x", "y"]]
    assert shown.frame([2, 1]) == "<p>3-Y</p>" and shown.index([2, 1]) == 5
    data = data_of(shown)
    assert data["sizes"] == [3, 2] and [data["frames"][i] for i in data["order"]][3] == "<p>2-Y</p>"


def test_identical_frames_are_stored_once_and_start_picks_the_first_frame_shown():
    shown = frames(lambda t, k: f"<p>{min(t, k)}</p>", t=[0.5, 1.0, 2.0], k=[1, 1, 1], start={"t": 2.0})
    assert len(shown) == 9 and len(shown.frames) == 3  # three different pictures among nine settings
    assert shown.start == [2, 0]
    page = shown._repr_html_()
    assert "<div class='fs-frame'><p>1</p></div>" in page  # the frame of t = 2, k = 1 shows first
    assert "value='2'" in page and "<output style='min-width:3em;font-weight:bold'>2</output>" in page


def test_figures_become_pngs_in_the_page_and_are_closed():
    before = set(plt.get_fignums())

    def render(head):
        plt.figure()  # drawn but not returned: closed too
        return viz.attention_heatmap(torch.eye(3), ["a", "b", "c"], title=f"head {head}")

    shown = frames(render, head=[0])
    assert set(plt.get_fignums()) == before  # Jupyter will not show them a second time
    assert shown.frames[0].startswith('<img src="data:image/png;base64,')
    assert 'width="' in shown.frames[0] and "max-width:100%" in shown.frames[0]


def test_the_page_holds_its_script_and_survives_html_inside_the_frames():
    shown = frames(lambda n: f"<p>{n}</p><script>alert(1)</script>", n=[1, 2], play=True)
    page = shown._repr_html_()
    data = re.search(r"class='fs-data'>(.*?)</script>", page, re.S).group(1)
    assert "</" not in data  # escaped: the data's own "</script>" cannot end its element early
    assert data_of(shown)["frames"][1] == "<p>2</p><script>alert(1)</script>"
    ident = re.search(r"id='(fs-frames-[\w-]+)'", page).group(1)
    assert f'document.getElementById("{ident}")' in page  # frames.js, pointed at this figure
    assert "class='fs-play'" in page
    assert ident not in shown._repr_html_()  # a second display gets another id


def test_text_fallback_names_the_controls():
    shown = frames(lambda n: "x", n=[1, 2], caption="a caption")
    assert repr(shown) == "a caption\nn: 1, 2\n2 precomputed frames (1 different)"


def test_bad_controls_raise_errors_that_say_what_to_do():
    with pytest.raises(ValueError, match="at least one control"):
        frames(lambda: "x")
    with pytest.raises(ValueError, match="has no values"):
        frames(lambda n: "x", n=[])
    with pytest.raises(ValueError, match="MAX_FRAMES"):
        frames(lambda a, b: "x", a=range(MAX_FRAMES), b=range(2))
    with pytest.raises(ValueError, match="not controls"):
        frames(lambda n: "x", n=[1], start={"m": 1})
    with pytest.raises(ValueError, match="not one of its values"):
        frames(lambda n: "x", n=[1], start={"n": 5})
    with pytest.raises(TypeError, match="_repr_html_"):
        frames(lambda n: 3.0, n=[1])


# --- the explorers ----------------------------------------------------------------------------------
def test_attention_frames_slide_over_layers_and_heads_with_their_mean():
    torch.manual_seed(0)
    layers = [torch.softmax(torch.randn(1, 2, 3, 3), -1) for _ in range(2)]  # (b, h, t, t) per layer
    shown = viz.attention_frames(layers, ["a", "b", "c"], layer_name="block")
    assert shown.names == ["block", "head"] and shown.labels[1] == ["0", "1", "mean"]
    assert len(shown) == 6
    single = viz.attention_frames(layers[0][0], ["a", "b", "c"], mean=False)  # one (h, t, t) tensor
    assert single.names == ["head"] and single.labels == [["0", "1"]]
    with pytest.raises(ValueError, match="tq, tk"):
        viz.attention_frames([torch.ones(3, 3)], ["a", "b", "c"])


def test_attention_frames_share_one_colour_scale(monkeypatch):
    import fromscratch.viz.explorers as explorers

    scales = []

    def heatmap(*args, vmax, **kwargs):
        scales.append(vmax)
        return "<p></p>"

    monkeypatch.setattr(explorers, "attention_heatmap", heatmap)
    layers = [torch.full((1, 2, 3, 3), 0.2), torch.full((1, 2, 3, 3), 0.3)]
    explorers.attention_frames(layers, ["a", "b", "c"])
    assert scales == pytest.approx([0.3] * 6)  # the largest weight shown, in every frame
    explorers.attention_frames(layers, ["a", "b", "c"], vmax=1.0, mean=False)
    assert scales[6:] == [1.0] * 4


def test_taste_frames_rank_like_recommend():
    torch.manual_seed(0)
    model = MatrixFactorization(n_users=4, n_items=6, factors=3, global_mean=3.0)
    directions = torch.eye(3)[:2]  # (2, f)
    titles = [f"Movie {i} (1995)" for i in range(6)]
    shown = ch01_figures.taste_frames(model, titles, directions, k=3, limit=1.0, step=1.0)
    assert shown.labels == [["-1", "0", "1"], ["-1", "0", "1"]] and shown.start == [1, 1]
    items, _ = recommend(model, taste_vector(model, directions, [1.0, -1.0]), 3)
    frame = shown.frame([2, 0])
    first = re.search(r"<td>1</td><td>([^<]*)</td>", frame).group(1)
    assert first == f"Movie {items[0].item()}"


def test_distribution_bars_show_the_chosen_tokens_in_order():
    probs = torch.tensor([0.1, 0.6, 0.3, 0.0])
    bars = ch07_figures.distribution_bars(probs, ["a", "b", "c", "d"], note="3 of 4 can be drawn")
    assert bars.labels == ["b", "c", "a", "d"]
    assert repr(bars).splitlines()[0] == "       b  60.0% " + "#" * 24
    page = bars._repr_html_()
    assert "<code>b</code><i style='width:18.00em'></i>60.0%" in page and "3 of 4 can be drawn" in page
    chosen = ch07_figures.distribution_bars(probs, ["a", "b", "c", "d"], order=[3, 0])
    assert chosen.labels == ["d", "a"] and chosen.probs == pytest.approx([0.0, 0.1])


def test_distance_panels_highlight_one_curve():
    fig = ch11_figures.distance_panels(
        [0, 1, 2], {"left": {"x": [0, 1, 2], "y": [2, 1, 0]}, "right": {"sum": [2, 2, 2]}}, "y"
    )
    left, right = fig.axes
    colours = [line.get_color() for line in left.lines]
    assert colours[1] != colours[0] and [t.get_text() for t in left.get_legend().get_texts()] == ["y"]
    assert right.lines[0].get_color() == colours[1]  # a lone curve is drawn as chosen
    plt.close(fig)


def test_kv_cache_plot_marks_the_chosen_size():
    sizes = {8: [1024, 2048], 2: [256, 512]}
    fig = ch14_figures.kv_cache_plot([16, 32], sizes, kv_heads=2, length=32, heads=8)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["hk = 2, t = 32: 0.5 KiB, 1/4 of hk = 8"]
    assert fig.axes[0].get_yscale() == "log"  # every length visible, the lines parallel
    plt.close(fig)


def test_math_in_a_frame_becomes_spans_that_mathjax_typesets():
    """``$x$`` in a frame's text is typeset in the book (Sphinx's MathJax reads ``\\(x\\)`` in a math span)
    and in the decks, also when the sliders swap the frame in (frames.js calls MathJax.typesetPromise)."""
    shown = frames(lambda p: f"<p title='$p$'>keeps $p = {p}$ of the mass, not $5</p>", p=[0.5, 0.9])
    first = data_of(shown)["frames"][0]
    assert '<span class="math notranslate nohighlight">\\(p = 0.5\\)</span>' in first
    assert "title='$p$'" in first and "not $5" in first  # attributes and a lone dollar stay as they are
    assert "typesetPromise" in shown._repr_html_()
