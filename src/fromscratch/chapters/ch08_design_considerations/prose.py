"""Chapter 08's computed sentences: each takes the run's numbers and returns Markdown for ``viz.prose``.

The verdicts come from :mod:`fromscratch.viz.verdicts`; ``tests/test_prose_ch08.py`` renders every
branch with the ``gpu`` profile's sizes (longer lengths, seven distances, one seed in the race).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch08_design_considerations.figures import NAMES
from fromscratch.viz import verdicts as v

SLOPE_TOL = 0.1  # two slopes (or a slope and its formula) closer than this read as equal
TIE = 0.05  # step times within 5 % of each other count as a tie: a few repeats, a shared machine
SOLVED = 0.9  # the match task counts as solved at this test accuracy


def _distances(ds: Sequence[int]) -> str:
    """[2, 4, 8] -> "$d = 2$, $4$ and $8$"."""
    return v.join_words([f"$d = {ds[0]}$"] + [f"${d}$" for d in ds[1:]])


# --- 8.1 what recurrence costs --------------------------------------------------------------------
def slopes(slope_all: Mapping[str, float], slope_end: Mapping[str, float], last: int, where: str) -> str:
    """The log-log slopes of the step times: over all lengths and over the ``last`` longest.

    where: how the times were taken ("one CPU thread, load average 2.0", "cuda: NVIDIA H200")."""
    tf_all, tf_end = slope_all["transformer"], slope_end["transformer"]
    if v.relative_to(tf_end, 2.0, tol=SLOPE_TOL) != "below":
        tf_reading = (
            "at 2 or past it, as the $t \\times t$ attention matrix already dominates at these lengths "
            "(past 2, memory traffic grows faster than the arithmetic)"
        )
    elif v.relative_to(tf_end, tf_all, tol=SLOPE_TOL) == "above":
        tf_reading = (
            "rising, on its way to 2 as the $t \\times t$ attention matrix takes over from the linear "
            "parts (the projections and the feed-forward layers), which dominate at short lengths"
        )
    else:
        tf_reading = "not rising, as at these lengths its linear parts (or fixed costs) still dominate"
    cnn_reading = {
        "above": "above the 1 of its linear work: at the longest lengths memory traffic grows faster",
        "close to": "close to the 1 of its linear work",
        "below": "below 1: at these sizes it is not even busy enough to grow linearly",
    }[v.relative_to(slope_end["cnn"], 1.0, tol=SLOPE_TOL)]
    gru = v.relative_to(slope_end["rnn"], 1.0, tol=SLOPE_TOL)
    return (
        "On a log-log plot a time that grows like $t^k$ is a straight line of slope $k$. In this run "
        f"({where}) the transformer's slope was {tf_all:.2f} over all lengths and {tf_end:.2f} over the "
        f"longest {last}: {tf_reading}. The CNN's slope over the longest lengths was "
        f"{slope_end['cnn']:.2f}, {cnn_reading}. The GRU's was {slope_end['rnn']:.2f}, {gru} the 1 "
        "that $t$ sequential steps predict."
    )


def crossing(run, times: Mapping[str, Sequence[float]]) -> str:
    """Does the transformer's step time cross the GRU's over the whole of ``run.timing_lengths``, and
    where? run: the profile's ``SequenceRun``; times: seconds per step, per model and length."""
    lengths, heads, batch = run.timing_lengths, run.transformer.heads, run.timing_batch
    tf, gru = times["transformer"], times["rnn"]
    t_max, first = lengths[-1], lengths[0]
    at_end = f"{tf[-1]:.2f} s against the GRU's {gru[-1]:.2f} s at $t = {t_max}$"
    c = v.crossing(lengths, tf, gru, rel_tol=TIE)
    if c.kind == "several":
        return (
            "The order of the two flipped more than once, at "
            f"{v.join_words(f'$t = {t}$' for t in c.changes)} (the transformer's step {at_end}): at "
            "these lengths the two costs are too close, or the timings too noisy, to say which dominates "
            "on this machine."
        )
    if c.kind == "once" and c.above == "a":
        return (
            f"Here the transformer's step was faster than the GRU's at the shorter lengths and slower from "
            f"$t = {c.at}$ on, at every longer length timed ({at_end}): on this machine the quadratic cost "
            "overtook the sequential one within the lengths timed."
        )
    if c.kind == "once":
        return (
            f"Here the transformer's step was slower than the GRU's at the shortest lengths and faster from "
            f"$t = {c.at}$ on, at every longer length timed ({at_end}): attention's fixed costs weigh on "
            "short sequences, the GRU's sequential steps on long ones."
        )
    if c.above is None:
        return f"The two steps took the same time, within {TIE:.0%}, at every length timed ({at_end})."
    if c.above == "a":
        return (
            "Here the transformer's step was slower than the GRU's at every length timed, from "
            f"$t = {first}$ on ({at_end}): on this machine the GRU's sequential steps cost less than "
            "attention's work at all of these lengths."
        )
    gru_first = all(g > max(c_, t) for g, c_, t in zip(gru, times["cnn"], tf, strict=True))
    where = "the slowest of the three at every length" if gru_first else "slower than the transformer's"
    ratio = gru[-1] / tf[-1]
    doublings = math.log2(ratio)  # each doubling of t closes the gap by a factor 2 (t^2 against t)
    t_meet = t_max * 2**doublings
    gigabytes = batch * heads * t_meet**2 * 4 / 1e9  # fp32 (b, h, t, t), one layer
    size = f"{gigabytes:,.0f}" if gigabytes >= 10 else f"{gigabytes:.2g}"
    return (
        f"The GRU's step was {where}; at $t = {t_max}$ the transformer's was "
        f"{v.times(ratio)} ({tf[-1]:.2f} s against {gru[-1]:.2f} s): each of the GRU's $t$ steps is a "
        "small computation that cannot keep the machine busy, and the backward pass walks the same steps "
        f"again in reverse. So in this run the quadratic cost did **not** overtake the sequential one "
        f"between $t = {first}$ and ${t_max}$. If the transformer's time quadrupled and the GRU's only "
        f"doubled with every doubling of $t$, the gap would close after about {doublings:.1f} more "
        f"doublings, near $t \\approx {t_meet:,.0f}$, where one layer's attention matrices for this batch "
        f"of {batch}, stored as the teaching path stores them ($b \\cdot h \\cdot t^2$ numbers of 4 "
        f"bytes), would take about {size} GB; the fused kernel of chapters 06 and 12 stores none."
    )


# --- 8.2 what convolution cannot see ----------------------------------------------------------------
def _levels(distances: Sequence[int], accuracy: Sequence[float], test_size: int) -> dict[str, list[int]]:
    """The distances a model solved, got above chance without solving, and left at (or below) chance."""
    found = {"solved": [], "above": [], "at": []}
    for d, a in zip(distances, accuracy, strict=True):
        level = v.versus_chance(a, 0.5, test_size, solved=SOLVED)
        found["at" if level == "below" else level].append(d)
    return found


def _model(label: str, levels: dict[str, list[int]], every: str) -> str:
    """ "The GRU solves $d = 2$ and $4$, is above chance at $8$ and at chance at $16$."."""
    solved, above, at = levels["solved"], levels["above"], levels["at"]
    if not above and not at:
        return f"The {label} solves every distance, {every}."
    if not solved and not above:
        return f"The {label} is at chance at every distance."
    parts = [f"solves {_distances(solved)}" if solved else "solves no distance"]
    if above:
        parts.append(f"is above chance, but short of {SOLVED:.0%}, at {_distances(above)}")
    if at:
        parts.append(f"is at chance at {_distances(at)}")
    return f"The {label} {v.join_words(parts)}."


def _conv(label: str, levels: dict[str, list[int]], limit: int, kernel: int, steps: int, last: int) -> str:
    text = _model(label, levels, f"up to {last}")
    lost = sorted(levels["at"])
    if not lost:
        return text
    first = lost[0]
    if first > limit:
        return (
            text
            + f" From $d = {first}$ on that is past its pooled reach of $d \\le {limit}$: no training helps."
        )
    if first < kernel:
        return text + (
            f" At $d = {first}$ a single window of the first block holds both tokens: in this run training "
            f"did not find them in {v.plural(steps, 'step')}."
        )
    return text + (
        f" At $d = {first}$ the pair is within its pooled reach ($d \\le {limit}$) on paper, but later "
        f"blocks have to relay what the first one saw, and in this run that was not learned in "
        f"{v.plural(steps, 'step')}."
    )


def match_task(run, accuracy: Mapping[str, Sequence[float]], reach: int, dilated_reach: int) -> str:
    """What this run measured on the match task, model by model: accuracy per model, one per distance
    of ``run.task_distances``; ``reach``: how far each CNN's output sees each way."""
    distances, test_size, kernel = run.task_distances, run.task.test_size, run.cnn.kernel
    steps, lr = run.task_train.steps, run.task_train.lr
    level = {name: _levels(distances, accuracy[name], test_size) for name in accuracy}
    bag = accuracy["bag"]
    if level["bag"]["at"] == list(distances):
        bag_text = (
            f"The bag of embeddings scored {min(bag):.2f}-{max(bag):.2f}: at chance at every distance, as "
            "the symmetry argument predicts."
        )
    else:
        bag_text = _model("bag of embeddings", level["bag"], "")
    last = distances[-1]
    return (
        f"(Test accuracy on {v.plural(test_size, 'held-out sequence')} after {v.plural(steps, 'step')}, "
        f"every model at the same peak learning rate, {lr:g}; 0.5 is chance, and a distance counts as "
        f"solved at {SOLVED:.0%} or more; one run per cell, seed 0.) {bag_text} "
        f"{_conv('CNN', level['cnn'], 2 * reach, kernel, steps, last)} "
        f"{_conv('dilated CNN', level['dilated cnn'], 2 * dilated_reach, kernel, steps, last)} "
        f"{_model('GRU', level['rnn'], f'up to {last}')} "
        f"{_model('transformer', level['transformer'], 'up to the full length of the sequence')}"
    )


# --- 8.3 Table 1 -----------------------------------------------------------------------------------
def table_one(
    slope_end: Mapping[str, float],
    rows: Sequence[Sequence[str]],
    accuracy: Mapping[str, Sequence[float]],
    far: int,
) -> str:
    """Table 1's rows beside what was measured: slopes, reach and the accuracy at the longest distance.

    slope_end: per model, the log-log slope of its step times over the longest lengths; rows: Table 1
    as shown, one row per layer (``"rnn"``, ``"cnn"``, ``"transformer"``), its name first and its
    measured reach (``"63 of 63"``) sixth; accuracy: per model, the match task's test accuracy at each
    distance, the last at ``far``, the longest."""
    reached = {row[0]: row[5] for row in rows}  # the measured reach of each layer
    accuracy_far = {name: accuracy[name][-1] for name in reached}
    s_rnn, s_tf = slope_end["rnn"], slope_end["transformer"]
    if v.relative_to(s_rnn, 1.0, tol=SLOPE_TOL) == "below":
        rnn_time = f"a time that grew like $t^{{{s_rnn:.2f}}}$, less than linearly (fixed costs)"
    else:
        rnn_time = f"a time that grew like $t^{{{s_rnn:.2f}}}$, at least linearly"
    if v.relative_to(s_tf, 1.0, tol=SLOPE_TOL) == "above":
        tf_time = (
            f"work that grows like $t^2$, visible in the slope ($t^{{{s_tf:.2f}}}$) once $t$ outgrows $e$"
        )
    else:
        tf_time = (
            "work that grows like $t^2$, though at these lengths its time grew only like "
            f"$t^{{{s_tf:.2f}}}$: the linear parts still dominate"
        )
    return (
        "Compare the rows with the measurements. The recurrent layer's $t$ sequential operations show up "
        f"as {rnn_time}; its path of length $t - 1$ as the fading triangle (reach {reached['rnn']}) and an "
        f"accuracy of {accuracy_far['rnn']:.2f} at $d = {far}$. The convolution's path is cut off at its "
        f"reach ({reached['cnn']}), and its accuracy at $d = {far}$ is {accuracy_far['cnn']:.2f}. "
        f"Attention's single step is the full square (reach {reached['transformer']}) and an accuracy of "
        f"{accuracy_far['transformer']:.2f} at $d = {far}$, paid for with {tf_time}."
    )


# --- 8.4 IMDb: four models, one budget --------------------------------------------------------------
def race(
    run, runs: Mapping[str, Sequence[tuple[float, float, float]]], train_reviews: int, test_reviews: int
) -> str:
    """The race's order by mean test accuracy; a lesson only when more than one seed stands behind a gap
    beyond the noise. runs: per model, one ``(steps, seconds, test accuracy)`` per seed."""
    seconds, context, batch = run.imdb_train.minutes * 60, run.imdb_max_len, run.imdb_batch
    n = min(len(r) for r in runs.values())
    mean = {name: statistics.fmean(r[2] for r in rs) for name, rs in runs.items()}
    sd = {name: statistics.stdev(r[2] for r in rs) if n > 1 else 0.0 for name, rs in runs.items()}
    steps = {name: statistics.fmean(r[0] for r in rs) for name, rs in runs.items()}
    ranked = sorted(mean, key=mean.get, reverse=True)
    first, second = ranked[:2]
    floor = 2 * math.sqrt(2) * v.binomial_se(mean[first], test_reviews)
    lead = v.compare(mean[first], mean[second], sd=(sd[first], sd[second]), seeds=n, floor=floor)
    said = {name: NAMES.get(name, name) for name in ranked}  # "rnn" -> "GRU", as the tables say
    order = ", then ".join(
        f"{said[name]} ({100 * mean[name]:.1f} %, {steps[name]:,.0f} steps)" for name in ranked
    )
    cheapest = sorted(steps, key=steps.get, reverse=True)[:2]  # the two that took the most steps
    if not lead.decided:
        why = "one run each" if n == 1 else "within the seeds' spread and the test set's noise"
        lesson = (
            f"The first two are {why}, so this order is no lesson about the architectures; the benchmark "
            "below repeats the race."
        )
    elif first in cheapest:
        beaten = [name for name in ranked[1:] if steps[name] < steps[first]]
        more = [name for name in ranked[1:] if steps[name] >= steps[first]]
        also = (
            f" (only the {said[more[0]]} took more, {steps[more[0]]:,.0f}, and scored lower)" if more else ""
        )
        lesson = (
            f"Across {v.plural(n, 'seed')} the {said[first]} leads by more than the noise. At this budget "
            f"cheap steps win: with {steps[first]:,.0f} steps{also} it beat "
            f"{v.join_words([f'the {said[name]}' for name in beaten])}, which made fewer updates."
        )
    else:
        lesson = (
            f"Across {v.plural(n, 'seed')} the {said[first]} leads by more than the noise, and the ranking "
            "does not follow the step counts: a model with fewer, dearer steps used them better within this "
            "budget."
        )
    passes = steps["bag"] * batch / train_reviews
    return (
        f"In a budget of {v.plural(seconds, 'second')} the bag of embeddings took {steps['bag']:,.0f} "
        f"steps, about {v.plural(round(passes), 'pass', 'passes')} over the {train_reviews:,} training "
        f"reviews, and the GRU, with its {context} sequential positions per review, {steps['rnn']:,.0f}. "
        "By test accuracy "
        f"({v.seeds_said(n)}) the order was {order}. {lesson}"
    )
