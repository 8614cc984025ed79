"""Whole models, one file per family: the classifier (chapter 06), the generator (chapter 07), the
sequence classifier over four encoders (chapter 08), the encoder-decoder (09), BERT and GPT-2 (10),
chapter 11's long-context generator and Transformer-XL, the ViT and set models (13), the Llama (14).

Each model family has a config dataclass holding its sizes and options, with the blog's values as
defaults and in comments (nanoGPT's ``GPTConfig``). A model is built from a config, and keyword
arguments replace single fields of it (they are the config's field names; the one rule)::

    Classifier(ClassifierConfig(vocab_size=20_003, emb=64))   # a config
    Classifier(prof.ch06.model, pooling="cls")                # a run profile's config, one field replaced
    Generator(vocab_size=256, emb=32, heads=4, depth=2, context=64)  # fields only: the defaults, replaced

The model keeps the config it was built from as ``model.config``. Attention weights come back
through a list the caller owns: ``weights = []; model(tokens, attention=weights)`` appends one
``(b, h, tq, tk)`` tensor per attention layer; every forward has one return type.
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
from fromscratch.models.long_context import LongContextConfig, LongContextGenerator  # chapter 11
from fromscratch.models.rnn_seq2seq import RNNSeq2Seq, RNNSeq2SeqConfig  # chapter 09
from fromscratch.models.sequence_classifier import (
    SequenceClassifier,
    SequenceClassifierConfig,
    budget_configs,
    hidden_for_budget,
)
from fromscratch.models.sets import DeepSets, SetConfig, SetTransformer  # chapter 13
from fromscratch.models.transformer_xl import TransformerXL, TransformerXLConfig  # chapter 11
from fromscratch.models.vision import (  # chapter 13
    ImageQuestion,
    ImageQuestionConfig,
    ViT,
    ViTConfig,
    check_patch,
    patchify,
    unpatchify,
)

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
    "LongContextConfig",
    "LongContextGenerator",
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
    "check_patch",
    "patchify",
    "unpatchify",
]
