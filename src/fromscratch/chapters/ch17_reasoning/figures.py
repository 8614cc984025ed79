"""Plots of chapter 17. Every function takes plain numbers and returns the figure (or an HTML string).

- :func:`estimators_plot`: each policy-gradient estimator's bias and variance against the group size (17.1);
- :func:`clip_plot`: the clipped surrogate against the ratio, for a positive and a negative advantage
  (17.1);
- :func:`group_html`: one group of samples with their rewards and advantages (17.4), also the frames of
  :func:`frame_html` (17.5);
- :func:`rl_curves`: mean reward, response length, entropy and KL over the GRPO steps (17.4);
- :func:`pass_at_k_plot`: pass@k and majority@k against k, before and after, with intervals (17.5).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from fromscratch.viz.style import BOOK_WIDTH, FAINT, PALETTE

__all__ = [
    "Html",
    "results_table",
    "clip_plot",
    "estimators_plot",
    "frame_html",
    "group_html",
    "pass_at_k_plot",
    "rl_curves",
]


def estimators_plot(results: Sequence, *, title: str = ""):
    """Three panels against the group size ``n`` (log scale): the relative bias ``|E[ĝ] - g| / |g|`` (with
    twice its standard error), the scale ``E[ĝ]·g / |g|²`` (1: unbiased) and the relative variance.
    ``results``: :class:`~.tabular.BiasVariance` records."""
    names = list(dict.fromkeys(r.name for r in results))
    fig, axes = plt.subplots(1, 3, figsize=(BOOK_WIDTH, 3.3), layout="constrained")
    for i, name in enumerate(names):
        rows = [r for r in results if r.name == name]
        n = [r.n for r in rows]
        style = {"color": PALETTE[i % len(PALETTE)], "marker": "o", "markersize": 3, "label": name}
        axes[0].errorbar(n, [r.bias for r in rows], yerr=[2 * r.bias_se for r in rows], capsize=2, **style)
        axes[1].plot(n, [r.scale for r in rows], **style)
        axes[2].plot(n, [r.variance for r in rows], **style)
    axes[1].axhline(1.0, color=FAINT, lw=1)
    for ax, label in zip(
        axes, ("bias (relative)", "scale of E[estimate]", "variance (relative)"), strict=True
    ):
        ax.set(xscale="log", xlabel="group size n", title=label)
        ax.set_xticks(sorted({r.n for r in results}), [str(v) for v in sorted({r.n for r in results})])
        ax.minorticks_off()
    axes[2].set_yscale("log")
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=len(names), fontsize="small"
    )
    if title:
        fig.suptitle(title)
    return fig


def clip_plot(ratios: Sequence[float], objective: Mapping[str, Sequence[float]], *, clip: float):
    """The clipped surrogate ``min(ρA, clip(ρ, 1 - ε, 1 + ε) A)`` (maximised) against the ratio
    ``ρ = π / π_old``, one line per advantage (``{"A = +1": values, ...}``); the band ``[1 - ε, 1 + ε]``
    shaded. Where a line is flat, its gradient is zero."""
    fig, ax = plt.subplots(figsize=(min(BOOK_WIDTH, 5.5), 3.0), layout="constrained")
    for i, name in enumerate(objective):
        ax.plot(ratios, objective[name], color=PALETTE[i], label=name)
    ax.axvspan(1 - clip, 1 + clip, color=FAINT, alpha=0.25, lw=0)
    ax.set(xlabel="ratio π / π_old", ylabel="objective", title=f"the clipped surrogate, ε = {clip:g}")
    ax.legend(fontsize="small")
    return fig


def _shade(value: float, most: float) -> str:
    """A background for an advantage: blue for positive, orange for negative, paler when smaller."""
    alpha = 0.0 if most == 0 else min(abs(value) / most, 1.0) * 0.45
    colour = (0, 114, 178) if value > 0 else (230, 159, 0)
    return f"background: rgba({colour[0]}, {colour[1]}, {colour[2]}, {alpha:.2f})"


def group_html(
    prompt: str,
    texts: Sequence[str],
    rewards: Sequence[float],
    advantages: Sequence[float],
    *,
    caption: str = "",
) -> str:
    """One group as an HTML table: each sample's scratchpad (one line), its answer's reward and advantage."""
    most = max((abs(a) for a in advantages), default=0.0)
    cell = "padding:0.15em 0.8em 0.15em 0; text-align:left; font-family:monospace; font-size:0.85em"
    rows = []
    for text, reward, advantage in zip(texts, rewards, advantages, strict=True):
        shown = html.escape(text.replace("\n", " | "))
        rows.append(
            f"<tr><td style='{cell}'>{shown}</td><td style='{cell}'>{reward:g}</td>"
            f"<td style='{cell}; {_shade(advantage, most)}'>{advantage:+.2f}</td></tr>"
        )
    head = "".join(f"<th style='{cell}'>{h}</th>" for h in ("sample", "reward", "advantage"))
    title = html.escape(caption or f"prompt {prompt}")
    markup = (
        f"<table><caption style='text-align:left'>{title}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    lines = [title] + [
        f"{r:g}  {a:+.2f}  {t.splitlines()[-1] if t else ''}"
        for t, r, a in zip(texts, rewards, advantages, strict=True)
    ]
    return Html(markup, "\n".join(lines))


def frame_html(prompt: str, frame: Mapping) -> str:
    """A frame of the interactive figure: the samples of the watched problem at one step."""
    right = sum(frame["rewards"])
    caption = f"step {frame['step']}: {prompt} -> {int(right)} of {len(frame['rewards'])} samples right"
    return group_html(prompt, frame["texts"], frame["rewards"], frame["advantages"], caption=caption)


def rl_curves(curves: Mapping[str, Sequence[float]], *, smooth: int = 10):
    """Four panels over the GRPO steps: mean reward, response tokens, entropy (nats per token) and the KL to
    the SFT model (nats per token); the faint line is each step, the dark one a running mean of ``smooth``."""
    panels = (
        ("reward", "mean reward"),
        ("length", "response tokens"),
        ("entropy", "entropy (nats/token)"),
        ("kl", "KL to the SFT model (nats/token)"),
    )
    fig, axes = plt.subplots(1, 4, figsize=(BOOK_WIDTH, 2.6), layout="constrained")
    for ax, (key, label) in zip(axes, panels, strict=True):
        values = np.asarray(curves[key], dtype=float)
        steps = np.arange(1, len(values) + 1)
        ax.plot(steps, values, color=FAINT, lw=1)
        k = max(1, min(smooth, len(values)))
        ax.plot(steps[k - 1 :], np.convolve(values, np.ones(k) / k, mode="valid"), color=PALETTE[0])
        ax.set(xlabel="step", title=label)
        ax.title.set_fontsize("small")
    return fig


def pass_at_k_plot(ks: Sequence[int], before: Mapping[str, Sequence], after: Mapping[str, Sequence]):
    """pass@k and majority@k against k (log scale), before and after GRPO: ``{"pass": [Interval per k],
    "majority": [...]}`` each, drawn as points with their bootstrap intervals."""
    fig, axes = plt.subplots(1, 2, figsize=(min(BOOK_WIDTH, 7.0), 3.0), layout="constrained", sharey=True)
    for ax, metric in zip(axes, ("pass", "majority"), strict=True):
        for i, (label, scores) in enumerate((("after SFT", before), ("after GRPO", after))):
            values = scores[metric]
            mid = np.array([v.value for v in values])
            err = np.array([[v.value - v.low for v in values], [v.high - v.value for v in values]])
            shift = np.array(ks) * (0.96 if i == 0 else 1.04)
            ax.errorbar(
                shift, mid, yerr=err, color=PALETTE[i], marker="o", markersize=3, capsize=2, label=label
            )
        ax.set(xscale="log", xlabel="k", title=f"{metric}@k")
        ax.set_xticks(list(ks), [str(k) for k in ks])
        ax.minorticks_off()
    axes[0].set(ylabel="held-out problems")
    axes[0].legend(fontsize="small")
    return fig


class Html:
    """HTML that Jupyter (and the book) shows as such, and ``print`` as its text."""

    def __init__(self, markup: str, text: str = "") -> None:
        self.markup, self.text = markup, text

    def _repr_html_(self) -> str:
        return self.markup

    def __repr__(self) -> str:
        return self.text or self.markup


def results_table(rows: Sequence[Mapping]):
    """The before/after table of 17.5: one row per metric, the paired change with its interval."""
    from fromscratch.viz import table

    def pct(i) -> str:
        return f"{100 * i.value:.1f} [{100 * i.low:.1f}, {100 * i.high:.1f}]"

    def points(i) -> str:
        return f"{100 * i.value:+.1f} [{100 * i.low:+.1f}, {100 * i.high:+.1f}]"

    body = [[r["metric"], pct(r["before"]), pct(r["after"]), points(r["change"])] for r in rows]
    header = ["held-out", "after SFT (%)", "after GRPO (%)", "change (points, paired)"]
    return table(body, header, caption="95 % bootstrap intervals over the problems")
