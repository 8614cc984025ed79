"""Chapter 10's sentences about its own run: each function takes the run's numbers and returns a
paragraph whose verdicts come from :mod:`fromscratch.viz.verdicts` (issue 43).

The chapter prints them with ``viz.prose(...)``; ``tests/test_prose_ch10.py`` renders every branch with the
``gpu`` profile's sizes. Accuracies are shares (0.816), said as percentages; two accuracies on the same
``n`` test reviews differ beyond noise when the gap exceeds twice the standard error of their difference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch10_modern_transformers.bert_imdb import BertData
from fromscratch.chapters.ch10_modern_transformers.label_efficiency import CHAPTER_06
from fromscratch.chapters.ch10_modern_transformers.label_sizes import LabelEfficiencyRun
from fromscratch.chapters.ch10_modern_transformers.profile import ModernRun
from fromscratch.training.history import History
from fromscratch.viz.verdicts import binomial_se, compare, crossing, join_words, plural, versus_chance

POSITIVE = {"good", "great", "best", "excellent"}
NEGATIVE = {"bad", "worst", "awful", "terrible"}
SENTIMENT = POSITIVE | NEGATIVE
PROBED = ("good", "bad", "best", "worst")  # the words whose neighbours the chapter prints
NAMES = {"random": "random weights", "ours": "ours", "minilm": "MiniLM"}


class ReferenceRun(Protocol):
    """What the prose reads of chapter 06's run (its profile): ``model.context`` and ``train.epochs``."""

    model: Any
    train: Any


def _noise(a: float, b: float, n: int) -> float:
    """Twice the standard error of the difference of two accuracies, each measured on ``n`` items."""
    return 2 * math.hypot(binomial_se(a, n), binomial_se(b, n))


def masked_lm(
    history: History,
    vocab: int,
    at_mask: float,
    unigram_mask: float,
    at_chosen: float,
    unigram: float,
    floor: float,
) -> str:
    """Section 10.4: the pretrained BERT's masked-LM loss against what needs no context.

    history: the pretraining's; vocab: the model's vocabulary V; at_mask, unigram_mask: its loss and the
    unigram baseline at the ``[MASK]`` positions; at_chosen, unigram, floor: its loss, the unigram baseline
    and the copy-aware floor over every chosen position (nats).
    """
    steps, losses = history.series("loss")
    window = max(1, len(losses) // 20)  # a running mean over a twentieth of the run
    smooth = [sum(losses[i - window : i]) / window for i in range(window, len(losses) + 1)]
    curve = crossing(steps[window - 1 :], smooth, [floor] * len(smooth))
    n_steps = plural(len(steps), "step")
    if curve.kind == "never" and curve.above != "b":
        when = f"never went below the copy-aware floor in its {n_steps}"
    elif curve.kind == "never":
        when = f"stayed below the copy-aware floor over all its {n_steps}"
    elif curve.kind == "once" and curve.above == "b":
        when = f"went below the copy-aware floor after {curve.at:,} of its {n_steps} and stayed there"
    elif curve.kind == "once":
        when = f"rose above the copy-aware floor after {curve.at:,} of its {n_steps} and stayed there"
    else:
        when = (
            f"crossed the copy-aware floor {len(curve.changes)} times (first after {curve.changes[0]:,} of "
            f"its {n_steps}): it hovers near the floor"
        )
    gap = 1 - at_mask / unigram_mask
    below_mask = f"**{gap:.1%} below** it" if gap > 0 else f"**{-gap:.1%} above** it"
    gap_all, gap_floor = 1 - at_chosen / unigram, 1 - floor / unigram
    side_all = f"{gap_all:.1%} below" if gap_all >= 0 else f"{-gap_all:.1%} above"
    if gap_all > gap_floor:  # the evaluation alone says whether the model reads the context
        context = (
            f"so {100 * (gap_all - gap_floor):.1f} of those {100 * gap_all:.1f} points go beyond it: there "
            "the model reads the words around each blank"
        )
    elif gap_all > 0:
        context = (
            f"so none of those {100 * gap_all:.1f} points goes beyond it: this evaluation shows no reading "
            "of the context yet"
        )
    else:
        context = "so this evaluation shows no reading of the context yet"
    return (
        f"The loss starts near ln V = {math.log(vocab):.1f} nats (a uniform guess over {vocab:,} ids). "
        f"At the `[MASK]` positions our pretrained BERT scores **{at_mask:.2f}** nats against their "
        f"unigram baseline of {unigram_mask:.2f}: {below_mask}. Over every chosen position it "
        f"scores {at_chosen:.2f}, {side_all} their unigram baseline of {unigram:.2f}; but the "
        f"copy-aware floor, {floor:.2f}, is already {gap_floor:.1%} below it without reading any "
        f"context, {context}. The training loss (a running mean over a twentieth of the run) {when}; it is "
        "measured with dropout on fresh masks, so it says how the training went, and the evaluation "
        "above what the model reads."
    )


def pretrained_vs_control(
    pretrained: float,
    control: float,
    data: BertData,
    run: ModernRun,
    *,
    chapter_06: Mapping[str, float] | None = None,
    reference: ReferenceRun | None = None,
) -> str:
    """Section 10.5: the pretrained encoder against the control (the same fine-tuning from random weights),
    one run each: pretrained and control, their test accuracies, on the ``data.test`` reviews of ``data``
    (the chapter's :func:`~fromscratch.chapters.ch10_modern_transformers.bert_imdb.imdb_for_bert`), read
    ``run.bert.context`` words at a time (run: the chapter's sizes, ``prof.ch10``). For scale, chapter
    06's ``cpu`` reference run: chapter_06, its bag's and its transformer's accuracy (default: its
    ``results.json``); reference, its sizes (default: the ``cpu`` profile's)."""
    n_test, context = len(data.test), run.bert.context
    bag, transformer = (chapter_06 or CHAPTER_06).values()
    reference = reference or get_profile("cpu").ch06
    said = compare(pretrained, control, floor=_noise(pretrained, control, n_test))
    apart = f"{abs(said.gap) * 100:.1f} points apart"
    alike = f"{said.runs}, at the same learning rate"
    if said.side == "within noise":
        verdict = (
            f"{apart}, within the noise of {n_test:,} test reviews ({alike}): pretraining made no "
            "difference that this run can see"
        )
    else:
        ahead = "the pretrained encoder" if said.side == "ahead" else "the control"
        verdict = (
            f"{apart}: {ahead} ahead, beyond the noise of {n_test:,} test reviews ({alike}: another seed "
            "could narrow or widen the gap)"
        )
    return (
        f"With every label, the pretrained encoder scores {pretrained:.1%} and the control {control:.1%} "
        f"on {n_test:,} test reviews (a balanced set: half right is chance), {verdict}. For scale, "
        f"chapter 06's `cpu` reference run scored {bag:.1%} and {transformer:.1%} with its bag of "
        f"embeddings and its transformer, reading {reference.model.context:,} words of each review where "
        f"these read {context:,}, for {plural(reference.train.epochs, 'epoch')}."
    )


def zero_shot(accuracy: float, n: int, majority: float, positive: float) -> str:
    """Section 10.6: zero-shot MiniLM on ``n`` reviews against always answering the commoner class (which
    scores ``majority``); positive: the share it put nearer the positive sentence."""
    side = versus_chance(accuracy, majority, n)
    baseline = f"the {majority:.1%} of always answering the commoner class"
    words = {
        "above": f"above {baseline}, beyond the noise of",
        "at": f"no better than {baseline}, within the noise of",
        "below": f"below {baseline}, beyond the noise of",
    }[side]
    return (
        f"Zero-shot, MiniLM gets {accuracy:.1%} of {n:,} test reviews right, {words} {n:,} reviews, and it "
        f"puts {positive:.0%} of them nearer the positive sentence."
    )


def lr_pick(few: LabelEfficiencyRun) -> str:
    """Where this profile's learning rates for the label-efficiency curve come from, as a table caption."""
    if few.picked_in is None:
        return "set by hand for this profile: no benchmark run picked them"
    return (
        f"picked by benchmarks/label_efficiency.py at N = {few.lr_labels:,} on {few.val_reviews:,} "
        f"held-out reviews, in the `{few.picked_in}` profile"
    )


def label_efficiency(curve: Mapping[tuple[int, str], Sequence[float]], n_test: int) -> str:
    """Section 10.6: the chapter's own label-efficiency run, one sentence per N: ours and MiniLM against
    random weights (``curve``: ``{(N, init): [accuracy]}``, one seed), on ``n_test`` balanced test reviews."""
    sentences = []
    for n in sorted({n for n, _ in curve}):
        random = curve[n, "random"][0]
        parts = []
        for init in ("ours", "minilm"):
            said = compare(curve[n, init][0], random, floor=_noise(curve[n, init][0], random, n_test))
            gap = f"{abs(said.gap) * 100:.1f} points"
            them = "random weights" if init == "ours" else "them"
            parts.append(
                {
                    "ahead": f"{NAMES[init]} is {gap} ahead of {them}",
                    "behind": f"{NAMES[init]} is {gap} behind {them}",
                    "within noise": f"{NAMES[init]} is within noise of {them} ({gap} apart)",
                }[said.side]
            )
        stuck = [NAMES[i] for i in NAMES if versus_chance(curve[n, i][0], 0.5, n_test) != "above"]
        chance = {0: "", 3: " (all three at chance)"}.get(len(stuck), f" ({join_words(stuck)} at chance)")
        sentences.append(f"At N = {n:,}{chance}, {parts[0]}, and {parts[1]}.")
    return (
        f"{' '.join(sentences)} One seed each, scored on {n_test:,} test reviews: a gap under about "
        f"{_noise(0.5, 0.5, n_test) * 100:.1f} points is within their noise, and another seed moves the "
        "fine-tuning itself (the benchmark's three seeds follow)."
    )


def frozen_start(
    neighbours: Mapping[str, Sequence[str]],
    frozen: Mapping[str, float],
    curve: Mapping[tuple[int, str], Sequence[float]],
    few: LabelEfficiencyRun,
    n_test: int,
) -> str:
    """Section 10.6: does our pretraining give a worse start than random weights, or does the short
    fine-tuning fail to use it? neighbours: the nearest words of each of :data:`PROBED` (nearest first);
    frozen: the frozen linear probe's accuracy on ``"ours"`` and ``"random"``, trained on the largest N of
    ``few.chapter_labels``; curve: the fine-tuned accuracies (``{(N, init): [accuracy]}``); n_test: the
    test reviews."""
    n = max(few.chapter_labels)
    tuned, steps, lr = curve[n, "ours"][0], few.steps(n), few.lr("ours")

    def opposite(word: str) -> set[str]:  # the sentiment words of the other polarity
        return NEGATIVE if word in POSITIVE else POSITIVE

    mixed = [word for word in PROBED if opposite(word) & set(neighbours[word][:3])]
    count = len(mixed)
    some = {0: "none of the four has", 1: "one of the four has", 4: "all four have"}.get(
        count, f"{count} of the four have"
    )
    listed = "; ".join(f"{word}: {', '.join(neighbours[word][:3])}" for word in PROBED)
    ours, random = frozen["ours"], frozen["random"]
    said = compare(ours, random, floor=_noise(ours, random, n_test))
    against = f"{ours:.1%} against {random:.1%}"
    if said.side == "ahead":
        start = (
            f"*more* sentiment than random ones ({against}, beyond the noise of {n_test:,} test "
            "reviews): the start is not worse."
        )
        if tuned < ours:
            start += (
                f" The fine-tuning is what fails: it ends at {tuned:.1%}, below a linear probe on the same "
                f"frozen start, in {plural(steps, 'step')} at a learning rate of {lr:g}."
            )
    elif said.side == "behind":
        hint = ", as the neighbours suggest" if mixed else ", although the neighbours did not suggest it"
        start = (
            f"*less* sentiment than random ones ({against}, beyond the noise of {n_test:,} test "
            f"reviews): a worse start{hint}."
        )
    else:
        start = (
            f"about as much sentiment as random ones ({against}, within the noise of {n_test:,} test "
            "reviews): no better a start, and no clearly worse one."
        )
    return (
        f'In this run, among the three nearest words to "good", "bad", "best" and "worst", {some} a '
        f"sentiment word of the opposite polarity ({listed}). The frozen probes say that the pretrained "
        f"outputs carry {start}"
    )


__all__ = [
    "NEGATIVE",
    "POSITIVE",
    "PROBED",
    "SENTIMENT",
    "ReferenceRun",
    "frozen_start",
    "label_efficiency",
    "lr_pick",
    "masked_lm",
    "pretrained_vs_control",
    "zero_shot",
]
