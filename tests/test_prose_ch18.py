"""Chapter 18's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

import pytest
import torch
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch18_interpretability import prose
from fromscratch.chapters.ch18_interpretability.analysis import InContext
from fromscratch.metrics.intervals import wilson_interval

SIZE = get_profile("gpu").ch18
PERIOD = SIZE.toy.context // 2


@pytest.mark.parametrize("formed", [True, False])
def test_phase_change(formed):
    steps = list(range(0, SIZE.steps + 1, SIZE.score_every))
    n = len(steps)
    best = [0.02 + (0.8 if formed else 0.1) * (i > n // 3) for i in range(n)]
    repeat = [4.2 - (4.0 if formed else 0.1) * (i > n // 3) for i in range(n)]
    history = {
        "step": steps,
        "first": [4.2] * n,
        "repeat": repeat,
        "induction": [torch.full((2, 2), b) for b in best],
    }
    text = prose.phase_change(history, PERIOD, SIZE.toy.vocab_size)
    assert_reads(text, never_together=[("plateau: the phase change", "too few")])
    assert ("plateau: the phase change" in text) == formed


@pytest.mark.parametrize(("undone", "after"), [(0.9, 0.05), (0.3, 0.7)])
def test_ablation(undone, after):
    base = InContext(4.2, 0.2)
    text = prose.ablation(
        base, InContext(4.2, 0.2 + 4 * undone), InContext(4.2, 3.0), (1, 0), (0, 1), 0.8, after
    )
    assert_reads(text, never_together=[("K-composition", "does not depend")])
    assert f"{100 * undone:.0f} %" in text
    assert ("K-composition" in text) == (after < 0.4)


def test_ablation_without_a_gain():
    text = prose.ablation(
        InContext(4.2, 4.3), InContext(4.2, 4.3), InContext(4.2, 4.3), (1, 0), (0, 1), 0.1, 0.1
    )
    assert_reads(text)
    assert "no in-context gain" in text


@pytest.mark.parametrize("gain", [True, False])
@pytest.mark.parametrize("k", [1, SIZE.top_heads])
def test_real_heads(gain, k):
    base = InContext(14.0, 2.6) if gain else InContext(14.0, 14.5)
    top = [(18, 6, 0.91), (17, 3, 0.8), (17, 4, 0.7)][:k]
    text = prose.real_heads(
        SIZE.large, top, top, base, InContext(14.0, 6.0), InContext(14.0, 2.7), SIZE.period
    )
    assert_reads(text)
    assert ("undoing" in text) == gain


@pytest.mark.parametrize("layers", [[None, None], [12, None, 20], [3]])
def test_lens(layers):
    prompts = [f"prompt {i}" for i in range(len(layers))]
    text = prose.lens(prompts, layers, 30)
    assert_reads(text, never_together=[("assembled late", "settles early")])


@pytest.mark.parametrize(("clean", "corrupted"), [(3.2, -2.9), (1.4, 1.3), (-0.5, -1.0)])
def test_patching(clean, corrupted):
    cells = [(9, "Tim", 0.9), (12, "Tim", 0.6), (20, "to", 0.5)]
    heads = [(18, 6, 0.4), (20, 1, 0.2), (3, 3, -0.1)]
    text = prose.patching(clean, corrupted, cells, heads)
    assert_reads(text, never_together=[("restores most", "noise")])
    assert ("noise" in text) == (not clean > 0 > corrupted)


@pytest.mark.parametrize("top", [1.3, 0.8])
def test_patching_share_above_one(top):
    text = prose.patching(3.2, -2.9, [(9, "Tim", top)], [(18, 6, 0.4)])
    assert ("above 100 %" in text) == (top > 1)


@pytest.mark.parametrize("share", [0.95, 0.5])
def test_sae(share):
    text = prose.sae(share, 0.0, 64, 0.9)
    assert_reads(text, never_together=[("meeting the goal", "short of")])
    assert ("meeting" in text) == (share >= 0.9)


@pytest.mark.parametrize("dead", [0, 1, 17])
def test_story_sae(dead):
    fires = [0.0] * dead + [0.01] * (SIZE.story_latents - dead)
    text = prose.story_sae(0.82, fires, SIZE.story_k, SIZE.story_tokens, 2)
    assert_reads(text)
    assert ("every latent fired" in text) == (dead == 0)


@pytest.mark.parametrize("signal", [True, False])
@pytest.mark.parametrize("zero_shot", [0.6, 0.99, None])
def test_probes(signal, zero_shot):
    n = SIZE.probe_test
    correct = [int(n * (0.5 + (0.4 if signal else 0.02) * (i > 3))) for i in range(30)]
    accuracy = [wilson_interval(c, n) for c in correct]
    references = {} if zero_shot is None else {"zero-shot prompt": zero_shot}
    text = prose.probes(accuracy, SIZE.probe_train, references)
    assert_reads(text, never_together=[("sentiment is written", "do not show sentiment")])
    assert ("already after block 4" in text) == signal
    if zero_shot == 0.6:
        assert ("holds more" in text) == signal


def _steered(low: float, high: float) -> list:
    """Shares read as positive per strength of the gpu run: ``low`` at the strongest push down, ``high``
    at the strongest up, one half elsewhere (4 prompts' samples each)."""
    n, strengths = 4 * SIZE.steer_samples, SIZE.steer_strengths
    shares = [low if s == min(strengths) else high if s == max(strengths) else 0.5 for s in strengths]
    return [wilson_interval(round(n * share), n) for share in shares]


@pytest.mark.parametrize("probe", [(0.1, 0.9), (0.45, 0.9), (0.48, 0.52)])
@pytest.mark.parametrize("words", [(0.1, 0.9), (0.48, 0.52)])
def test_steering(probe, words):
    read_by = {"probe": _steered(*probe), "word reader": _steered(*words)}
    text = prose.steering(read_by, wilson_interval(150, 200), 15, SIZE)
    assert_reads(text, never_together=[("two readers agree", "readers disagree")])
    assert ("both ways" in text) == (0.1 in (probe[0], words[0]))
    assert ("no change" in text) == (0.52 in (probe[1], words[1]))
    assert ("two readers agree" in text) == (probe == words)
    assert ("wrote sentiment into the words" in text) == (probe == words == (0.1, 0.9))
    assert f"{SIZE.reader_reviews:,} IMDb training reviews" in text and "75 % [69 %, 80 %]" in text


def test_probes_readable_from_the_first_block():
    accuracy = [wilson_interval(130 + 2 * i, 200) for i in range(30)]
    text = prose.probes(accuracy, SIZE.probe_train, {})
    assert_reads(text)
    assert "already after block 0" in text and "bag of embeddings" in text
