"""Chapter 09's figures: BLEU against sentence length, alignments, and bertviz for encoder-decoders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import torch

from fromscratch.viz.style import BOOK_WIDTH, PALETTE
from fromscratch.viz.text import table

__all__ = [
    "bleu_by_length_plot",
    "bleu_by_length_table",
    "encoder_decoder_bertviz",
    "learning_curves_by_time",
]


def bleu_by_length_plot(rows: dict[str, list[tuple[str, int, float]]], *, title: str | None = None):
    """One line per model: corpus BLEU of the test sentences in each source-length bin.

    rows: ``{model name: [(bin label, sentences, BLEU), ...]}`` as
    :func:`fromscratch.metrics.translation.bleu_by_length` returns (the same bins for every model).
    The shape of Bahdanau et al. (2015), Figure 2. Returns the ``Axes``.
    """
    fig, ax = plt.subplots(figsize=(BOOK_WIDTH * 0.75, 3.4), layout="constrained")
    labels = None
    for n, (name, model_rows) in enumerate(rows.items()):
        labels = [f"{label}\n({count})" for label, count, _ in model_rows]
        scores = [s for _, _, s in model_rows]
        ax.plot(range(len(model_rows)), scores, marker="o", color=PALETTE[n % len(PALETTE)], label=name)
    if labels:
        ax.set_xticks(range(len(labels)), labels)
    ax.set(
        xlabel="source length in tokens (sentences)",
        ylabel="test BLEU",
        title=title or "BLEU by source length",
    )
    ax.set_ylim(bottom=0)
    ax.legend()
    return ax


def bleu_by_length_table(rows: dict[str, list[tuple[str, int, float]]]):
    """The numbers of :func:`bleu_by_length_plot` as a table: each bin's sentences and every model's BLEU,
    and for two models the second's minus the first's (``viz.table``, shown when last in a cell)."""
    names = list(rows)
    columns = list(zip(*rows.values(), strict=True))  # one tuple of (label, sentences, BLEU) per bin
    header = ["source tokens", "sentences", *names]
    lines = []
    for per_model in columns:
        scores = [score for *_, score in per_model]
        line = [per_model[0][0], f"{per_model[0][1]:,}", *(f"{s:.1f}" for s in scores)]
        lines.append(line + ([f"{scores[1] - scores[0]:+.1f}"] if len(names) == 2 else []))
    if len(names) == 2:
        header.append("difference")
    return table(lines, header=header, caption="test BLEU by source length (one run each)")


def learning_curves_by_time(
    runs: dict[str, tuple[Any, float]],
    *,
    smooth: int = 20,
    metric: str = "val_bleu",
    metric_label: str = "validation BLEU (greedy)",
):
    """Training loss, and ``metric`` where recorded, against minutes of training, one line per model.

    runs: ``{name: (history, minutes)}``; ``history``: what :func:`fromscratch.training.train` returned
    (its ``series("loss")`` is read, and ``series(metric, x="seconds")`` when it holds evaluations);
    ``minutes``: the run's time in training steps, spread evenly over its steps for the loss (steps of
    one run take about equally long). With evaluations, a second panel plots ``metric`` at the training
    seconds each evaluation was taken. Returns the ``Figure``.
    """
    scored = any(history.series(metric)[0] for history, _ in runs.values())
    fig, axes = plt.subplots(
        1,
        2 if scored else 1,
        figsize=(BOOK_WIDTH, 3.2) if scored else (BOOK_WIDTH * 0.75, 3.2),
        layout="constrained",
        squeeze=False,
    )
    ax = axes[0, 0]
    for n, (name, (history, total)) in enumerate(runs.items()):
        steps, losses = history.series("loss")
        minutes = [total * step / max(steps) for step in steps]
        losses = torch.tensor(list(losses), dtype=torch.float32)
        k = max(1, min(smooth, len(losses) // 5 or 1))
        smoothed = (
            torch.nn.functional.avg_pool1d(losses[None, None], k, stride=1)[0, 0]
            if len(losses) >= k
            else losses
        )
        ax.plot(list(minutes)[k - 1 :], smoothed.tolist(), color=PALETTE[n % len(PALETTE)], label=name)
    ax.set(xlabel="minutes of training", ylabel="training loss (nats/token)", title="learning curves")
    ax.legend()
    if scored:
        ax = axes[0, 1]
        for n, (name, (history, _)) in enumerate(runs.items()):
            seconds, values = history.series(metric, x="seconds")
            ax.plot(
                [s / 60 for s in seconds], values, marker="o", color=PALETTE[n % len(PALETTE)], label=name
            )
        ax.set(xlabel="minutes of training", ylabel=metric_label, title=metric_label)
    return fig


def _first(layers, example: int) -> list[torch.Tensor]:
    return [
        torch.as_tensor(w).detach().float().cpu()[example : example + 1] for w in layers
    ]  # (1, h, tq, tk)


def encoder_decoder_bertviz(
    weights: dict,
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    *,
    example: int = 0,
    kind: str = "model",
):
    """An encoder-decoder's attention in bertviz: encoder self-, decoder self- and cross-attention.

    weights: ``{"encoder": [...], "decoder": [...], "cross": [...]}`` with one ``(b, h, tq, tk)`` tensor
    per layer (``model.attention_parts(weights)`` after ``model(..., attention=weights)``); ``example``
    picks the sentence. ``kind``: ``"model"`` (every head of every layer) or ``"head"``. Returns an
    ``IPython.display.HTML`` object (it fetches d3 and jQuery online).
    """
    from bertviz import head_view, model_view

    view = {"model": model_view, "head": head_view}[kind]
    options = {"display_mode": "light"} if kind == "model" else {}
    return view(
        encoder_attention=_first(weights["encoder"], example),
        decoder_attention=_first(weights["decoder"], example),
        cross_attention=_first(weights["cross"], example),
        encoder_tokens=list(src_tokens),
        decoder_tokens=list(tgt_tokens),
        html_action="return",
        **options,
    )
