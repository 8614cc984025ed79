"""Chapter 17's computed sentences: each takes the run's numbers and returns the text the chapter prints
(``viz.prose``), its verdicts decided here by tested rules, never typed into the notebook.

Every function is rendered in ``tests/test_prose_ch17.py`` with the ``gpu`` profile's sizes and results on
both sides of each verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch17_reasoning.scores import DRAWS, Interval
from fromscratch.viz import verdicts as v


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _interval(i: Interval) -> str:
    return f"{_pct(i.value)} [{_pct(i.low)}, {_pct(i.high)}]"


def moved(change: Interval) -> v.Comparison:
    """A paired change (after - before, per problem) against zero: beyond noise when its bootstrap
    interval's half-width is smaller than the change (one run: it never decides a lesson alone)."""
    return v.compare(change.value, 0.0, floor=(change.high - change.low) / 2)


def _points(change: Interval) -> str:
    side = moved(change).side
    word = {"ahead": "rose", "behind": "fell", "within noise": "moved within noise"}[side]
    return f"{word} by {100 * change.value:+.1f} points [{100 * change.low:+.1f}, {100 * change.high:+.1f}]"


def estimators(results: Sequence, draws: int) -> str:
    """17.1: which estimators' mean gradient matched the exact one, and how the variance fell with ``n``.
    ``results``: :class:`~.tabular.BiasVariance` records of every estimator at every group size."""
    names = list(dict.fromkeys(r.name for r in results))
    unbiased = [name for name in names if all(r.bias <= 2 * r.bias_se for r in results if r.name == name)]
    biased = [name for name in names if name not in unbiased]
    largest = max(r.n for r in results)
    smallest = min(r.n for r in results)
    text = (
        f"Over {draws:,} groups per size, the mean estimate of "
        f"{v.join_words(unbiased) if unbiased else 'no estimator'} "
        f"{'was' if len(unbiased) == 1 else 'were'} within two standard errors of the exact gradient at "
        "every group size: unbiased, as the algebra says."
    )
    if biased:
        parts = []
        for name in biased:
            rows = {r.n: r for r in results if r.name == name}
            parts.append(
                f"{name} (its mean is {rows[smallest].scale:.2f} times the gradient at n = "
                f"{smallest}, {rows[largest].scale:.2f} times at n = {largest}, at a cosine of at least "
                f"{min(r.cosine for r in rows.values()):.4f} with it)"
            )
        text += (
            f" {v.join_words(parts)} {'is' if len(biased) == 1 else 'are'} biased in size: with rewards of 0 "
            "or 1 the group's mean and std depend only on how many samples were right, and each count scales "
            "the gradient by a positive number, which leaves its direction alone."
        )
    var = {name: {r.n: r.variance for r in results if r.name == name} for name in names}
    ratio = {name: var[name][smallest] / var[name][largest] for name in names}
    text += (
        f" The variance fell about {min(ratio.values()):.0f} to {max(ratio.values()):.0f} times from n = "
        f"{smallest} to n = {largest} ({largest // smallest} times the samples)."
    )
    return text


def sft(before, pass_one: Interval, pass_n: Interval, steps: int, held_out: int) -> str:
    """17.3: where imitation left the model on the held-out problems."""
    if pass_one.low > 0 and pass_one.high < 1:
        verdict = "right on some problems and wrong on others: room for reinforcement learning"
    elif pass_one.high <= 0:
        verdict = "never right: no sample earns a reward, and RL has nothing to push toward"
    else:
        verdict = "solved: every sample is right, every advantage is zero, and RL has nothing to learn"
    return (
        f"After {v.plural(steps, 'step')} of imitation, the model writes a well-formed answer in "
        f"{_pct(before.formatted.mean())} of its samples. On {v.plural(held_out, 'held-out problem')} "
        f"its pass@1 (one sample at temperature 1) is {_interval(pass_one)}, and pass@{before.n} (one "
        f"right among {before.n} tries) is {_interval(pass_n)}: {verdict}."
    )


def curves(curves: Mapping[str, Sequence[float]], steps: int, samples: int) -> str:
    """17.4: how the GRPO run's curves moved, the first tenth of the steps against the last tenth
    (``samples``: the rewards behind each step's mean, ``g · n``)."""
    k = max(1, len(curves["reward"]) // 10)

    def blocks(name: str) -> list[float]:  # the means of consecutive k steps
        values = list(curves[name])
        return [sum(values[i : i + k]) / len(values[i : i + k]) for i in range(0, len(values), k)]

    (r0, r1), (l0, l1), (e0, e1) = ((blocks(n)[0], blocks(n)[-1]) for n in ("reward", "length", "entropy"))
    kl = blocks("kl")[-1]
    noise = 2 * v.binomial_se(min(max(r1, 0.0), 1.0), k * samples)
    ended = {"rising": "was still rising", "flat": "had levelled off", "fell": "had fallen from its best"}
    trend = ended[v.trend(blocks("reward"), noise=noise)]
    return (
        f"Over {v.plural(steps, 'step')}, the mean reward of the training samples went from {r0:.2f} "
        f"(the first {v.plural(k, 'step')}) to {r1:.2f} (the last {k}), and at the end the curve {trend}. "
        f"Responses went from {l0:.1f} to {l1:.1f} tokens, the entropy from {e0:.3f} to {e1:.3f} nats per "
        f"token, and the KL to the SFT model ended at {kl:.3f} nats per token."
    )


def before_after(rows: Sequence[Mapping], n: int, held_out: int) -> str:
    """17.5: pass@1, pass@n and majority@n before and after, paired on the same problems; one run."""
    by = {row["metric"]: row for row in rows}
    one, many, vote = by["pass@1"], by[f"pass@{n}"], by[f"majority@{n}"]
    text = (
        f"On the same {v.plural(held_out, 'held-out problem')}, pass@1 went from "
        f"{_interval(one['before'])} to {_interval(one['after'])}: it {_points(one['change'])}. "
        f"pass@{n} went from {_interval(many['before'])} to {_interval(many['after'])} "
        f"({_points(many['change'])}), and the majority vote of {n} samples from "
        f"{_interval(vote['before'])} to {_interval(vote['after'])} ({_points(vote['change'])})."
    )
    gap_before = many["before"].value - one["before"].value
    gap_after = many["after"].value - one["after"].value
    up_one, up_many = moved(one["change"]).side, moved(many["change"]).side
    if up_one == "ahead" and up_many != "ahead":
        reading = (
            f"RL moved pass@1 toward pass@{n} without solving problems that none of the {n} samples "
            "solved before: "
            "it made the model's best answers its usual ones"
        )
    elif up_many == "ahead":
        reading = (
            f"pass@{n} rose beyond noise too: after RL, some problems that none of the SFT model's {n} "
            "samples solved get solved"
        )
    elif up_one == "behind":
        reading = "RL made the model worse on problems it was not trained on"
    else:
        reading = "at this budget RL changed nothing that the interval can tell from noise"
    text += (
        f" The gap between pass@{n} and pass@1 went from {100 * gap_before:.1f} to {100 * gap_after:.1f} "
        "points."
    )
    return (
        text + f" Read together: {reading}. This is {v.seeds_said(1)}, intervals from a bootstrap over "
        f"the problems ({DRAWS:,} resamples); another seed would move these numbers."
    )


def summary(rows: Sequence[Mapping], n: int, minutes: float) -> str:
    """The summary's computed line."""
    by = {row["metric"]: row for row in rows}
    one, many = by["pass@1"], by[f"pass@{n}"]
    return (
        f"In this run ({v.seeds_said(1)}, {minutes:.1f} minutes of GRPO on this machine), held-out "
        f"pass@1 went from {_pct(one['before'].value)} to {_pct(one['after'].value)} and pass@{n} from "
        f"{_pct(many['before'].value)} to {_pct(many['after'].value)}."
    )


def chat_before(before, pass_one: Interval, model: str, held_out: int) -> str:
    """17.6: the chat model as read, on the held-out sums, before any training."""
    if pass_one.high <= 0:
        verdict = "never right: no sample earns a reward, and GRPO has nothing to push toward"
    elif pass_one.low >= 1:
        verdict = "always right: every advantage is zero, and GRPO has nothing to learn"
    else:
        verdict = "right on some samples: GRPO has something to reinforce"
    return (
        f"As read from its file, {model} writes a well-formed answer in {_pct(before.formatted.mean())} of "
        f"its samples, and on {v.plural(held_out, 'held-out problem')} its pass@1 is {_interval(pass_one)}: "
        f"{verdict}."
    )


def chat_after(rows: Sequence[Mapping], before, after, chat, minutes: float) -> str:
    """17.6: the chat model after ``chat.rl.steps`` GRPO steps on its LoRA matrices, paired on the same
    held-out problems (``chat``: the profile's :class:`~.profile.ChatRun`); ``minutes``: the GRPO steps'
    time on this machine; one run."""
    rl, held_out = chat.rl, chat.held_out
    by = {row["metric"]: row for row in rows}
    one = by["pass@1"]
    return (
        f"After {v.plural(rl.steps, 'GRPO step')} of {v.plural(rl.problems, 'problem')} x {rl.group} "
        f"samples on LoRA's matrices ({minutes:.1f} minutes on this machine), pass@1 on the same "
        f"{v.plural(held_out, 'held-out problem')} went from {_interval(one['before'])} to "
        f"{_interval(one['after'])}: it {_points(one['change'])}, and well-formed answers went from "
        f"{_pct(before.formatted.mean())} to {_pct(after.formatted.mean())} of the samples. This is "
        f"{v.seeds_said(1)} of {v.plural(rl.steps, 'step')}: another seed, or more steps, would move these "
        "numbers."
    )
