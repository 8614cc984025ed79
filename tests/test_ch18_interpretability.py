"""Chapter 18's pipeline: the attention-only model and its data, the in-context loss read at the right
positions, head scores, activation patching (the last block's last position restores everything), the logit
lens on stories260K, the names task, and the helpers of the superposition section."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from fromscratch.chapters.ch18_interpretability import analysis, subjects
from fromscratch.chapters.ch18_interpretability.profile import RUNS, SMOKE
from fromscratch.chapters.ch18_interpretability.sentiment import (
    pooled_streams,
    probe_reviews,
    word_reader,
    words_present,
)
from fromscratch.chapters.ch18_interpretability.toy import AttentionOnly, periodic_tokens, position_losses
from fromscratch.interp import block_names, repeated_tokens
from fromscratch.tokenizers.words import Vocab

CONFIG = SMOKE.toy


def test_the_profiles_keep_the_toy_model_checked_cells_print():
    assert set(RUNS) == {"smoke", "cpu", "gpu"}
    assert all(run.toy == CONFIG for run in RUNS.values())


def test_the_attention_only_model_and_its_data():
    torch.manual_seed(0)
    model = AttentionOnly(CONFIG)
    tokens = periodic_tokens(
        5, CONFIG.context, CONFIG.vocab_size, 6, generator=torch.Generator().manual_seed(0)
    )
    assert tokens.shape == (5, CONFIG.context)
    for row in tokens:  # some period p in 6 .. context / 2 repeats the row
        assert any(torch.equal(row[p:], row[:-p]) for p in range(6, CONFIG.context // 2 + 1))
    weights = []
    logits = model(tokens, attention=weights)
    assert logits.shape == (5, CONFIG.context, CONFIG.vocab_size)
    assert [tuple(w.shape) for w in weights] == [(5, CONFIG.heads, CONFIG.context, CONFIG.context)] * 2
    assert block_names(model) == ["blocks.0", "blocks.1"]
    assert position_losses(logits, tokens).shape == (CONFIG.context - 1,)
    with pytest.raises(ValueError, match="min_period"):
        periodic_tokens(1, 16, 10, 9, generator=torch.Generator())


class Oracle(nn.Module):
    """Predicts the repeat perfectly (the token one period back) and the first pass uniformly."""

    def __init__(self, vocab: int, period: int, skip: int) -> None:
        super().__init__()
        self.vocab, self.period, self.skip = vocab, period, skip

    def forward(self, tokens, attention=None):
        b, t = tokens.shape
        logits = torch.zeros(b, t, self.vocab)
        for i in range(self.skip + self.period, t - 1):  # position i predicts token i + 1
            logits[torch.arange(b), i, tokens[:, i + 1 - self.period]] = 100.0
        return logits


@pytest.mark.parametrize("skip", [0, 1])
def test_in_context_reads_the_first_pass_and_the_repeat(skip):
    vocab, period = 20, 8
    tokens = repeated_tokens(3, period, vocab, low=2, generator=torch.Generator().manual_seed(0))
    if skip:
        tokens = torch.cat([torch.ones(3, 1, dtype=torch.long), tokens], dim=1)
    measured = analysis.in_context(Oracle(vocab, period, skip), tokens, period, skip)
    assert measured.first == pytest.approx(math.log(vocab), rel=1e-5)
    assert measured.repeat == pytest.approx(0.0, abs=1e-4)
    assert measured.gain == pytest.approx(math.log(vocab), rel=1e-4)


def test_top_heads_and_ablated():
    scores = torch.tensor([[0.1, 0.9, 0.2], [0.5, 0.05, 0.7]])
    assert analysis.top_heads(scores, 3) == [(0, 1), (1, 2), (1, 0)]
    torch.manual_seed(0)
    model = AttentionOnly(CONFIG).eval()
    tokens = torch.randint(0, CONFIG.vocab_size, (2, 10))
    with torch.no_grad():
        plain = model(tokens)
        with analysis.ablated(model, [(0, 1), (1, 0)]):
            assert not torch.allclose(model(tokens), plain)
        assert torch.equal(model(tokens), plain)  # the hooks are gone


@pytest.fixture(scope="module")
def stories():
    return subjects.load("stories260K")


def test_the_names_task_and_patching_on_stories260K(stories):
    clean, corrupted, right, wrong = subjects.names_task(stories, "Lily", "Tim")
    assert clean.shape == corrupted.shape and (clean != corrupted).sum() == 1
    assert stories.decode([right]).strip() == "Lily" and stories.decode([wrong]).strip() == "Tim"
    residual = analysis.patch_residual_sweep(stories.model, clean, corrupted, right, wrong)
    depth, heads = stories.shape
    assert residual.shape == (depth, clean.size(1))
    assert residual[-1, -1].item() == pytest.approx(1.0, abs=1e-5)  # the logits are read from there
    assert residual[:, 0].abs().max() < 1e-4  # the BOS is the same in both prompts
    by_head = analysis.patch_heads_sweep(stories.model, clean, corrupted, right, wrong)
    assert by_head.shape == (depth, heads) and torch.isfinite(by_head).all()
    with pytest.raises(ValueError, match="one token each"):
        subjects.names_task(stories, "Lily", "Tom")  # "Tom" is two pieces in its vocabulary


def test_the_logit_lens_ends_at_the_model_s_logits(stories):
    tokens = stories.tokens("Once upon a time")
    with torch.no_grad():
        final = int(stories.model(tokens)[0, -1].argmax())
    rows = analysis.lens_table(stories.model, tokens, stories.decode, final)
    assert [r[0] for r in rows] == list(range(stories.shape[0]))
    assert rows[-1][1] == stories.decode([final]) and 0 < rows[-1][2] <= 1


def test_head_scores_of_a_real_model(stories):
    tokens = subjects.repeated(stories, 2, 16)
    assert tokens.shape == (2, 33) and (tokens[:, 0] == 1).all()
    previous, induction = analysis.head_scores(stories.model, tokens, 16, stories.skip)
    assert previous.shape == induction.shape == stories.shape
    assert ((induction >= 0) & (induction <= 1)).all()


def test_pooled_streams_are_what_each_text_gives_alone(stories):
    texts = ["Once upon a time", "Lily saw a big dog in the park and she ran"]
    together = pooled_streams(stories, texts, batch=2)  # padded on the right to the longer
    assert together.shape == (stories.shape[0], 2, stories.model.config.emb)
    for row, text in enumerate(texts):
        alone = pooled_streams(stories, [text], batch=1)[:, 0]  # (layers, e): no padding
        torch.testing.assert_close(together[:, row], alone, atol=1e-5, rtol=1e-5)


def test_probe_reviews_are_balanced_and_clipped():
    train_texts, train_labels, test_texts, test_labels = probe_reviews(12, 8, 6)
    assert len(train_texts) == 8 and len(test_texts) == 6
    assert int(train_labels.sum()) == 4 and int(test_labels.sum()) == 3
    assert all(len(text.replace(" … ", " ").split()) <= 12 for text in train_texts + test_texts)


def test_words_present_marks_each_word_once():
    vocab = Vocab(["good", "bad"])  # ids 3 and 4, after <pad>, <unk>, <cls>
    present = words_present(vocab, ["Good, good film", "bad"])
    assert present.tolist() == [[0, 1, 0, 1, 0], [0, 0, 0, 0, 1]]  # "film" and "," are <unk>


def test_the_word_reader_reads_sentiment_from_words_alone():
    reader = word_reader(2_000, 200, weight_decay=1e-2)
    chances = reader(
        [
            "A wonderful film: brilliant acting, a beautiful story, I loved it.",
            "An awful film: terrible acting, a boring story, the worst waste of time.",
        ]
    )
    assert chances.shape == (2,) and chances[0] > 0.5 > chances[1]


def test_the_superposition_helpers():
    assert analysis.two_feature_category(torch.tensor([[1.0, -0.9]])) == "both, in superposition"
    assert analysis.two_feature_category(torch.tensor([[1.0, 0.1]])) == "only feature 1"
    codes = torch.tensor([[0.0, 1.0], [3.0, 0.0], [2.0, 0.5]])
    rows = analysis.feature_rows(codes, torch.tensor([5, 6, 7]), lambda ids: "".join(map(str, ids)), [0], 2)
    assert rows == [["0", "3.00", "5[6] · 56[7]"]]
