"""Chapter 08's computed sentences read at every size: the gpu profile's sizes, both sides of each verdict."""

from __future__ import annotations

import pytest
from prose_checks import assert_reads

from fromscratch.chapters import get_profile
from fromscratch.chapters.ch08_design_considerations import prose
from fromscratch.metrics.paths import conv_reach

GPU = get_profile("gpu").ch08
LENGTHS = list(GPU.timing_lengths)  # 64 ... 8192
DISTANCES = list(GPU.task_distances)


def _times(tf, rnn):
    return {"transformer": tf, "rnn": rnn, "cnn": [0.01] * len(LENGTHS)}


def _slopes(tf_all, tf_end, cnn, rnn):
    return {"transformer": tf_all, "cnn": cnn, "rnn": rnn}, {"transformer": tf_end, "cnn": cnn, "rnn": rnn}


@pytest.mark.parametrize(
    "slopes, says",
    [
        (_slopes(1.0, 1.6, 1.4, 1.6), ["rising", "above the 1 of its linear work", "above the 1 that"]),
        (_slopes(1.0, 1.0, 1.0, 1.0), ["not rising", "close to the 1 of its", "close to the 1 that"]),
        (_slopes(0.3, 0.1, 0.5, 0.4), ["not rising", "below 1", "below the 1 that"]),
        (_slopes(1.2, 2.4, 1.0, 1.0), ["at 2 or past it", "already dominates"]),  # a CPU's dense attention
        (_slopes(1.2, 1.95, 1.0, 1.0), ["at 2 or past it"]),
    ],
)
def test_slopes(slopes, says):
    text = prose.slopes(*slopes, last=3, where="cuda: NVIDIA H200, fp32")
    assert all(s in text for s in says), text
    assert ("on its way to 2" in text) == (says[0] == "rising")
    assert_reads(text)


@pytest.mark.parametrize(
    "tf, rnn, says",
    [
        # the GRU slower at every length (a CPU): the extrapolation, with the memory it would take
        ([0.01 * 2**i for i in range(8)], [0.1 * 2**i for i in range(8)], "did **not** overtake"),
        # made up: the transformer slower at 64, faster in between, slower at 8192
        (
            [0.02, 0.01, 0.01, 0.01, 0.02, 0.05, 0.2, 0.60],
            [0.01, 0.02, 0.03, 0.04, 0.08, 0.15, 0.3, 0.43],
            "flipped more than once",
        ),
        # the GPU check's case: at 8192 the transformer's 429 ms against the GRU's 595 ms (nb08)
        (
            [0.02, 0.01, 0.01, 0.01, 0.02, 0.05, 0.2, 0.429],
            [0.01, 0.02, 0.03, 0.04, 0.08, 0.15, 0.3, 0.595],
            "faster from $t = 128$ on",
        ),
        # one crossing that holds at every longer length
        ([0.01 * 4**i for i in range(8)], [0.05 * 2**i for i in range(8)], "slower from $t = 512$ on"),
        # the other way round: attention's fixed costs first
        ([0.5] * 8, [0.1 * 2**i for i in range(8)], "faster from $t = 512$ on"),
        ([0.5] * 8, [0.1] * 8, "slower than the GRU's at every length"),
        ([0.5] * 8, [0.51] * 8, "the same time"),
    ],
)
def test_crossing_reads_the_whole_curve(tf, rnn, says):
    text = prose.crossing(GPU, _times(tf, rnn))
    assert says in text, text
    assert_reads(text, never_together=[("did **not** overtake", "overtook"), ("flipped", "overtook")])


def _accuracy(bag, cnn, dilated, rnn, tf):
    return {"bag": bag, "cnn": cnn, "dilated cnn": dilated, "rnn": rnn, "transformer": tf}


N = len(DISTANCES)
REACH = conv_reach(GPU.cnn.depth, GPU.cnn.kernel)
DILATED = conv_reach(GPU.cnn.depth, GPU.cnn.kernel, dilated=True)


@pytest.mark.parametrize(
    "accuracy, says",
    [
        (  # the expected picture: bag at chance, CNNs lost past their reach, GRU fading, attention solving
            _accuracy(
                [0.5] * N,
                [1, 1, 1, 0.5, 0.5, 0.5, 0.5],
                [1] * 5 + [0.5, 0.5],
                [1, 1, 0.8, 0.5, 0.5, 0.5, 0.5],
                [1.0] * N,
            ),
            [
                "at chance at every distance",
                "solves every distance, up to the full length",
                "past its pooled",
            ],
        ),
        (  # everything solved (a long gpu run): no "at chance" anywhere, the bag above chance at one distance
            _accuracy([0.5] * (N - 1) + [0.7], [1.0] * N, [1.0] * N, [1.0] * N, [0.95] * N),
            ["The bag of embeddings solves no distance", "The CNN solves every distance"],
        ),
        (  # nothing learned (smoke-like)
            _accuracy([0.5] * N, [0.5] * N, [0.5] * N, [0.5] * N, [0.5] * N),
            ["The transformer is at chance at every distance", "a single window of the first block"],
        ),
        (  # short of solved at the longest distance, never at chance
            _accuracy([0.5] * N, [1.0] * N, [1.0] * N, [1.0] * N, [1.0] * (N - 1) + [0.8]),
            [f"is above chance, but short of 90%, at $d = {DISTANCES[-1]}$."],
        ),
        (  # lost within reach on paper
            _accuracy([0.5] * N, [1, 1, 0.5, 0.5, 0.5, 0.5, 0.5], [1] * N, [1] * N, [1] * N),
            ["within its pooled reach"],
        ),
    ],
)
def test_match_task(accuracy, says):
    text = prose.match_task(GPU, accuracy, REACH, DILATED)
    assert all(s in text for s in says), text
    assert_reads(
        text, never_together=[("solves every distance, up to the full length", "The transformer is")]
    )


@pytest.mark.parametrize("rnn, tf", [(0.5, 1.6), (1.4, 1.0), (0.9, 0.95)])
def test_table_one(rnn, tf):
    reached = {"rnn": "63 of 63", "cnn": "8 of 63", "transformer": "63 of 63"}
    rows = [(name, "1e+06", "1", "1", "t^1.00", reach, "-") for name, reach in reached.items()]
    far = [1.0] * (N - 1) + [0.5]  # one accuracy per distance, lost at the longest
    accuracy = {"rnn": far, "cnn": far, "transformer": [1.0] * N}
    text = prose.table_one({"rnn": rnn, "transformer": tf}, rows, accuracy, DISTANCES[-1])
    assert f"its accuracy at $d = {DISTANCES[-1]}$ is 0.50" in text and "reach (8 of 63)" in text
    assert_reads(text)


def _race(n, bag, rnn, cnn, tf, spread=0.002):
    accuracy = {"bag": bag, "rnn": rnn, "cnn": cnn, "transformer": tf}
    steps = {"bag": 30_000, "rnn": 300, "cnn": 3_000, "transformer": 1_500}
    return {
        name: [(steps[name], 240.0, a + spread * (i - (n - 1) / 2)) for i in range(n)]
        for name, a in accuracy.items()
    }


@pytest.mark.parametrize(
    "runs, says",
    [
        (_race(GPU.imdb_seeds, 0.85, 0.80, 0.84, 0.83), "one run each, so this order is no lesson"),
        (_race(3, 0.88, 0.80, 0.84, 0.83), "cheap steps win: with 30,000 steps it beat the CNN, the"),
        (_race(3, 0.84, 0.80, 0.88, 0.83), "with 3,000 steps (only the bag of embeddings took more, 30,000"),
        (_race(3, 0.84, 0.80, 0.83, 0.88), "does not follow the step counts"),
        (_race(3, 0.84, 0.80, 0.839, 0.83, spread=0.02), "within the seeds' spread"),
    ],
)
def test_race_draws_a_lesson_only_from_seeds_beyond_the_noise(runs, says):
    text = prose.race(GPU, runs, train_reviews=24_000, test_reviews=25_000)
    assert says in text, text
    assert "the models that mix positions" not in text
    assert "GRU (" in text and "CNN (" in text and "rnn" not in text  # the tables' names, not the keys
    assert_reads(text, never_together=[("no lesson", "cheap steps win"), ("no lesson", "does not follow")])
