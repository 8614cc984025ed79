"""Chapter 06's computed sentences: each takes the run's numbers and returns Markdown for ``viz.prose``.

The verdicts come from :mod:`fromscratch.viz.verdicts`; ``tests/test_prose_ch06.py`` renders every
branch with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fromscratch.viz import verdicts as v

if TYPE_CHECKING:
    import torch

    from fromscratch.chapters import Profile
    from fromscratch.metrics import Predictions
    from fromscratch.training.history import History


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def learning_curve(history: History, valid_reviews: int) -> str:
    """6.4: how the training loss and the validation accuracy moved, judged against the noise of an
    accuracy on ``valid_reviews`` reviews (two standard errors).

    history: the transformer's training run (its ``"loss"`` per step and its ``"validation accuracy"``
    per evaluation); valid_reviews: how many reviews the validation accuracy was measured on."""
    eval_steps, valid_accuracy = history.series("validation accuracy")
    _, step_losses = history.series("loss")
    tenth = max(1, len(step_losses) // 10)
    start, end = step_losses[:tenth], step_losses[-tenth:]
    middle = step_losses[len(step_losses) // 2 - tenth // 2 :][:tenth]
    best = max(range(len(valid_accuracy)), key=valid_accuracy.__getitem__)
    noise = 2 * v.binomial_se(valid_accuracy[best], valid_reviews)
    sd = (statistics.pstdev(middle), statistics.pstdev(end))
    loss_fell = v.compare(_mean(middle), _mean(end), sd=sd, seeds=len(end)).side == "ahead"
    ended = v.trend(valid_accuracy, noise)
    if ended == "fell":
        reading = (
            f"It peaked at {valid_accuracy[best]:.1%} at step {eval_steps[best]:,} and ended "
            f"{100 * (valid_accuracy[best] - valid_accuracy[-1]):.1f} points lower, more than the noise: "
            "the model started to fit its training reviews at the expense of new ones."
        )
    elif ended == "rising":
        reading = "It was still rising at the end, by more than the noise: a longer run may pay here."
    elif loss_fell:
        reading = (
            "It flattened in the second half (within the noise) while the training loss kept falling: "
            "what the model still learned there is its training reviews, not what carries over."
        )
    else:
        reading = "Both flattened in the second half: more of the same steps would likely add little."
    return (
        f"In this run the training loss went from {_mean(start):.3f} (the mean of the first tenth of "
        f"the steps) to {_mean(end):.3f} (the last tenth), and validation accuracy went from "
        f"{valid_accuracy[0]:.1%} at step {eval_steps[0]:,} to {valid_accuracy[-1]:.1%} at the last "
        f"step, {eval_steps[-1]:,}. On {v.plural(valid_reviews, 'validation review')} one standard "
        f"error of an accuracy is about {noise / 2:.1%}, so a change of less than "
        f"{100 * noise:.1f} points is noise. {reading}"
    )


def test_accuracy(
    results: Mapping[str, Predictions],
    majority: float,
    test_reviews: int,
    train_reviews: int,
    profile: Profile,
) -> str:
    """6.5: the two models against each other and against the majority class, one run each.

    results: the test set's predictions by model, ``"bag of embeddings"`` and ``"transformer, mean
    pooling"``; majority: the accuracy of always answering the training reviews' majority class;
    test_reviews, train_reviews: the sizes of the two sets; profile: the run's profile (``prof``),
    whose ``smoke`` runs get a caveat."""
    bag = results["bag of embeddings"].accuracy
    transformer = results["transformer, mean pooling"].accuracy
    smoke = profile.name == "smoke"
    noise = 2 * 2**0.5 * v.binomial_se((bag + transformer) / 2, test_reviews)  # two accuracies' difference
    said = v.compare(transformer, bag, floor=noise)
    trained = f"trained from scratch on {v.plural(train_reviews, 'review')}"
    if said.side == "ahead" and transformer > majority:
        share = (bag - majority) / (transformer - majority)
        lesson = (
            f"The bag, which sees only which words occur, gets {max(share, 0):.0%} of the way from the "
            "majority class to the transformer."
        )
    elif said.side == "behind":
        lesson = (
            "On this data set which words occur decides most reviews, and in this run the bag did "
            f"better than a transformer {trained}, which has more to learn from the same data."
        )
    else:
        lesson = (
            "On this data set which words occur decides most reviews, and this run's transformer, "
            f"{trained}, found nothing beyond that which the noise would not explain."
        )
    caveat = (
        " This `smoke` run (a few hundred reviews, one short epoch) only checks that the code works; "
        "its accuracies mean nothing."
        if smoke
        else ""
    )
    return (
        f"On all {v.plural(test_reviews, 'test review')} the transformer scores **{transformer:.1%}** and "
        f"the bag of embeddings **{bag:.1%}**, against {majority:.1%} for always answering the majority "
        f"class. In this run {said.says('the transformer', 'the bag')}: on this many reviews a difference "
        f"below {100 * noise:.1f} points is the test set's noise ({said.runs}, seed 0: another seed could "
        f"narrow or widen the gap). {lesson}{caveat}"
    )


def contributions(words: Sequence[str], terms: Sequence[float], bias: float) -> str:
    """6.7: the largest terms each way, and whether every term pushes the same way."""
    order = sorted(range(len(terms)), key=terms.__getitem__)
    pos = v.join_words([f"`{words[j]}` ({terms[j]:+.2f})" for j in order[::-1][:3]])
    neg = v.join_words([f"`{words[j]}` ({terms[j]:+.2f})" for j in order[:3]])
    text = (
        f"In this review the largest terms towards *positive* come from {pos}, the largest towards "
        f"*negative* from {neg}; the bias adds {bias:+.2f}."
    )
    if min(terms) > 0 or max(terms) < 0:
        side = "positive" if min(terms) > 0 else "negative"
        text += (
            f" Every term points towards *{side}*: attention has already spread the verdict over the "
            "whole review."
        )
    return text


def truncation(lengths: torch.Tensor | Sequence[int], context: int) -> str:
    """6.8: how many of the worst mistakes were longer than the model reads.

    lengths: the token counts (before truncation) of the reviews shown; context: the most tokens of a
    review the model reads (``size.model.context``)."""
    cut, shown = sum(int(n) > context for n in lengths), len(lengths)  # cut: not read to the end
    if cut == 0:
        return (
            f"None of these {v.plural(shown, 'review')} was longer than `context` = {context} tokens: "
            "truncation did not cut their verdicts."
        )
    was, them = ("was", "its") if cut == 1 else ("were", "their")
    return (
        f"Of these {v.plural(shown, 'review')}, {cut} {was} longer than `context` = {context} tokens, "
        f"so the model never read {them} end."
    )


def pooling(results: Mapping[str, Predictions], test_reviews: int) -> str:
    """6.9: the CLS token against mean pooling, one run each.

    results: the test set's predictions by model, among them ``"transformer, CLS token"`` and
    ``"transformer, mean pooling"``; test_reviews: how many reviews they were measured on."""
    cls = results["transformer, CLS token"].accuracy
    mean = results["transformer, mean pooling"].accuracy
    noise = 2 * 2**0.5 * v.binomial_se((cls + mean) / 2, test_reviews)
    said = v.compare(cls, mean, floor=noise)
    return (
        f"With the same budget the CLS token scores {cls:.1%} and mean pooling {mean:.1%}: "
        f"{said.says('the CLS token', 'mean pooling')}, {said.runs} (seed 0), so no more than that."
    )
