"""18.5's data and measurements: IMDb reviews as chapter 15 reads them, each layer's residual stream
averaged over a review's tokens, and the sentiment of generated text as two readers see it: the probe,
and a classifier of words that never saw the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from fromscratch.chapters.ch18_interpretability.subjects import Subject
from fromscratch.data.imdb import load_imdb
from fromscratch.data.instructions import clip_words
from fromscratch.interp import LinearProbe, block_names, fit_probe, record
from fromscratch.tokenizers.words import Vocab, tokenize

__all__ = ["WordReader", "pooled_streams", "probe_reviews", "text_sentiment", "word_reader", "words_present"]


def probe_reviews(words: int, train: int, test: int, seed: int = 0):
    """IMDb's reviews for the probes: ``(train_texts, train_labels (n,), test_texts, test_labels (m,))``,
    balanced and seeded draws of ``train`` and ``test`` reviews, each cut to ``words`` words (its first
    quarter and last three quarters) as chapter 15's arms read them."""
    train_set, test_set, _ = load_imdb(100, 1, train_reviews=train, test_reviews=test, seed=seed)
    texts = [[clip_words(s.text(i), words) for i in range(len(s))] for s in (train_set, test_set)]
    return texts[0], train_set.labels, texts[1], test_set.labels


def pooled_streams(subject: Subject, texts: Sequence[str], *, batch: int = 16) -> Tensor:
    """The residual stream after every block, averaged over each text's tokens: ``(layers, n, e)``.

    Texts of a batch are padded on the right to the longest; the model is causal, so no real token
    attends to a pad and the average over the real tokens is what the text alone gives."""
    names = block_names(subject.model)
    pooled = []
    for start in range(0, len(texts), batch):
        ids = [torch.tensor(subject.encode(text)) for text in texts[start : start + batch]]
        lengths = torch.tensor([len(i) for i in ids])  # (b,)
        tokens = pad_sequence(ids, batch_first=True)  # (b, t): pads are id 0, on the right
        real = torch.arange(tokens.size(1)) < lengths[:, None]  # (b, t)
        real[:, : subject.skip] = False  # not the BOS: it reads the same in every text
        with torch.no_grad(), record(subject.model, names) as acts:
            subject.model(tokens)
        streams = torch.stack([acts[name][0] for name in names])  # (layers, b, t, e)
        weights = real / real.sum(1, keepdim=True)  # (b, t): a mean over the real tokens
        pooled.append(torch.einsum("lbte,bt->lbe", streams, weights.to(streams.dtype)))
    return torch.cat(pooled, dim=1)  # (layers, n, e)


def text_sentiment(subject: Subject, probe: LinearProbe, layer: int, texts: Sequence[str]) -> Tensor:
    """P(positive) that ``probe`` reads at block ``layer`` of the *unsteered* model for each text: ``(n,)``.
    The texts are read afresh, so what is measured is the text, not the stream that wrote it."""
    streams = pooled_streams(subject, texts)[layer]  # (n, e)
    return torch.sigmoid(probe(streams))


def words_present(vocab: Vocab, texts: Sequence[str]) -> Tensor:
    """Which of ``vocab``'s words each text holds: ``(n, len(vocab))``, 1.0 where present, else 0.0
    (``<unk>`` marks a word outside the vocabulary)."""
    present = torch.zeros(len(texts), len(vocab))
    for row, text in enumerate(texts):
        present[row, vocab.encode(tokenize(text))] = 1.0
    return present


@dataclass
class WordReader:
    """A sentiment classifier that never saw a language model's activations: logistic regression on
    which of IMDb's most frequent words a text holds. ``reader(texts)`` -> P(positive) ``(n,)``."""

    vocab: Vocab
    probe: LinearProbe  # the same logistic regression as the stream's probes, on word features

    def __call__(self, texts: Sequence[str]) -> Tensor:
        return torch.sigmoid(self.probe(words_present(self.vocab, texts)))


def word_reader(vocab_size: int, reviews: int, *, weight_decay: float, seed: int = 1) -> WordReader:
    """Fit a :class:`WordReader` on ``reviews`` balanced IMDb training reviews, drawn with ``seed`` (1: not
    the probes' draw), on the ``vocab_size`` words most frequent in them."""
    # the two test reviews are drawn because load_imdb draws both splits; they are not used
    train, _, vocab = load_imdb(vocab_size, 1, train_reviews=reviews, test_reviews=2, seed=seed)
    texts = [train.text(i) for i in range(len(train))]
    probe = fit_probe(words_present(vocab, texts), train.labels, weight_decay=weight_decay)
    return WordReader(vocab, probe)
