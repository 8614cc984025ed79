"""Chapter 15's computed sentences: each takes the run's numbers and returns the text the chapter prints
(``viz.prose``), its verdicts decided here by tested rules, never typed into the notebook.

Every function is rendered in ``tests/test_prose_ch15.py`` with the ``gpu`` profile's sizes and results on
both sides of each verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from fromscratch.chapters.ch15_assistant.assistant_imdb import CONTENT_FREE, Arm
from fromscratch.chapters.ch15_assistant.base_chat import Following
from fromscratch.chapters.ch15_assistant.paired import Difference, paired_bootstrap
from fromscratch.chapters.ch15_assistant.preference import Preferences
from fromscratch.chapters.ch15_assistant.write_back import Survival
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.viz import verdicts as v


def oracles(
    gaps: Sequence[float],
    strings: Sequence[str],
    with_special: int,
    tokenizer: BytePairEncoding,
    same: Sequence[bool],
) -> str:
    """15.1: how close our logits and token ids came to ``transformers``'.

    gaps: the largest logit difference on each prompt; strings: the probe strings, ``with_special`` of them
    holding special tokens; tokenizer: ours, read from the GGUF file (a ``SparseByteBPE``'s ``missing``
    byte values have no token); same: whether both tokenisers gave the same ids, string by string.
    """
    missing = len(tokenizer.missing) if hasattr(tokenizer, "missing") else 0
    probes = v.plural(len(strings), "probe string")
    agree = "got the same ids from both tokenisers" if all(same) else "did **not** all get the same ids"
    text = (
        f"On {v.plural(len(gaps), 'prompt')} the largest difference between our logits and `transformers`' "
        f"was {max(gaps):.1e}. The {probes} ({with_special} of them with special tokens) {agree}."
    )
    if missing:
        text += (
            f" Our tokeniser had one thing to learn: {v.plural(missing, 'byte value')} of the 256 have no "
            "token in this vocabulary (bytes ordinary text never holds: invalid in UTF-8, lead bytes of "
            "unassigned planes, a few control characters), and `transformers` silently **drops** such a "
            "byte, so ours does too."
        )
    return text


def greedy(identical: Sequence[bool], tokens: int) -> str:
    """15.2: our cached decoding against ``transformers``' ``generate``."""
    return (
        f"{sum(identical)} of {v.plural(len(identical), 'conversation')} continued greedily for "
        f"{v.plural(tokens, 'token')} each agreed token for token with `transformers`' `generate`."
    )


def base_chat(before: Following, after: Following, loss: tuple[float, float], size) -> str:
    """15.3: what full SFT did to stories260K on held-out requests (``size``: the chapter's ``ChatRun``)."""
    noise = 2 * v.binomial_se(0.5, after.n)
    stops, answers = after.stopped - before.stopped > noise, after.both - before.both > noise
    if stops and answers:
        verdict = "It learned the format: where a reply starts, what it answers, and where it stops."
    elif answers:
        verdict = "It learned what to answer, not yet where to stop."
    elif stops:
        verdict = "It learned where to stop, not yet what to answer."
    else:
        verdict = "Neither share moved beyond the noise of so few requests (one run)."
    return (
        f"On {v.plural(after.n, 'held-out request')} the base model ended its turn with `<|im_end|>` in "
        f"{before.stopped:.0%} of its replies and named both the person and the thing asked for in "
        f"{before.both:.0%}; after {v.plural(size.base_train.steps, 'step')} of SFT, {after.stopped:.0%} and "
        f"{after.both:.0%}. The loss on the held-out answers went from {loss[0]:.2f} to {loss[1]:.2f} nats "
        f'a token. {verdict} Every trained answer opens with the same sentence ("... named Tom. Tom had '
        "a kite.\"), so naming both measures copying the request's two words into a learned opening, not "
        "writing a story about them; the free-form request above, outside that template, shows the rest."
    )


def step_cost(costs: dict, size, device: str) -> str:
    """15.4: a LoRA step against a full fine-tuning step (``costs``: ``StepCost`` by name)."""
    lora, full, repeats = costs["LoRA"], costs["full fine-tuning"], size.cost_repeats
    grads = lambda k: k.gradient_bytes + k.optimizer_bytes  # noqa: E731
    text = (
        f"A LoRA step took {lora.seconds:.2f} s and a full fine-tuning step {full.seconds:.2f} s "
        f"(LoRA {v.times(full.seconds / lora.seconds)}; the median of {v.plural(repeats, 'step')} each on "
        f"{device}, one run). Gradients and AdamW's moments shrink {grads(full) / grads(lora):,.0f}-fold, "
        "and "
        f"a step holds {v.times(full.bytes / lora.bytes, more='fewer bytes', less='more bytes')}."
    )
    if full.bytes / lora.bytes > full.seconds / lora.seconds:
        text += " The time falls less than the memory: the backward pass still runs through every block."
    return text


BITS = {"Q4_1": "4-bit", "Q8_0": "8-bit"}


def write_back(survivals: Sequence[Survival], gap: float, scores: dict, written: dict[str, dict]) -> str:
    """15.4: what merging and re-quantising kept of the LoRA update, in each block format (``survivals``,
    the source's Q4_1 first), and whether each written file (``written``: its held-out scores by format)
    scores as the tuned model (``scores``)."""
    first, *others = survivals
    text = (
        f"{first.below_half_step:.0%} of the update's {first.entries:,} entries are smaller than half "
        f"a {first.kind} step of their block, and the written file keeps the {BITS[first.kind]} level of "
        f"{first.unchanged:.0%} of all entries as it was before the update; projected on the update, "
        f"it keeps {first.kept:.0%} of it."
    )
    for other in others:
        text += (
            f" Written in {other.kind} instead, {other.below_half_step:.0%} of the entries are below half "
            f"a step, the {BITS[other.kind]} level of {other.unchanged:.0%} stays, and the file keeps "
            f"{other.kept:.0%} of the update."
        )
    text += (
        f" `transformers` reads the {first.kind} file we wrote and its logits equal ours within {gap:.1e}."
    )
    same = [k for k, w in written.items() if all(abs(scores[t][1] - w[t][1]) < 1e-9 for t in scores)]
    differ = [k for k in written if k not in same]
    if same:
        files = "file" if len(same) == 1 else "files"
        text += f" The held-out scores of the {v.join_words(same)} {files} equal the tuned model's."
    if differ:
        files = "file" if len(differ) == 1 else "files"
        text += f" Those of the {v.join_words(differ)} {files} differ from the tuned model's (table above)."
    return text


def dpo(prefs: Preferences, size, sft: Preferences | None = None) -> str:
    """15.5: the DPO run on held-out pairs, and beside it (``sft``) LoRA-SFT on the same pairs' chosen
    answers."""
    steps, pairs, beta = size.dpo_train.steps, size.dpo_pairs, size.dpo_beta
    r, p, ref = prefs.reward_accuracy, prefs.policy_accuracy, prefs.reference_accuracy
    kl, low, high = prefs.kl
    return (
        f"After {v.plural(steps, 'step')} of DPO on {v.plural(pairs, 'pair')} (β = {beta:g}, one run), the "
        f"implicit reward ranks the preferred answer first on {r.value:.1%} of "
        f"{v.plural(r.n, 'held-out pair')} "
        f"(95 % interval {r.low:.1%} to {r.high:.1%}). The policy itself prefers it on {p.value:.1%}, the "
        f"reference on {ref.value:.1%}. Its first reply token moved {kl:.3f} nats from the reference "
        f"(KL, 95 % interval {low:.3f} to {high:.3f})."
        + ("" if sft is None else " " + _beside_sft(prefs, sft, size))
    )


def _beside_sft(prefs: Preferences, sft: Preferences, size) -> str:
    """15.5: DPO against LoRA-SFT on the chosen answers of the same pairs, for the same steps."""
    steps = v.plural(size.dpo_train.steps, "step")
    text = (
        f"LoRA-SFT on the chosen answers of the same pairs, for the same {steps}: "
        f"its implicit reward ranks the chosen answer first on {sft.reward_accuracy.value:.1%}, the policy "
        f"prefers it on {sft.policy_accuracy.value:.1%}, and its first token moved {sft.kl[0]:.3f} nats."
    )
    if prefs.chosen_first is None or sft.chosen_first is None:
        return text
    d = paired_bootstrap(prefs.chosen_first, sft.chosen_first)
    return text + f" On the same held-out pairs, {difference('DPO', d, 'SFT', 'pairs')}."


def difference(name: str, d: Difference, baseline: str, items: str = "reviews") -> str:
    """One paired comparison in words: ``name`` against ``baseline``, on the same ``items``."""
    points = f"{abs(d.value) * 100:.1f} points"
    interval = f"paired 95 % interval {d.low * 100:+.1f} to {d.high * 100:+.1f} points"
    if d.verdict == "not distinguishable":
        return f"{name} and {baseline} are not told apart by these {items} ({points} apart; {interval})"
    side = "ahead of" if d.verdict == "ahead" else "behind"
    return f"{name} is {side} {baseline} by {points} ({interval})"


def _pull(ends_positive: Arm, ends_negative: Arm) -> str:
    """How the last example's label moved the mean probability of ``positive``, paired (draws, then
    reviews resampled)."""
    pp, pn = ends_positive.p_positive, ends_negative.p_positive
    d = paired_bootstrap(pp, pn)
    said = (
        f"the mean probability of `positive` was {d.a:.2f} after a positive last example and {d.b:.2f} "
        f"after a negative one, a difference of {d.value:+.2g} (paired 95 % interval {d.low:+.2g} to "
        f"{d.high:+.2g})"
    )
    if d.verdict == "not distinguishable":
        return f"{said}: the order moved it less than the noise of these reviews and draws"
    towards = "towards" if d.verdict == "ahead" else "away from"
    return f"{said}: the last example's label pulls the answer {towards} itself"


def few_shot(arms: Sequence[Arm], zero: Arm, shots: int) -> str:
    """15.6: recency bias, from the prompting arms: the shares answered ``positive`` in the two orders,
    and, because a share saturates (every answer ``positive`` in both orders shows no order), the mean
    probability of ``positive`` behind them."""
    named = {a.name: a for a in arms}
    ends_p, ends_n = named[f"{shots}-shot, ends positive"], named[f"{shots}-shot, ends negative"]
    draws, reviews = ends_p.correct.size(0), zero.correct.size(1)
    shares = ends_p.said_positive, ends_n.said_positive
    noise = 2 * v.binomial_se(0.5, reviews)  # the reviews are the independent items, not draws x reviews
    text = (
        f"Half of the test reviews are positive. Asked with no example, the model answered `positive` to "
        f"{zero.said_positive:.0%} of them; after {shots} examples ending with a positive one, to "
        f"{shares[0]:.0%}, and after the same examples ending with a negative one, to {shares[1]:.0%} "
        f"({v.plural(draws, 'draw')} of examples each)."
    )
    saturated = min(shares) >= 1 - noise or max(shares) <= noise
    if saturated:
        label = "positive" if min(shares) >= 1 - noise else "negative"
        text += (
            f" Both orders are **saturated**: nearly every answer is `{label}`, whatever the review, so the "
            "shares cannot show which way the order pulls."
        )
    if ends_p.p_positive is None or ends_n.p_positive is None:
        return text
    if not saturated:
        return text + " Behind those answers, " + _pull(ends_p, ends_n) + "."
    return text + " The probabilities behind them can: " + _pull(ends_p, ends_n) + "."


def _quoted_input(text: str) -> str:
    return f'"{text}"' if text else "an empty review"


def calibration(plain: Arm, calibrated: Arm, calibrated_shots: Sequence[Arm]) -> str:
    """15.6: what contextual calibration did to the zero-shot prompt (paired) and to the few-shot ones
    (against chance), and what the content-free reviews it divides by got."""
    d = paired_bootstrap(calibrated.correct, plain.correct)
    text = difference("Calibrated, zero-shot", d, "the plain prompt") + "."
    if calibrated.content_free is not None:
        free = calibrated.content_free.mean(0).tolist()  # (3,): each content-free review's p(positive)
        each = v.join_words(f"{p:.2f} to {_quoted_input(t)}" for p, t in zip(free, CONTENT_FREE, strict=True))
        prior = sum(free) / len(free)
        text += (
            " Calibration divides each answer's probability by the mean that the same prompt gives the "
            f"content-free reviews ({prior:.2f} for `positive`), as if those reviews were neutral and only "
            f"the prompt's lean set their answers. The prompt gave `positive` {each}"
        )
        if d.verdict == "behind":
            text += (
                ": they are not neutral (each reads as a review of its own), so dividing by their mean "
                "added a lean instead of removing one"
            )
        elif d.verdict == "ahead":
            text += ", and dividing by their mean took out a lean of the prompt's own"
        else:
            text += ", and dividing by their mean moved the accuracy less than the noise"
        text += (
            f". Calibrated, the prompt answered `positive` to {calibrated.said_positive:.0%} of the reviews "
            f"(plain: {plain.said_positive:.0%})."
        )
    for a in calibrated_shots:
        where = v.versus_chance(a.accuracy, 0.5, a.correct.size(1))
        free = "" if a.content_free is None else f"; its content-free p(positive) {a.content_free.mean():.2f}"
        text += f" {a.name[0].upper()}{a.name[1:]}: {a.accuracy:.1%} right, {where} chance{free}."
    return text


def imdb(arms: Sequence[Arm], size) -> str:
    """15.6: the table's reading: recency bias (:func:`few_shot`, the two orders), calibration
    (:func:`calibration`), then at the largest N the most accurate learning arm, and how it compares,
    paired, with the other learning arms and with zero-shot prompting (``arms[0]``)."""
    largest = max(size.labels)
    shots = [a for a in arms if a.n == size.shots and "-shot" in a.name and "calibrated" not in a.name]
    last = [a for a in arms if a.n == largest and "-shot" not in a.name and a is not arms[0]]
    text = few_shot(shots, arms[0], size.shots)
    calibrated = next((a for a in arms if a.name == "zero-shot, calibrated"), None)
    if calibrated is not None:
        shots_calibrated = [a for a in arms if "-shot, ends" in a.name and a.name.endswith("calibrated")]
        text += " " + calibration(arms[0], calibrated, shots_calibrated)
    if not last:
        return text
    best = max(last, key=lambda a: a.accuracy)
    others = [(a.name, a) for a in last if a is not best] + [("zero-shot prompting", arms[0])]
    parts = "; ".join(
        difference(best.name, paired_bootstrap(best.correct, a.correct), name) for name, a in others
    )
    return text + (
        f" With N = {largest} labels the most accurate learning arm is **{best.name}** ({best.accuracy:.1%}, "
        f"{v.seeds_said(best.correct.size(0))}). Paired on the same test reviews (seeds, then reviews "
        f"resampled): {parts}."
    )


__all__ = [
    "base_chat",
    "calibration",
    "difference",
    "dpo",
    "few_shot",
    "greedy",
    "imdb",
    "oracles",
    "step_cost",
    "write_back",
]
