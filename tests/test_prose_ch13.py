"""Chapter 13's computed prose reads with the ``gpu`` profile's sizes, on both sides of every verdict."""

from __future__ import annotations

from dataclasses import replace

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch13_beyond_text import prose

SIZE = get_profile("gpu").ch13
N_TEST = SIZE.test_images or 10_000  # None: all of MNIST's test digits
UNLABELLED = 34 - 2 * SIZE.graph_labelled  # the karate club's members less the labelled ones


@pytest.mark.parametrize(
    "settr, deep, meet",
    [
        (0.97, 0.41, "made the comparison easier to learn"),
        (0.40, 0.60, "DeepSets came out ahead"),
        (0.402, 0.40, "within the test sets' own noise"),
        (0.10, 0.35, "stayed at guessing"),
    ],
)
def test_sets_the_two_models(settr, deep, meet):
    text = prose.sets({"DeepSets": deep, "set transformer": settr}, SIZE)
    assert_reads(text, never_together=[("easier to learn", "DeepSets came out ahead")])
    assert meet in text and "one run of each" in text and f"{SIZE.set_train.steps:,} steps" in text
    assert f"of the {SIZE.set_test:,} test sets" in text


@pytest.mark.parametrize(
    "deep, said", [(0.35, "above guessing"), (0.101, "at guessing"), (0.05, "below guessing")]
)
def test_sets_deepsets_against_guessing(deep, said):
    text = prose.sets({"DeepSets": deep, "set transformer": 0.97}, SIZE)
    assert_reads(text)
    assert f"DeepSets is {said}" in text


@pytest.mark.parametrize(
    "vit, cnn, said",
    [(0.985, 0.995, "the ViT is behind the CNN"), (0.99, 0.97, "is ahead"), (0.99, 0.9905, "within")],
)
def test_images(vit, cnn, said):
    text = prose.images({"ViT": vit, "CNN": cnn}, n_test=N_TEST)
    assert_reads(text)
    assert said in text and text.startswith("One run of each")


@pytest.mark.parametrize(
    "grid, shuffled, relies",
    [
        (0.98, 0.60, "relies on where each patch is"),
        (0.98, 0.979, "no more than"),
        (0.90, 0.95, "did not hurt"),
    ],
)
@pytest.mark.parametrize(
    "apart, lesson", [(-0.05, "was worth"), (-0.0005, "no difference"), (0.05, "cost more to learn")]
)
def test_positions(grid, shuffled, relies, apart, lesson):
    bag = grid + apart
    scores = {"ViT, grid positions": (grid, shuffled), "ViT, no positions": (bag, bag)}
    text = prose.positions(scores, n_test=N_TEST, patch=SIZE.vit.patch)
    assert_reads(text)
    assert relies in text and lesson in text
    assert "$4 \\times 4$" in text  # the gpu ViT's patch, not the cpu one's 7
    assert "the same on both" in text


def test_positions_when_the_patches_alone_are_not_enough():
    scores = {"ViT, grid positions": (0.3, 0.1), "ViT, no positions": (0.1, 0.1)}
    text = prose.positions(scores, n_test=N_TEST, patch=7)
    assert_reads(text)
    assert "no more than guessing" in text and "$7 \\times 7$" in text


def _results(local, full, seeds=SIZE.local_seeds, sizes=SIZE.local_sizes, jitter=0.004):
    """Per size and seed: ``local[i]`` and ``full[i]`` plus a small spread over the seeds."""
    offsets = [jitter * (s - (seeds - 1) / 2) for s in range(seeds)]
    return {
        "local attention": {c: [local[i] + o for o in offsets] for i, c in enumerate(sizes)},
        "full attention": {c: [full[i] - o for o in offsets] for i, c in enumerate(sizes)},
    }


@pytest.mark.parametrize(
    "local, full, verdict",
    [
        ((0.92, 0.93, 0.93), (0.79, 0.81, 0.80), "the local mask was ahead at every data size"),
        ((0.80, 0.81, 0.80), (0.92, 0.93, 0.93), "full attention was ahead at every data size"),
        ((0.93, 0.93, 0.93), (0.93, 0.93, 0.931), "within the 3 seeds' spread at every data size"),
        (
            (0.93, 0.90, 0.80),
            (0.80, 0.90, 0.93),
            "ahead with 1,000 digits; behind with 60,000 digits; within",
        ),
    ],
)
@pytest.mark.parametrize("fitted, fit", [(0.99, "scored better on the digits"), (None, "Neither scored")])
def test_local_mask(local, full, verdict, fitted, fit):
    results = _results(local, full)
    first = SIZE.local_sizes[0]
    trained = {n: [fitted or statistics_mean(r[first])] * SIZE.local_seeds for n, r in results.items()}
    steps, batch = SIZE.local_train.steps, SIZE.image_batch
    text = prose.local_mask(results, trained, SIZE, n_test=N_TEST)
    assert_reads(text)
    assert verdict in text and fit in text
    flat = " ".join(text.split())
    assert f"{steps * batch / first:,.1f} times each of the 1,000 digits" in flat  # the smallest set's passes
    assert ("got further" in text) == verdict.startswith("the local mask was ahead at every")
    assert verdict in prose.local_verdict(results, n_test=N_TEST)


def statistics_mean(values):
    return sum(values) / len(values)


def test_local_mask_one_seed_decides_nothing():
    results = _results((0.92, 0.93, 0.93), (0.79, 0.81, 0.80), seeds=1)
    trained = {n: [0.95] for n in results}
    size = replace(SIZE, local_train=replace(SIZE.local_train, steps=10), image_batch=32)
    text = prose.local_mask(results, trained, size, n_test=500)
    assert_reads(text)
    assert "in its one run (one seed decides nothing)" in text and "one run each" in text
    assert "got further" not in text


@pytest.mark.parametrize(
    "local, full, said",
    [
        ((0.93, 0.90, 0.80), (0.80, 0.90, 0.93), "ahead with 1,000 digits; behind with 60,000 digits in its"),
        ((0.80, 0.81, 0.80), (0.92, 0.93, 0.93), "behind with 1,000, 5,000 and 60,000 digits in its one run"),
        ((0.921, 0.931, 0.931), (0.92, 0.93, 0.93), "level with full attention at every data size in its"),
    ],
)
def test_local_verdict_one_seed_says_where_it_was_behind(local, full, said):
    results = _results(local, full, seeds=1)
    text = prose.local_verdict(results, n_test=N_TEST)
    assert_reads(text)
    assert said in text and "no data size" not in text


@pytest.mark.parametrize(
    "masked, against",
    [
        (0.85, "points above label propagation on the same draws"),
        (0.60, "points below"),
        (0.741, "in line with"),
    ],
)
@pytest.mark.parametrize("full, ignored", [(0.49, "at guessing"), (0.70, "above guessing")])
def test_graph(masked, against, full, ignored):
    draws = SIZE.graph_seeds
    wobble = [0.01 * ((d % 3) - 1) for d in range(draws)]
    scores = {"full attention, 1 layer": [full + w for w in wobble]}
    for depth in SIZE.graph_depths:
        scores[f"graph mask, {plural_layers(depth)}"] = [masked - 0.02 * (3 - depth) + w for w in wobble]
    scores["label propagation (no parameters)"] = [0.74 + w for w in wobble]
    text = prose.graph(scores, unlabelled=UNLABELLED)
    assert_reads(text)
    assert against in text and ignored in text
    assert ("beyond the draws' spread" in text) == (masked != 0.741)
    assert f"{draws} draws" in text


def plural_layers(depth):
    return f"{depth} layer" + "s" * (depth > 1)


def test_graph_one_draw():
    scores = {"full attention, 1 layer": [0.5], "graph mask, 1 layer": [0.8]}
    scores["label propagation (no parameters)"] = [0.7]
    text = prose.graph(scores, unlabelled=UNLABELLED)
    assert_reads(text)
    assert "(one draw: no lesson)" in text and "1 draw of" in text


def test_summary():
    results = _results((0.92, 0.93, 0.93), (0.79, 0.81, 0.80))
    graph = {"graph mask, 1 layer": [0.7, 0.72], "label propagation (no parameters)": [0.74, 0.73]}
    text = prose.summary(
        {"DeepSets": 0.41, "set transformer": 0.97},
        {"ViT": 0.9848, "CNN": 0.9948},
        results,
        graph,
        n_test=N_TEST,
    )
    assert_reads(text)
    assert "(one run each)" in text and flat_count(text, f"{SIZE.local_seeds} seeds") == 1
    assert prose.local_verdict(results, n_test=N_TEST) in text


def flat_count(text, words):
    return " ".join(text.split()).count(words)
