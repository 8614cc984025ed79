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

from fromscratch.models.bert import (
    BertConfig,
    BertEncoder,
    BertForClassification,
    BertForPretraining,
)  # chapter 10
from fromscratch.models.classifier import POOLINGS, Classifier, ClassifierConfig, mean_over_tokens
from fromscratch.models.cnn import CNN, CNNConfig  # chapter 13
from fromscratch.models.encoder_decoder import (
    DecoderBlock,
    EncoderDecoder,
    EncoderDecoderConfig,
)  # chapter 09
from fromscratch.models.generator import Generator, GeneratorConfig
from fromscratch.models.gpt2 import GPT2, GPT2Config  # chapter 10
from fromscratch.models.llama import Llama, LlamaConfig  # chapter 14
from fromscratch.models.rnn_seq2seq import RNNSeq2Seq, RNNSeq2SeqConfig  # chapter 09
from fromscratch.models.sequence_classifier import (
    SequenceClassifier,
    SequenceClassifierConfig,
    budget_configs,
    hidden_for_budget,
)
from fromscratch.models.sets import DeepSets, SetConfig, SetTransformer  # chapter 13
from fromscratch.models.transformer_xl import TransformerXL, TransformerXLConfig  # chapter 11
from fromscratch.models.vision import ImageQuestion, ImageQuestionConfig, ViT, ViTConfig  # chapter 13

__all__ = [
    "POOLINGS",
    "BertConfig",
    "BertEncoder",
    "BertForClassification",
    "BertForPretraining",
    "GPT2",
    "GPT2Config",
    "Llama",
    "LlamaConfig",
    "Classifier",
    "ClassifierConfig",
    "DecoderBlock",
    "EncoderDecoder",
    "EncoderDecoderConfig",
    "RNNSeq2Seq",
    "RNNSeq2SeqConfig",
    "Generator",
    "GeneratorConfig",
    "SequenceClassifier",
    "SequenceClassifierConfig",
    "budget_configs",
    "hidden_for_budget",
    "TransformerXL",
    "TransformerXLConfig",
    "mean_over_tokens",
    "CNN",  # chapter 13
    "CNNConfig",
    "DeepSets",
    "ImageQuestion",
    "ImageQuestionConfig",
    "SetConfig",
    "SetTransformer",
    "ViT",
    "ViTConfig",
]
