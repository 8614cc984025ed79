"""Chapter 14's sentences about its own run: each takes the run's numbers and sizes and returns the text
the chapter shows under a result, ``viz.prose(prose.summary(change, step_ms, kv_list, mib, token_ms, size))``.

A rung of the ladder counts as a change only when the mean of its paired per-seed differences is
beyond their spread over the seeds (:func:`~fromscratch.viz.verdicts.paired`): that every seed moved the
same way is not enough, since 3 seeds of a change with no effect agree 1 time in 4. One seed decides
nothing. Ratios are said with
:func:`~fromscratch.viz.verdicts.times`, so no sentence reads "0 times faster". tests/test_prose_ch14.py
renders every function on both sides of each verdict, with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch14_modern_decoders.profile import DecodersRun
from fromscratch.viz.verdicts import agree_by_chance, paired, plural, times

__all__ = ["gqa_decoding", "ladder", "ladder_and_timing", "on", "rung_verdict", "summary", "timing"]


def on(device: str) -> str:
    """``"on the CPU"``, ``"on the GPU"`` (CUDA), ``"on mps"``."""
    return {"cpu": "on the CPU", "cuda": "on the GPU"}.get(device, f"on {device}")


def _how_timed(device: str, repeats: int) -> str:
    steps = f"median of {plural(repeats, 'run')}"
    return f"{steps}, torch on one CPU thread" if device == "cpu" else f"{steps}, timed {on(device)}"


def _what(name: str) -> str:  # a rung's name as the change it makes
    return name.removeprefix("+ ")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _than(speed: float) -> str:
    """``speed`` = one's rate over another's: ``"1.25 times faster than"``, ``"about as fast as"``."""
    said = times(speed, digits=2)
    return f"{said} as" if said.startswith("about") else f"{said} than"


def _flat(text: str) -> str:
    """One paragraph: the line breaks and indentation of a triple-quoted f-string become single spaces."""
    return " ".join(text.split())


# --- 14.1 the ladder ------------------------------------------------------------------------------
def rung_verdict(d: Sequence[float]) -> str:
    """The paired changes of one rung in bits per byte (this rung minus the rung above, one per seed),
    in words: lower or higher only when their mean is beyond their spread over the seeds."""
    if len(d) < 2:
        return "one seed: no lesson"
    said = paired([-v for v in d])  # lower bits per byte is better
    if said.side == "ahead":
        return "lower, beyond the seeds' spread"
    if said.side == "behind":
        return "higher, beyond the seeds' spread"
    every = "both" if len(d) == 2 else f"all {len(d)}"
    if all(v < 0 for v in d) or all(v > 0 for v in d):
        way = "lower" if d[0] < 0 else "higher"
        return (
            f"{way} in {every} seeds but within their spread ({plural(len(d), 'seed')} agree by chance "
            f"{agree_by_chance(len(d))})"
        )
    return "lower in some seeds, higher in others: noise at this budget"


def ladder(change: Mapping[str, Sequence[float]], *, seeds: int) -> str:
    """14.1's headline: ``change`` = ``{rung name: [bits per byte minus the rung above's, per seed]}``."""
    best = min(change, key=lambda name: _mean(change[name]))
    gain = -_mean(change[best])
    verdict = rung_verdict(change[best])
    over = f"on average over {plural(seeds, 'seed')}" if seeds > 1 else "in one seed"
    if gain <= 0:
        return _flat(f"""At equal steps no change lowered the loss {over}; the smallest rise came from
        {_what(best)} ({-gain:+.3f} bits per byte, {verdict}).""")
    if paired([-v for v in change[best]]).decided:  # beyond the seeds' spread, more than one seed
        return _flat(f"""At equal steps the largest gain came from **{_what(best)}**: {gain:.3f} bits per byte
        below the rung above {over}, {verdict}. The table says which other changes moved the loss
        beyond their seeds' spread.""")
    return _flat(f"""At equal steps the largest drop came from {_what(best)}, {gain:.3f} bits per byte {over},
    but {verdict}. The table says whether any change moved the loss beyond its seeds' spread.""")


def timing(
    step_ms: Mapping[str, float], part_ms: Mapping[str, float], *, repeats: int, device: str, load: float
) -> str:
    """14.1's timing pass: ``step_ms`` = ``{rung: ms per training step}``; ``part_ms`` = ms of a forward
    and backward of ``{LayerNorm, RMSNorm, MLP, SwiGLU}``, in that order."""
    slow, fast = max(step_ms, key=step_ms.get), min(step_ms, key=step_ms.get)
    fewer = 1 - step_ms[fast] / step_ms[slow]
    layer, rms, mlp, glu = part_ms.values()
    if fewer < 0.005:
        spread = f"""Every step cost about {step_ms[fast]:.1f} ms: in the same minutes every rung would
        make about the same number of steps."""
    else:
        spread = f"""A step cost {step_ms[fast]:.1f} ms ({fast}) to {step_ms[slow]:.1f} ms ({slow}): in the
        same minutes the slowest rung would make {100 * fewer:.0f} % fewer steps than the fastest."""
    return _flat(f"""The timing pass ({_how_timed(device, repeats)}, load average {load:.1f}) is the clock's
    side. {spread} At the ladder's size SwiGLU's forward and backward ran {_than(mlp / glu)} the
    MLP's ({glu:.2f} against {mlp:.2f} ms), and our written-out RMSNorm ran {_than(layer / rms)}
    PyTorch's fused LayerNorm ({rms:.3f} against {layer:.3f} ms).""")


def ladder_and_timing(
    change: Mapping[str, Sequence[float]],
    step_ms: Mapping[str, float],
    part_ms: Mapping[str, float],
    size: DecodersRun,
    device: str,
    load: float,
) -> str:
    """14.1's two paragraphs under the ladder's table: :func:`ladder` then :func:`timing`.

    change: ``{rung name: [bits per byte minus the rung above's, per seed]}``; step_ms: ``{rung: ms per
    training step}``; part_ms: ms of a forward and backward of ``{LayerNorm, RMSNorm, MLP, SwiGLU}``, in
    that order; size: the chapter's run (``prof.ch14``: its ``seeds`` and ``timing_repeats``);
    device: where the timing pass ran (``device.type``); load: the load average when it began.
    """
    said = ladder(change, seeds=size.seeds)
    timed = timing(step_ms, part_ms, repeats=size.timing_repeats, device=device, load=load)
    return f"{said}\n\n{timed}"


# --- 14.2 grouped-query attention -----------------------------------------------------------------
def gqa_decoding(
    kv: Sequence[int],
    mib: Sequence[float],
    prefill_ms: Sequence[float],
    token_ms: Sequence[float],
    size: DecodersRun,
    device: str,
) -> str:
    """14.2's measurement: for each key/value head count in ``kv`` (sorted, the decoder's ``heads`` among
    them), the cache in MiB (``mib``), the prefill of ``batch`` prompts of ``prompt`` tokens
    (``prefill_ms``) and one cached decoding step (``token_ms``), medians of ``repeats`` runs.

    size: the chapter's run (``prof.ch14``): ``size.gqa.heads``, ``size.gqa_batch``,
    ``size.gqa_prompt``, ``size.gqa_new`` (the tokens decoded after the prefill), ``size.gqa_repeats``;
    device: where it was timed (``device.type``).
    """
    heads, batch, prompt = size.gqa.heads, size.gqa_batch, size.gqa_prompt
    new, repeats = size.gqa_new, size.gqa_repeats
    mha, mqa = kv.index(heads), 0  # all heads (multi-head), the fewest
    speed = f"{_than(token_ms[mha] / token_ms[mqa])} with all {heads}"
    share = prefill_ms[mha] / (prefill_ms[mha] + new * token_ms[mha])
    whole = ", so timing whole calls would measure mostly the prefill" * (share > 0.5)
    fewest = plural(kv[mqa], "key/value head")
    return _flat(f"""The cache went from {mib[mha]:.2f} MiB with all {heads} key/value heads to {mib[mqa]:.2f}
    MiB with {kv[mqa]}: exactly {mib[mha] / mib[mqa]:g} times smaller, as the shapes say. A decoding
    step took {token_ms[mha]:.2f} ms with {heads} key/value heads and {token_ms[mqa]:.2f} ms with
    {fewest} ({_how_timed(device, repeats)}): with {kv[mqa]} the steps were **{speed}**. The prefill
    of the {batch} prompts of {prompt:,} tokens took {prefill_ms[mha]:.0f} ms with all heads and
    {prefill_ms[mqa]:.0f} ms with {kv[mqa]}; a whole call that prefills and then decodes
    {plural(new, "token")} would spend {100 * share:.0f} % of its time in the prefill{whole}.""")


# --- the Summary ----------------------------------------------------------------------------------
def summary(
    change: Mapping[str, Sequence[float]],
    step_ms: Mapping[str, float],
    kv: Sequence[int],
    mib: Sequence[float],
    token_ms: Sequence[float],
    size: DecodersRun,
) -> str:
    """The Summary's lines about this run: ``change`` and ``step_ms`` as :func:`ladder_and_timing` takes
    them, ``kv``, ``mib`` and ``token_ms`` as :func:`gqa_decoding`; size: the chapter's run
    (``prof.ch14``: the ladder's ``seeds`` and ``train.steps``, ``gqa.heads`` the query heads of
    14.2's decoder)."""
    seeds, steps, heads = size.seeds, size.train.steps, size.gqa.heads
    best = min(change, key=lambda name: _mean(change[name]))
    gain = -_mean(change[best])
    if gain > 0:
        moved = (
            f"{_what(best)} lowered the loss most: {-gain:+.3f} bits per byte ({rung_verdict(change[best])})"
        )
    else:
        moved = (
            f"no change lowered the loss on average; the smallest rise, {-gain:+.3f}, came from {_what(best)}"
        )
    slow, fast = max(step_ms.values()), min(step_ms.values())
    mha, mqa = kv.index(heads), 0
    speed = _than(token_ms[mha] / token_ms[mqa])
    each = f"{plural(steps, 'step')} per rung, {plural(seeds, 'seed')}"
    ladder = _flat(f"""- In this run, at equal steps ({each}), {moved}; a step of the slowest rung
    cost {slow / fast:.2f} times the fastest's.""")
    decoding = _flat(f"""- Decoding with {plural(kv[mqa], "key/value head")} instead of {heads}: a cache
    {mib[mha] / mib[mqa]:g} times smaller, and decoding steps {speed} with {heads} here.""")
    return f"{ladder}\n{decoding}"
