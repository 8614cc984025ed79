"""Chapter 18's computed sentences: each takes the run's numbers and returns the text the chapter prints
(``viz.prose``), its verdicts decided here by tested rules, never typed into the notebook.

Every function is rendered in ``tests/test_prose_ch18.py`` with the ``gpu`` profile's sizes and results on
both sides of each verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch18_interpretability.analysis import InContext, top_scored
from fromscratch.chapters.ch18_interpretability.profile import InterpRun
from fromscratch.viz import verdicts as v

FORMED = 0.5  # an induction head: more than half its weight on the token after the previous occurrence
SAE_GOAL = 0.9  # the share of planted features an SAE should recover (the goal)


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _proportion(p) -> str:
    """A :class:`~fromscratch.metrics.intervals.Proportion` as "62 % [55 %, 68 %]"."""
    return f"{_pct(p.value)} [{_pct(p.low)}, {_pct(p.high)}]"


def _head(head: Sequence[int]) -> str:
    return f"{head[0]}.{head[1]}"


def uniform_induction(period: int) -> float:
    """The induction score of a causal head that spreads its weight evenly: ``mean 1/(i + 1)`` over the
    repeated queries ``i = period .. 2 period - 1``."""
    return sum(1 / (i + 1) for i in range(period, 2 * period)) / period


def _share(base: InContext, ablated: InContext) -> float | None:
    """The share of the in-context gain an ablation undoes (None when there is no gain to undo)."""
    return (ablated.repeat - base.repeat) / base.gain if base.gain > 0 else None


def phase_change(history: Mapping[str, Sequence], period: int, vocab: int) -> str:
    """18.2: the in-context loss and the best induction score over training. ``history``: per measurement,
    ``step``, ``first`` and ``repeat`` (the two losses) and ``induction`` (every head's score, ``(L, h)``)."""
    steps, first, repeat = history["step"], history["first"], history["repeat"]
    best = [float(scores.max()) for scores in history["induction"]]
    text = (
        f"Over {v.plural(steps[-1], 'step')} the loss on the repeat went from {repeat[0]:.2f} to "
        f"{repeat[-1]:.2f} nats while the first pass, which no model can predict, stayed near "
        f"{first[-1]:.2f} (chance, ln {vocab}, is {math.log(vocab):.2f}): an in-context gain of "
        f"{first[-1] - repeat[-1]:.2f} nats. The best induction "
        f"score went from {best[0]:.2f} to {best[-1]:.2f} "
        f"(a head that spreads its weight evenly scores {uniform_induction(period):.3f})"
    )
    if best[-1] < FORMED:
        return text + (
            f". No head puts more than half its weight on the token after the previous occurrence yet: "
            f"{v.plural(steps[-1], 'step')} are too few for the phase change."
        )
    half = next(s for s, b in zip(steps, best, strict=True) if b >= best[-1] / 2)
    falls = [repeat[i] - repeat[i + 1] for i in range(len(steps) - 1)]
    steepest = max(range(len(falls)), key=falls.__getitem__)
    return text + (
        f"; it passed half its final value at step {half:,}, "
        "and the repeat's loss fell fastest between steps "
        f"{steps[steepest]:,} and {steps[steepest + 1]:,}. The "
        "head and the in-context learning appear together, "
        "abruptly, after a plateau: the phase change."
    )


def ablation(
    base: InContext,
    no_induction: InContext,
    no_previous: InContext,
    induction_head: Sequence[int],
    previous_head: Sequence[int],
    before: float,
    after: float,
) -> str:
    """18.2: what zero-ablating the induction head and the previous-token head does (``before``, ``after``:
    the induction head's score with and without the previous-token head)."""
    share = _share(base, no_induction)
    if share is None:
        return (
            f"The model has no in-context gain to undo yet ({base.gain:+.2f} nats), so the ablations below "
            "measure noise; the cpu profile's run trains it long enough."
        )
    text = (
        f"Zero-ablating head {_head(induction_head)}, the induction head, raises the loss on the repeat from "
        f"{base.repeat:.2f} to {no_induction.repeat:.2f} nats: "
        f"it undoes {_pct(share)} of the in-context gain. "
        f"Ablating head {_head(previous_head)}, layer 0's previous-token head, takes head "
        f"{_head(induction_head)}'s induction score from {before:.2f} to {after:.2f} and undoes "
        f"{_pct(_share(base, no_previous))} of the gain"
    )
    if after < before / 2:
        return text + (
            ": the induction head finds the previous occurrence through the previous-token head's output, "
            "a circuit of two heads in two layers (K-composition)."
        )
    return text + ": the induction head does not depend on that head alone in this run."


def real_heads(
    name: str,
    previous_top: Sequence[tuple[int, int, float]],
    induction_top: Sequence[tuple[int, int, float]],
    base: InContext,
    ablated: InContext,
    control: InContext,
    period: int,
) -> str:
    """18.3: a real model's strongest heads (``(layer, head, score)``), and what ablating its top induction
    heads (``ablated``) and as many random heads (``control``) does to the loss on the repeat."""
    listed = [f"{layer}.{head} ({score:.2f})" for layer, head, score in induction_top]
    previous = [f"{layer}.{head} ({score:.2f})" for layer, head, score in previous_top]
    k = len(induction_top)
    text = (
        f"{name}'s strongest induction heads are {v.join_words(listed)}, against "
        f"{uniform_induction(period):.3f} for an even spread; its strongest previous-token heads "
        f"{v.join_words(previous)}. On {v.plural(period, 'token')} "
        "of random text seen twice, the repeat costs "
        f"{base.repeat:.2f} nats against {base.first:.2f} the first time, a gain of {base.gain:.2f}. "
    )
    share = _share(base, ablated)
    if share is None:
        return text + "There is no in-context gain for an ablation to undo."
    return text + (
        f"Zero-ablating the top {v.plural(k, 'induction head')} raises the repeat's loss by "
        f"{ablated.repeat - base.repeat:+.2f} nats (undoing "
        f"{_pct(share)} of the gain); {v.plural(k, 'head')} "
        f"drawn at random, by {control.repeat - base.repeat:+.2f} nats."
    )


def real_models(real: Mapping[str, Mapping], k: int, period: int) -> str:
    """18.3: :func:`real_heads` for every model of ``real``: name -> ``previous``, ``induction`` (``(L, h)``
    scores) and the :class:`InContext` losses ``base``, ``ablated`` and ``control``."""
    return " ".join(
        real_heads(
            name,
            top_scored(r["previous"], k),
            top_scored(r["induction"], k),
            r["base"],
            r["ablated"],
            r["control"],
            period,
        )
        for name, r in real.items()
    )


def lens(prompts: Sequence[str], settled: Sequence[int | None], depth: int) -> str:
    """18.3: the block from which the model's final next token tops the logit lens at every later block,
    per prompt (None: only at the last block)."""
    said = [
        f"from block {layer} of {depth} on for “{prompt}”"
        if layer is not None
        else f"only at the last block for “{prompt}”"
        for prompt, layer in zip(prompts, settled, strict=True)
    ]
    early = [layer for layer in settled if layer is not None]
    ending = (
        "where it settles early, the answer can be read off the stream before the output, and the later "
        "blocks keep it on top (the column's probability shows how much more sure they make it)"
        if early
        else "the answer is assembled late, in the last block"
    )
    return f"The model's final next token tops the lens, and stays on top, {v.join_words(said)}: {ending}."


def patching(clean: float, corrupted: float, cells: Sequence[tuple[int, str, float]], heads) -> str:
    """18.4: the logit differences of the two prompts, the (block, token, share) cells of the residual
    stream that restore most, and the heads (``(layer, head, share)``) that restore most. The behaviour
    is there when each prompt gets its own name (clean > 0 > corrupted)."""
    if not clean > 0 > corrupted:
        return (
            f"The model does not tell the two prompts apart: the logit difference is {clean:.2f} on the "
            f"clean prompt and {corrupted:.2f} on the corrupted one, where a model that tracks the names "
            "gives a positive and a negative number. There is no behaviour to locate: the maps show noise."
        )
    where = [f"block {layer} at “{token}” ({_pct(share)})" for layer, token, share in cells]
    who = [f"{layer}.{head} ({_pct(share)})" for layer, head, share in heads]
    shares = [share for *_, share in cells] + [share for *_, share in heads]
    beyond = (
        " A share above 100 % is no error: that one activation, put alone into the corrupted run, makes it "
        "prefer the right name by more than the clean run does, because in the clean run other parts "
        "push the other way and cancel some of it."
        if max(shares, default=0.0) > 1
        else ""
    )
    return (
        f"The clean prompt prefers the right name by {clean:.2f} logits, the corrupted one the other by "
        f"{-corrupted:.2f}. Patched one position at a time, the residual stream restores most at "
        f"{v.join_words(where)}; single heads restore most at {v.join_words(who)}.{beyond}"
    )


def probes(accuracy: Sequence, train: int, references: Mapping[str, float]) -> str:
    """18.5: the probes' test accuracy per block (``accuracy``: Wilson
    :class:`~fromscratch.metrics.intervals.Proportion` s), fitted on ``train`` labelled reviews, beside
    chapter 15's accuracies on the same test reviews (``references``: name -> accuracy; may be empty)."""
    best = max(range(len(accuracy)), key=lambda i: accuracy[i].value)
    top, n = accuracy[best], accuracy[best].n
    readable = next((i for i, a in enumerate(accuracy) if a.low > 0.5), None)
    text = (
        f"Fitted on {v.plural(train, 'labelled review')} (one draw of them) and scored on {n} test reviews, "
        f"the probe after "
        f"block {best} is the best: {_proportion(top)}. The blocks are ranked on those test reviews, so "
        f"the best of {len(accuracy)} is a little optimistic. "
        + (
            f"The interval lies above chance already after block {readable}: sentiment is written in the "
            "stream, in a form one direction reads"
            + (
                " (after the first block the stream holds little more than the words themselves, and an "
                "average of words tells sentiment apart, as chapter 08's bag of embeddings does; the later "
                f"blocks add to it, up to block {best})."
                if readable == 0
                else "."
            )
            if readable is not None
            else "No block's interval lies above chance: these reviews do not show sentiment written in a "
            "form one direction reads."
        )
    )
    for name, value in references.items():
        if top.low > value:
            said = "below the probe's interval: the stream holds more than that reading of the model gets out"
        elif top.high < value:
            said = "above the probe's interval"
        else:
            said = "inside the probe's interval: these test reviews do not tell the two apart"
        text += f" Chapter 15's {name} on the same reviews: {_pct(value)}, {said}."
    return text


_MOVED = {  # (up, down) -> what the push did
    (True, True): "moves the text both ways beyond the intervals",
    (True, False): "moves the text toward positive beyond the intervals, not toward negative",
    (False, True): "moves the text toward negative beyond the intervals, not toward positive",
    (False, False): "shows no change beyond the intervals",
}


NAMES = ("probe", "word reader")  # 18.5's two readers of the steered text


def steering(read_by: Mapping[str, Sequence], accuracy, layer: int, size: InterpRun) -> str:
    """18.5: the share of continuations read as positive per steering strength (``size.steer_strengths``,
    0 included: no push) by ``read_by["probe"]`` and ``read_by["word reader"]`` (Proportions); accuracy:
    the word reader's on the probes' test reviews (a Proportion); size: the chapter's run (``prof.ch18``)."""
    top, bottom = max(size.steer_strengths), min(size.steer_strengths)
    by = {name: dict(zip(size.steer_strengths, p, strict=True)) for name, p in read_by.items()}
    # (up, down) per reader: did the strongest pushes leave the unsteered interval?
    probe, words = ((by[n][top].low > by[n][0.0].high, by[n][bottom].high < by[n][0.0].low) for n in NAMES)
    share = {
        s: f"{_pct(by['probe'][s].value)} and {_pct(by['word reader'][s].value)}" for s in (0.0, top, bottom)
    }
    same = probe == words != (False, False)  # both readers see the same change
    if probe == words:
        verdict = f"The two readers agree: the push {_MOVED[probe]}"
    else:
        verdict = f"The readers disagree: to the probe the push {_MOVED[probe]}; to the word reader, it"
        verdict += f" {_MOVED[words]}"
    return (
        f"Read by the probe and by the word reader, {share[0.0]} of the {by['probe'][0.0].n} unsteered "
        f"continuations are positive; pushed along the probe's direction at block {layer} by {top:g} "
        f"standard deviations, {share[top]}; by {bottom:g}, {share[bottom]}. {verdict} "
        f"({v.plural(size.steer_samples, 'sample')} per prompt and strength, {v.seeds_said(1)}). The probe "
        "reads the text afresh through the unsteered model. The word reader never saw the model: logistic "
        f"regression on which of the {size.reader_vocab:,} most frequent words of "
        f"{size.reader_reviews:,} IMDb training reviews a text holds, {_proportion(accuracy)} right on the "
        f"probes' {accuracy.n} test reviews"
        + (", and it sees the change too: the push wrote sentiment into the words." if same else ".")
    )


def sae(share: float, before: float, features: int, threshold: float) -> str:
    """18.6: the share of planted directions an SAE's dictionary recovered."""
    verdict = "meeting the goal" if share >= SAE_GOAL else "short of the goal"
    return (
        f"The trained dictionary matches {_pct(share)} of the "
        f"{features} planted directions at a cosine of at "
        f"least {threshold:g}, {verdict} of {_pct(SAE_GOAL)}; the random dictionary it started from matched "
        f"{_pct(before)}."
    )


def story_sae(explained: float, fires: Sequence[float], k: int, tokens: int, block: int) -> str:
    """18.6: the SAE on stories260K's residual stream; ``fires``: how often each latent was on."""
    latents, dead = len(fires), sum(1 for f in fires if f == 0)
    return (
        f"On {tokens:,} positions of stories260K's residual stream after block {block}, the SAE rebuilds "
        f"{_pct(explained)} of the stream's variance from {k} of its {latents} codes per token; "
        + (f"{v.plural(dead, 'latent')} never fired on these tokens." if dead else "every latent fired.")
    )
