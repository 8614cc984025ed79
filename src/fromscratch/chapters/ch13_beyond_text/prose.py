"""Chapter 13's sentences about its own run: each takes the run's numbers and sizes and returns the text
the chapter shows under a result, ``viz.prose(prose.sets(set_accuracy, size))``.

Accuracies are fractions measured on ``n`` test items; a gap counts when it is larger than twice the
standard error of the accuracies compared (:func:`~fromscratch.viz.verdicts.binomial_se`) and, across
seeds, than the seeds' spread; one run never decides a lesson. The verdicts come from
:mod:`fromscratch.viz.verdicts`; tests/test_prose_ch13.py renders every function on both sides of each,
with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch13_beyond_text.profile import BeyondRun
from fromscratch.viz.verdicts import Comparison, binomial_se, compare, join_words, plural, versus_chance

__all__ = ["graph", "images", "local_mask", "local_verdict", "positions", "sets", "summary"]

GUESS = 0.1  # ten classes, drawn uniformly: the odd digit's class, an MNIST digit's


def _pct(p: float, digits: int = 1) -> str:
    return f"{100 * p:.{digits}f} %"


def _accuracies(a: float, b: float, n: int) -> Comparison:
    """One run each of two accuracies on the same ``n`` items: a gap counts beyond twice their noise."""
    noise = 2 * math.hypot(binomial_se(a, n), binomial_se(b, n))
    return compare(a, b, floor=noise)


def _spread(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _flat(text: str) -> str:
    """One paragraph: the line breaks and indentation of a triple-quoted f-string become single spaces."""
    return " ".join(text.split())


# --- 13.1 sets ------------------------------------------------------------------------------------
def sets(accuracy: Mapping[str, float], size: BeyondRun) -> str:
    """13.1: ``accuracy`` = ``{"DeepSets": ..., "set transformer": ...}`` on the ``size.set_test`` test
    sets, one run of each after the same ``size.set_train.steps``; size: the chapter's run
    (``prof.ch13``)."""
    n_sets, steps = size.set_test, size.set_train.steps
    deep, settr = accuracy["DeepSets"], accuracy["set transformer"]
    said = _accuracies(settr, deep, n_sets)
    if said.side == "ahead":
        meet = """The gap is larger than the test sets' own noise: in these steps, letting the
        digits meet before the average made the comparison easier to learn."""
    elif said.side == "behind":
        meet = """DeepSets came out ahead, by more than the test sets' own noise: in this run,
        averaging first did not hold it back."""
    else:
        meet = "The two are within the test sets' own noise of each other."
    stalled = versus_chance(settr, GUESS, n_sets) == "at"
    if stalled:
        meet += """ The set transformer stayed at guessing: a loss flat at $\\ln 10$ is the sign to
        lower the learning rate (the note below) before concluding anything."""
    trace = {
        "above": """DeepSets is above guessing: the average of nine equal digits and one odd one
        still carries a trace of the odd one, and its $\\rho$ learned to read some of it.""",
        "at": """DeepSets is at guessing: in these steps its $\\rho$ did not learn to read the trace
        of the odd digit that the average carries.""",
        "below": """DeepSets is below guessing: what it learned in these steps points it away from
        the odd digit.""",
    }[versus_chance(deep, GUESS, n_sets)]
    return _flat(f"""In this run (one run of each, the same {plural(steps, "step")} on the same sets) the set
    transformer found the odd digit in **{_pct(settr)}** of the {n_sets:,} test sets and DeepSets in
    **{_pct(deep)}**, against {_pct(GUESS, 0)} for guessing. {meet} {trace}""")


# --- 13.2 images ----------------------------------------------------------------------------------
def images(scores: Mapping[str, float], *, n_test: int) -> str:
    """13.2: ``scores`` = ``{"ViT": ..., "CNN": ...}``, test accuracies on ``n_test`` digits after the
    same minutes, one run of each."""
    said = _accuracies(scores["ViT"], scores["CNN"], n_test)
    noise = f"the {n_test:,} test digits' own noise (±{100 * said.noise:.2f} points)"
    if said.side == "within noise":
        return _flat(f"""One run of each: the ViT and the CNN are within {noise} of each other
        ({100 * abs(said.gap):.2f} points apart).""")
    return _flat(f"""One run of each: {said.says("the ViT", "the CNN", digits=2)}, more than {noise}; how much
    of that a different seed would change, one run cannot say.""")


def positions(scores: Mapping[str, tuple[float, float]], *, n_test: int, patch: int) -> str:
    """13.2, the order of the patches: ``scores`` = ``{"ViT, grid positions": (plain, shuffled), "ViT,
    no positions": (plain, shuffled)}``, in that order: each ViT's accuracy on the ``n_test`` test
    digits and on the same digits with their ``patch`` x ``patch`` patches shuffled; one run of each."""
    (grid, grid_shuffled), (bag, bag_shuffled) = scores.values()
    shuffle = _accuracies(grid_shuffled, grid, n_test)
    relies = {
        "behind": "it relies on where each patch is",
        "within noise": "the shuffle moved it no more than the test digits' noise",
        "ahead": "the shuffle did not hurt it (it even scored higher)",
    }[shuffle.side]
    same = "the same on both" if abs(bag - bag_shuffled) < 1e-9 else "nearly the same"
    worth = _accuracies(grid, bag, n_test)
    if worth.side == "ahead":
        lesson = f"So the order of the patches was worth {100 * worth.gap:.1f} points in this run"
    elif worth.side == "behind":
        lesson = f"""So in this run the ViT without positions was {100 * -worth.gap:.1f} points ahead: at
        this budget the positions cost more to learn than they gave"""
    else:
        lesson = f"""So in this run the positions made no difference beyond the test digits' noise
        ({100 * abs(worth.gap):.1f} points apart)"""
    if versus_chance(bag, GUESS, n_test) == "above":
        alone = f"""A ${patch} \\times {patch}$ patch of a digit (a piece of a loop, the end of a stroke)
        says much about the digit on its own, and which pieces occur together says more: that is all
        the ViT without positions can read, and it was enough for {_pct(bag, 2)}."""
    else:
        alone = f"""Without positions the ViT reads only which ${patch} \\times {patch}$ patches occur,
        and at this budget that gave it no more than guessing."""
    return _flat(f"""With its grid positions the ViT scored {_pct(grid, 2)}; on the same digits with their
    patches shuffled, {_pct(grid_shuffled, 2)}: {relies}. The ViT without positions scored
    {_pct(bag, 2)} and {_pct(bag_shuffled, 2)}, {same}, as it must, since it cannot tell the two
    apart. {lesson} (one run of each). {alone}""")


# --- 13.2 the local mask --------------------------------------------------------------------------
def _by_size(results: Mapping[str, Mapping[int, Sequence[float]]], n_test: int) -> dict[int, Comparison]:
    """Per training-set size: local against full attention, from the seeds' means and spread."""
    local, full = results["local attention"], results["full attention"]
    said = {}
    for count in local:
        a, b = local[count], full[count]
        floor = 2 * math.hypot(
            binomial_se(statistics.mean(a), n_test), binomial_se(statistics.mean(b), n_test)
        )
        sd = (_spread(a), _spread(b))
        said[count] = compare(statistics.mean(a), statistics.mean(b), sd=sd, seeds=len(a), floor=floor)
    return said


def local_verdict(results: Mapping[str, Mapping[int, Sequence[float]]], *, n_test: int) -> str:
    """Where the local mask stood against full attention at each training-set size, in a few words:
    ``results`` = ``{"local attention": {count: [accuracy per seed]}, "full attention": {...}}``."""
    said = _by_size(results, n_test)
    seeds = next(iter(said.values())).seeds
    groups = {
        side: [c for c, s in said.items() if s.side == side] for side in ("ahead", "behind", "within noise")
    }
    if seeds == 1:
        parts = [f"ahead with {_sizes(groups['ahead'])} digits"] * bool(groups["ahead"])
        parts += [f"behind with {_sizes(groups['behind'])} digits"] * bool(groups["behind"])
        where = "; ".join(parts) or "level with full attention at every data size"
        if len(groups["ahead"]) == len(said):
            where = "ahead at every data size"
        return f"the local mask was {where} in its one run (one seed decides nothing)"
    spread = f"the {plural(seeds, 'seed')}' spread"
    for side, words in (("ahead", "the local mask was ahead"), ("behind", "full attention was ahead")):
        if len(groups[side]) == len(said):
            return f"{words} at every data size, by more than {spread}"
    if len(groups["within noise"]) == len(said):
        return f"the two masks were within {spread} at every data size"
    parts = [f"ahead with {_sizes(groups['ahead'])} digits"] * bool(groups["ahead"])
    parts += [f"behind with {_sizes(groups['behind'])} digits"] * bool(groups["behind"])
    parts += [f"within {spread} with {_sizes(groups['within noise'])} digits"] * bool(groups["within noise"])
    return "the local mask was " + "; ".join(parts)


def _sizes(counts: Sequence[int]) -> str:
    return join_words([f"{c:,}" for c in counts])


def local_mask(
    results: Mapping[str, Mapping[int, Sequence[float]]],
    fitted: Mapping[str, Sequence[float]],
    size: BeyondRun,
    *,
    n_test: int,
) -> str:
    """13.2's comparison of the local mask and full attention at several training-set sizes.

    results: ``{"local attention": {count: [test accuracy per seed]}, "full attention": {...}}``; fitted:
    ``{"local attention": [accuracy on its own training digits per seed], ...}`` at the smallest size;
    size: the chapter's run (``prof.ch13``): every run ``size.local_train.steps`` batches of
    ``size.image_batch`` digits, scored on ``n_test`` test digits.
    """
    steps, batch = size.local_train.steps, size.image_batch
    counts = list(results["local attention"])
    first, last = counts[0], counts[-1]
    seeds = len(results["local attention"][first])
    gaps = {
        c: [a - b for a, b in zip(results["local attention"][c], results["full attention"][c], strict=True)]
        for c in (first, last)
    }
    g0, g1 = (statistics.mean(gaps[c]) for c in (first, last))
    moved = compare(g1, g0, sd=(_spread(gaps[last]), _spread(gaps[first])), seeds=seeds)
    if seeds == 1:
        change = "one run each"
    elif moved.decided:
        change = f"{'larger' if g1 > g0 else 'smaller'} with {last:,} digits, by more than the seeds' spread"
    else:
        change = "a difference within the seeds' spread"
    seen = steps * batch
    trained, tested = (
        {n: statistics.mean(v) for n, v in fitted.items()},
        {n: statistics.mean(r[first]) for n, r in results.items()},
    )
    memorised = [
        n
        for n in fitted
        if compare(
            trained[n],
            tested[n],
            sd=(_spread(fitted[n]), _spread(results[n][first])),
            seeds=seeds,
            floor=2 * math.hypot(binomial_se(trained[n], first), binomial_se(tested[n], n_test)),
        ).side
        == "ahead"
    ]
    scores = join_words([f"{n} {_pct(trained[n])} ({_pct(tested[n])} on the test digits)" for n in fitted])
    passes = plural(round(seen / first, 1), "pass", "passes")
    if memorised:
        who = "Both" if len(memorised) > 1 else memorised[0].capitalize()
        fit = f"""{who} scored better on the digits {"they" if len(memorised) > 1 else "it"} trained on
        than on new ones, by more than the noise: after {passes} over so few digits, the smallest size
        also measures how much a model memorises."""
    else:
        fit = f"""Neither scored better on the digits it trained on than on new ones by more than the
        noise: even after {passes} over the smallest set, the comparison measures how fast each model
        learns, not how much it memorises."""
    verdict = local_verdict(results, n_test=n_test)
    lead = ""
    if verdict.startswith("the local mask was ahead at every data size, by more"):
        lead = """ At this budget the model whose prior saves it learning where to look got further,
        whatever the data size."""
    return _flat(f"""At this budget {verdict}. The mean gap (local − full) was {100 * g0:+.1f} points with
    {first:,} training digits and {100 * g1:+.1f} with {last:,}: {change}. Each run saw
    {plural(steps, "batch", "batches")} of {batch} digits, {seen:,} digits in all: {seen / first:,.1f} times
    each of the {first:,} digits of the smallest set, {seen / last:,.2f} times each of the {last:,} of the
    largest. On their own {first:,} training digits, {scores}. {fit}{lead}""")


# --- 13.3 graphs ----------------------------------------------------------------------------------
def graph(scores: Mapping[str, Sequence[float]], *, unlabelled: int) -> str:
    """13.3: ``scores`` = ``{model name: [accuracy on the unlabelled members per draw]}`` with
    ``"full attention, 1 layer"``, one ``"graph mask, ..."`` per depth and ``"label propagation (no
    parameters)"``; every draw scores ``unlabelled`` members."""
    draws = len(next(iter(scores.values())))
    means = {name: statistics.mean(v) for name, v in scores.items()}
    lp = "label propagation (no parameters)"
    masked = {name: m for name, m in means.items() if name.startswith("graph mask")}
    best = max(masked, key=masked.get)
    full = means["full attention, 1 layer"]
    side = versus_chance(full, 0.5, unlabelled * draws)
    if side == "at":
        ignored = f"""With the graph ignored, full attention scored {_pct(full, 0)} on the unlabelled
        members: at guessing (50 %), as the speaker notes below explain it must be."""
    else:
        ignored = f"""With the graph ignored, full attention scored {_pct(full, 0)} on the unlabelled
        members, {side} guessing (50 %) by more than the noise of {unlabelled * draws:,} answers."""
    by_depth = join_words([f"{_pct(m, 0)} ({n.removeprefix('graph mask, ')})" for n, m in masked.items()])
    paired = [a - b for a, b in zip(scores[best], scores[lp], strict=True)]
    n = unlabelled * draws  # answers behind each mean
    floor = 2 * math.hypot(binomial_se(means[best], n), binomial_se(means[lp], n))
    said = compare(statistics.mean(paired), 0.0, sd=(_spread(paired), 0.0), seeds=draws, floor=floor)
    points = f"{100 * abs(said.gap):.0f} points {'above' if said.gap > 0 else 'below'}"
    if draws == 1:
        against = "level with" if said.gap == 0 else points
        caveat = " (one draw: no lesson)"
    elif said.side == "within noise":
        against, caveat = "in line with", " (the gap is within the draws' spread)"
    else:
        against, caveat = points, " (beyond the draws' spread)"
    deepest = best.removeprefix("graph mask, ")
    return _flat(f"""{ignored} Masked by the graph it scored {by_depth}, means over {plural(draws, "draw")} of
    the labelled members (the table gives each row's range: how much depends on which members are
    labelled). The best of them, {deepest}, is {against} label propagation on the same draws
    ({_pct(means[lp], 0)}){caveat}, which learns nothing and only spreads the labels along the
    friendships.""")


# --- the Summary ----------------------------------------------------------------------------------
def summary(
    set_accuracy: Mapping[str, float],
    image_scores: Mapping[str, float],
    local_results: Mapping[str, Mapping[int, Sequence[float]]],
    graph_scores: Mapping[str, Sequence[float]],
    *,
    n_test: int,
) -> str:
    """The Summary's line about this run: ``set_accuracy`` as :func:`sets` takes it, ``image_scores`` as
    :func:`images`, ``local_results`` as :func:`local_mask` takes its ``results`` (said in
    :func:`local_verdict`'s words, scored on ``n_test`` test digits, one accuracy per seed) and
    ``graph_scores`` as :func:`graph`."""
    local = local_verdict(local_results, n_test=n_test)  # it says its seeds
    means = {name: statistics.mean(v) for name, v in graph_scores.items()}
    masked = {name: m for name, m in means.items() if name.startswith("graph mask")}
    best = max(masked, key=masked.get)
    lp = means["label propagation (no parameters)"]
    return _flat(f"""- In this run: set transformer {_pct(set_accuracy["set transformer"])} against DeepSets
    {_pct(set_accuracy["DeepSets"])} and ViT {_pct(image_scores["ViT"], 2)} against CNN
    {_pct(image_scores["CNN"], 2)} (one run each); {local}; the best graph
    mask {_pct(masked[best], 0)} against label propagation's {_pct(lp, 0)}.""")
