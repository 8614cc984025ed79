"""Movies and tastes in pictures and tables: the plots of the dot-product chapter (chapter 01).

- ``plot_hand_features`` and ``plot_score_terms``: hand-made (romance, action) features and the
  terms of each dot product;
- ``plot_movie_features``: well-known movies placed by their first two learned directions, in the
  spirit of Koren, Bell & Volinsky (2009, Fig. 3);
- ``direction_ends``: the movies at both ends of each learned direction;
- ``taste_table``, ``taste_frames`` and ``taste_explorer``: top recommendations for made-up users, as
  a static table, as sliders precomputed for every setting (both render everywhere, the built book
  included) and as live ipywidgets sliders.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from fromscratch.chapters.ch01_dot_products.labels import declutter, flip
from fromscratch.data.movielens import short_title
from fromscratch.models.recommender import MatrixFactorization, recommend, taste_vector
from fromscratch.viz.precomputed import Frames, frames
from fromscratch.viz.style import PALETTE
from fromscratch.viz.text import Table

__all__ = [
    "plot_hand_features",
    "plot_score_terms",
    "plot_movie_features",
    "direction_ends",
    "taste_table",
    "taste_frames",
    "taste_explorer",
]


# --- hand-made features ----------------------------------------------------------------------------
def plot_hand_features(
    movies: Mapping[str, Sequence[float]],
    users: Mapping[str, Sequence[float]],
    features: Sequence[str] = ("romance", "action"),
):
    """Movies as points and users as arrows in a two-feature plane.

    ``movies`` / ``users``: name -> (feature 1, feature 2). A user's score for a movie is the dot
    product: large when the movie lies far along the user's arrow, negative when it lies behind it.
    """
    fig, ax = plt.subplots(figsize=(6, 6))
    for name, (x, y) in movies.items():
        ax.scatter([x], [y], color=PALETTE[0], zorder=3)
        ax.annotate(name, (x, y), xytext=(6, 4), textcoords="offset points", color=PALETTE[0])
    for n, (name, (x, y)) in enumerate(users.items()):
        colour = PALETTE[(n + 1) % len(PALETTE)]
        ax.annotate("", xy=(x, y), xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=colour, lw=2))
        ax.annotate(
            name, (x, y), xytext=(6, -12), textcoords="offset points", color=colour, fontweight="bold"
        )
    limit = 1.15 * max(abs(v) for point in [*movies.values(), *users.values()] for v in point)
    ax.set(
        xlim=(-limit, limit),
        ylim=(-limit, limit),
        aspect="equal",
        xlabel=features[0],
        ylabel=features[1],
        title="Hand-made features: movies (dots) and users (arrows)",
    )
    ax.axhline(0, color="#888888", lw=0.8)
    ax.axvline(0, color="#888888", lw=0.8)
    fig.tight_layout()
    return fig


def plot_score_terms(
    user_name: str,
    user: Sequence[float],
    movies: Mapping[str, Sequence[float]],
    features: Sequence[str] = ("romance", "action"),
):
    """For one user, each movie's dot-product terms $u_k m_k$ as bars and their sum as a diamond."""
    names = list(movies)
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(names) + 1.5))
    height = 0.8 / len(features)
    for k, feature in enumerate(features):
        terms = [user[k] * movies[name][k] for name in names]
        ax.barh(
            [i + (k - (len(features) - 1) / 2) * height for i in range(len(names))],
            terms,
            height=height,
            color=PALETTE[k + 1],
            label=f"{feature} term",
        )
    totals = [sum(u * m for u, m in zip(user, movies[name], strict=True)) for name in names]
    ax.scatter(totals, range(len(names)), marker="D", color="black", zorder=3, label="score (sum)")
    ax.axvline(0, color="#888888", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set(xlabel="contribution to the score", title=f"Why {user_name} scores each movie as they do")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(features) + 1, fontsize=9)
    fig.tight_layout()
    return fig


# --- learned features ------------------------------------------------------------------------------
def plot_movie_features(
    coords: torch.Tensor,
    titles: Sequence[str],
    labelled: Sequence[int],
    *,
    background: Sequence[int] | None = None,
    axis_labels: Sequence[str] = ("learned direction 1", "learned direction 2"),
):
    """Movies placed by two learned coordinates; ``labelled`` movies carry their titles.

    ``coords``: (n_items, 2), e.g. from ``recommend.item_directions``; ``titles``: one per movie;
    ``background``: more movies drawn as faint dots, to show where the labelled ones sit.
    """
    if coords.dim() != 2 or coords.shape[1] != 2:
        raise ValueError(f"coords must have shape (n_items, 2), got {tuple(coords.shape)}.")
    xy = coords.detach().float().cpu()
    fig, ax = plt.subplots(figsize=(10, 8))
    if background is not None:
        ax.scatter(
            xy[background, 0], xy[background, 1], s=8, color="#bbbbbb", label="other well-known movies"
        )
    ax.scatter(xy[labelled, 0], xy[labelled, 1], s=18, color=PALETTE[0], zorder=3, label="most-rated movies")
    texts = [
        ax.text(
            float(xy[i, 0]),
            float(xy[i, 1]),
            " " + short_title(titles[i]),
            fontsize=8.5,
            va="center",
            ha="left",
        )
        for i in labelled
    ]
    for i, text in zip(labelled, texts, strict=True):
        if xy[i, 0] > xy[labelled, 0].median():  # right half: label to the left of the dot
            flip(text)
    ax.axhline(0, color="#888888", lw=0.8)
    ax.axvline(0, color="#888888", lw=0.8)
    ax.set(
        xlabel=axis_labels[0],
        ylabel=axis_labels[1],
        title="Movies placed by their first two learned directions",
    )
    ax.legend(loc="lower right", fontsize=9)
    fig.tight_layout()
    declutter(ax, texts)
    for i, text in zip(labelled, texts, strict=True):  # a thin line back to the dot when a label moved
        x, y = text.get_position()
        if abs(y - float(xy[i, 1])) > 1e-9:
            ax.plot([float(xy[i, 0]), x], [float(xy[i, 1]), y], color="#999999", lw=0.5, zorder=1)
    return fig


def direction_ends(coords: torch.Tensor, titles: Sequence[str], movies: Sequence[int], n: int) -> Table:
    """The ``n`` movies (of ``movies``) at the low and the high end of each direction of ``coords``
    (n_items, k).
    """
    movies = torch.as_tensor(list(movies))
    rows = []
    for j in range(coords.shape[1]):
        order = movies[coords[movies, j].argsort()]  # low -> high
        low = ", ".join(short_title(titles[i]) for i in order[:n].tolist())
        high = ", ".join(short_title(titles[i]) for i in order[-n:].flip(0).tolist())
        rows += [[f"direction {j + 1}", "low end", low], ["", "high end", high]]
    return Table(rows, ["direction", "end", "movies"])


# --- made-up users: static table and live explorer -------------------------------------------------
def _amount_label(amounts: Sequence[float]) -> str:
    return "(" + ", ".join(f"{a:+g}" for a in amounts) + ")"


def taste_table(
    model: MatrixFactorization,
    titles: Sequence[str],
    directions: torch.Tensor,
    settings: Sequence[Sequence[float]],
    *,
    k: int,
    candidates: torch.Tensor | None = None,
) -> Table:
    """Top-k movies for made-up users, one column per setting of the taste sliders.

    ``directions``: (d, f) from ``recommend.item_directions``; each setting is d amounts, in standard
    deviations of the real users along each direction (see ``recommend.taste_vector``).
    """
    columns = []
    for amounts in settings:
        items, _ = recommend(model, taste_vector(model, directions, amounts), k, candidates=candidates)
        columns.append([short_title(titles[i]) for i in items.tolist()])
    rows = [[str(r + 1), *(col[r] for col in columns)] for r in range(min(len(c) for c in columns))]
    return Table(rows, ["rank", *(f"taste {_amount_label(a)}" for a in settings)])


def taste_frames(
    model: MatrixFactorization,
    titles: Sequence[str],
    directions: torch.Tensor,
    *,
    k: int,
    candidates: torch.Tensor | None = None,
    limit: float = 3.0,
    step: float = 0.5,
) -> Frames:
    """Chapter 01's made-up user: a slider per learned direction (``directions`` ``(2, f)``, as
    ``recommender.item_directions`` gives), in standard deviations of the real users along it, from
    ``-limit`` to ``limit``; each frame is the top-``k`` list with its predicted stars."""
    amounts = [round(float(a), 6) for a in np.arange(-limit, limit + step / 2, step)]

    def top(**taste):
        user = taste_vector(model, directions, list(taste.values()))  # (f,)
        items, stars = recommend(model, user, k, candidates=candidates)
        rows = "".join(
            f"<tr><td>{r + 1}</td><td>{html.escape(short_title(titles[i]))}</td><td>{s:.2f}</td></tr>"
            for r, (i, s) in enumerate(zip(items.tolist(), stars, strict=True))
        )
        head = "<tr><th>rank</th><th>movie</th><th>predicted stars</th></tr>"
        return f"<table class='fs-taste'><thead>{head}</thead><tbody>{rows}</tbody></table>"

    controls = {f"direction {j + 1}": amounts for j in range(directions.shape[0])}
    style = ".fs-taste td, .fs-taste th {text-align: left; padding: 0.2em 1.2em 0.2em 0}"
    return frames(top, start=dict.fromkeys(controls, 0.0), style=style, **controls)


def taste_explorer(
    model: MatrixFactorization,
    titles: Sequence[str],
    directions: torch.Tensor,
    *,
    k: int,
    candidates: torch.Tensor | None = None,
    limit: float = 3.0,
):
    """Sliders for a made-up user's taste along each learned direction; the top-k list follows them.

    Needs a live Jupyter kernel (ipywidgets); in a static page show ``taste_table`` as well.
    Slider units: standard deviations of the real users along the direction, from -limit to +limit.
    """
    import ipywidgets as widgets

    sliders = [
        widgets.FloatSlider(
            value=0.0,
            min=-limit,
            max=limit,
            step=0.25,
            description=f"direction {j + 1}",
            continuous_update=False,
        )
        for j in range(directions.shape[0])
    ]
    shown = widgets.HTML()

    def update(_=None) -> None:
        amounts = [s.value for s in sliders]
        items, scores = recommend(model, taste_vector(model, directions, amounts), k, candidates=candidates)
        rows = [
            [r + 1, short_title(titles[i]), f"{s:.2f}"]
            for r, (i, s) in enumerate(zip(items.tolist(), scores, strict=True))
        ]
        shown.value = Table(
            rows, ["rank", "movie", "predicted stars"], caption=f"taste {_amount_label(amounts)}"
        )._repr_html_()

    for slider in sliders:
        slider.observe(update, names="value")
    update()
    return widgets.VBox([*sliders, shown])
