"""Whole models assembled from the blocks: a classifier (chapter 06), a generator (chapter 07) and a
classifier over any of four sequence encoders (chapter 08).

Each model family has a config dataclass holding its sizes and options, with the blog's values as
defaults and in comments (nanoGPT's ``GPTConfig``). A model is built from a config, and keyword
arguments replace single fields of it (they are the config's field names; the one rule)::

    Classifier(ClassifierConfig(vocab_size=20_003, emb=64))   # a config
    Classifier(prof.imdb.model, pooling="cls")                # a run profile's config, one field replaced
    Generator(vocab_size=256, emb=32, heads=4, depth=2, context=64)  # fields only: the defaults, replaced

The model keeps the config it was built from as ``model.config``. All take token ids ``(b, t)``;
the classifier and the generator can return the attention weights of every layer
(``return_attention=True``: a list with one ``(b, h, t, t)`` tensor per block).
"""

from fromscratch.models.classifier import POOLINGS, Classifier, ClassifierConfig, mean_over_tokens
from fromscratch.models.generator import Generator, GeneratorConfig
from fromscratch.models.sequence_classifier import (
    SequenceClassifier,
    SequenceClassifierConfig,
    hidden_for_budget,
)

__all__ = [
    "POOLINGS",
    "Classifier",
    "ClassifierConfig",
    "Generator",
    "GeneratorConfig",
    "SequenceClassifier",
    "SequenceClassifierConfig",
    "hidden_for_budget",
    "mean_over_tokens",
]
