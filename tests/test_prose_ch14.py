"""Chapter 14's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch14_modern_decoders import prose

SIZE = get_profile("gpu").ch14
NAMES = [name for name, _ in SIZE.ladder]


def flat(text):
    return " ".join(text.split())


@pytest.mark.parametrize(
    "d, said",
    [
        ([-0.02, -0.01, -0.03], "lower, beyond the seeds' spread"),
        ([0.02, 0.01, 0.03], "higher, beyond the seeds' spread"),
        (
            [-0.20, -0.01, -0.02],
            "lower in all 3 seeds but within their spread (3 seeds agree by chance 1 time in 4)",
        ),
        ([0.20, 0.01, 0.02], "higher in all 3 seeds but within their spread"),
        ([-0.2, -0.01], "lower in both seeds but within their spread (2 seeds agree by chance 1 time in 2)"),
        ([-0.02, 0.01, -0.03], "noise at this budget"),
        ([-0.2], "one seed: no lesson"),
    ],
)
def test_rung_verdict(d, said):
    assert said in prose.rung_verdict(d)
    assert_reads(prose.rung_verdict(d))


def _change(best, seeds=SIZE.seeds):
    """Every rung's paired changes: small noise, and ``best`` (per seed) for the + RoPE rung."""
    wobble = [0.004 * ((s % 3) - 1) for s in range(seeds)]
    change = {name: [0.003 + w for w in wobble] for name in NAMES[1:]}
    change["+ RoPE"] = best[:seeds]
    return change


@pytest.mark.parametrize(
    "best, headline",
    [
        ([-0.4, -0.35, -0.45], "the largest gain came from **RoPE**"),
        ([-0.4, 0.2, -0.45], "the largest drop came from RoPE"),
        ([-0.4, -0.01, -0.05], "the largest drop came from RoPE"),  # every seed lower, within the spread
        ([0.001, 0.002, 0.0015], "no change lowered the loss"),
    ],
)
def test_ladder_bolds_a_gain_only_beyond_the_seeds_spread(best, headline):
    text = prose.ladder(_change(best), seeds=SIZE.seeds)
    assert_reads(text)
    assert headline in flat(text)
    assert ("**" in text) == headline.endswith("**RoPE**")


def test_ladder_one_seed():
    text = prose.ladder(_change([-0.4], seeds=1), seeds=1)
    assert_reads(text)
    assert "in one seed" in flat(text) and "no lesson" in text and "**" not in text


def _parts(layer, rms, mlp, glu):
    return {"LayerNorm": layer, "RMSNorm": rms, "MLP": mlp, "SwiGLU": glu}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize(
    "parts, said",
    [
        (_parts(0.1, 0.3, 2.0, 2.02), ["about as fast as the MLP's", "3.00 times slower than PyTorch's"]),
        (_parts(0.3, 0.1, 2.0, 1.0), ["2.00 times faster than the MLP's", "3.00 times faster than"]),
    ],
)
@pytest.mark.parametrize("steps", [(10.0, 14.0), (12.0, 12.0)])
def test_timing(device, parts, said, steps):
    step_ms = dict(zip(NAMES, [steps[0]] * (len(NAMES) - 1) + [steps[1]], strict=True))
    text = prose.timing(step_ms, parts, repeats=SIZE.timing_repeats, device=device, load=0.5)
    assert_reads(text)
    for words in said:
        assert words in flat(text)
    assert ("thread" in text) == (device == "cpu")
    assert ("fewer steps" in text) == (steps[0] != steps[1])


def test_ladder_and_timing_joins_the_two_paragraphs():
    change = _change([-0.4, -0.35, -0.45])
    step_ms = dict.fromkeys(NAMES, 12.0)
    parts = _parts(0.3, 0.1, 2.0, 1.0)
    text = prose.ladder_and_timing(change, step_ms, parts, SIZE, "cuda", 0.5)
    assert_reads(text)
    ladder = prose.ladder(change, seeds=SIZE.seeds)
    timing = prose.timing(step_ms, parts, repeats=SIZE.timing_repeats, device="cuda", load=0.5)
    assert text == f"{ladder}\n\n{timing}"
    assert f"median of {SIZE.timing_repeats} runs" in text


@pytest.mark.parametrize(
    "token, said",
    [
        (0.5, "**2.00 times faster than with all"),
        (2.0, "**2.00 times slower than with all"),
        (1.0, "**about as fast as with all"),
    ],
)
def test_gqa_decoding(token, said):
    kv = sorted(SIZE.gqa_kv_heads)
    heads = SIZE.gqa.heads
    mib = [24.0 * k / heads for k in kv]
    token_ms = [token if k == kv[0] else 1.0 for k in kv]
    text = prose.gqa_decoding(kv, mib, [900.0] * len(kv), token_ms, SIZE, "cuda")
    assert_reads(text)
    assert said in text and f"{said} {heads}**" in flat(text)
    assert f"all {heads} key/value heads" in text and f"exactly {heads:g} times smaller" in flat(text)
    assert f"the {SIZE.gqa_batch} prompts of {SIZE.gqa_prompt:,} tokens" in flat(text)
    assert f"median of {SIZE.gqa_repeats} runs" in text
    assert f"decodes {SIZE.gqa_new:,} tokens" in flat(text)


@pytest.mark.parametrize(
    "best, moved", [([-0.4, -0.35, -0.45], "lowered the loss most"), ([0.01] * 3, "no change")]
)
def test_summary_names_the_gqa_models_heads(best, moved):
    kv = sorted(SIZE.gqa_kv_heads)
    heads = SIZE.gqa.heads  # 12 at gpu: not stories260K's 8
    step_ms = dict.fromkeys(NAMES, 10.0)
    text = prose.summary(_change(best), step_ms, kv, [24.0 * k / heads for k in kv], [1.0] * len(kv), SIZE)
    assert_reads(text)
    assert moved in flat(text)
    assert f"({SIZE.train.steps:,} steps per rung, {SIZE.seeds} seeds)" in flat(text)
    assert f"1 key/value head instead of {heads}: a cache {heads:g} times smaller" in flat(text)
    assert "moved the loss most" not in text
    assert f"decoding steps about as fast as with {heads} here" in flat(text)


def test_paired_needs_the_spread_not_only_the_signs():
    from fromscratch.viz.verdicts import agree_by_chance, paired

    assert paired([0.02, 0.01, 0.03]).side == "ahead" and paired([0.2, 0.01, 0.02]).side == "within noise"
    assert not paired([0.2]).decided and agree_by_chance(SIZE.seeds) == f"1 time in {2 ** (SIZE.seeds - 1)}"
