"""Chapters 10-14's training runs for ``gpu_plan.py`` (the :class:`~gpu_plan_runs.Run` s and chapters
01-09 are in ``gpu_plan_runs.py``, 15 in ``gpu_plan_chat.py``), and :data:`CHAPTERS`, each one's adapter."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import replace

import torch
from gpu_plan_chat import chapter_15  # chapter 15's runs, in their own module
from gpu_plan_runs import (
    Built,
    Run,
    bytes_batch,
    chapter_01,
    chapter_06,
    chapter_07,
    chapter_08,
    chapter_09,
    digits,
    length,
    longest,
)
from torch import nn

from fromscratch.chapters.ch10_modern_transformers.bert_imdb import imdb_for_bert, pretraining_batches
from fromscratch.chapters.ch13_beyond_text.pipeline import labelled_loss
from fromscratch.data import mnist
from fromscratch.data.imdb import ReviewBatches
from fromscratch.models import (
    CNN,
    DeepSets,
    Generator,
    ImageQuestion,
    Llama,
    SetTransformer,
    TransformerXL,
    ViT,
)
from fromscratch.models.bert import BertForClassification, BertForPretraining
from fromscratch.models.long_context import POSITIONS, LongContextGenerator
from fromscratch.models.pool_dropout import use_pool_dropout
from fromscratch.models.transformer_xl import segment_loss
from fromscratch.training.losses import classification_loss, masked_lm_loss, next_byte_loss, next_token_loss


def chapter_10(prof) -> list[Run]:
    run = prof.modern

    @functools.cache
    def data():
        return imdb_for_bert(run)

    def build_pretraining() -> Built:
        return (
            use_pool_dropout(BertForPretraining(run.bert)),
            next(iter(pretraining_batches(run, data()))),
            masked_lm_loss,
        )

    def build_finetuning() -> Built:
        model = use_pool_dropout(
            BertForClassification(
                BertForPretraining(run.bert).encoder, 2, dropout=run.bert.dropout, pooling=run.pooling
            )
        )
        return (
            model,
            longest(ReviewBatches(data().train, run.finetune_batch, shuffle=False, cls=True)),
            classification_loss,
        )

    per_epoch = math.ceil((run.train_reviews or 25_000) / run.finetune_batch)
    return [
        Run(
            "10",
            "10.4 BERT pretraining (masked LM)",
            build_pretraining,
            **length(run.pretraining),
            attention=None,
        ),
        Run(
            "10",
            "10.5 BERT fine-tuning",
            build_finetuning,
            **length(run.finetuning, per_epoch),
            attention=None,
        ),
    ]


def chapter_11(prof) -> list[Run]:
    size = prof.long_context

    def build_xl() -> Built:
        return (
            TransformerXL(size.xl),
            bytes_batch(size.xl.segment * size.xl_segments, size.batch_size),
            segment_loss,
        )

    def build(t: int, **fields) -> Built:  # t: the training length; fields: the model's config
        config = replace(size.model, **fields)
        return LongContextGenerator(config), bytes_batch(t, size.batch_size), next_byte_loss

    sparse = dict(context=size.sparse_context, sparse_block=size.sparse_block)
    L, long = size.train_context, max(size.factors) * size.train_context
    runs = [
        Run(
            "11",
            "11.2 Transformer-XL, with and without memory",
            build_xl,
            steps=size.xl_steps,
            count=2,
            attention=None,
        ),
        Run(
            "11",
            "11.4 dense generator",
            lambda: build(size.sparse_context, **sparse),
            steps=size.sparse_steps,
        ),
        Run(
            "11",
            "11.4 sparse generators (strided, fixed)",
            lambda: build(size.sparse_context, **sparse, sparsity="fixed"),
            steps=size.sparse_steps,
            count=2,
            attention=None,
        ),
    ]
    for scheme in POSITIONS:  # every scheme, as chapter 11 trains them
        runs.append(
            Run(
                "11",
                f"11.5 positions: {scheme}",
                functools.partial(build, L, context=long, positions=scheme),
                steps=size.position_steps,
                attention=None,
            )
        )
    return runs


def chapter_12(prof) -> list[Run]:
    gb = prof.going_big

    def tokens_of(t: int) -> torch.Tensor:
        return torch.randint(0, 256, (gb.batch, t + 1), generator=torch.Generator().manual_seed(0))

    def build_teaching() -> Built:
        t = max(gb.lengths)
        model = Generator(gb.model, context=t)
        return model, tokens_of(t), functools.partial(next_token_loss, teaching=True)

    def build_deep() -> Built:
        config = replace(
            gb.model, depth=max(gb.checkpoint_depths), context=gb.timing_length, checkpoint=False
        )
        return Generator(config), tokens_of(gb.timing_length), next_token_loss

    def build_amp() -> Built:
        return Generator(gb.amp_model), bytes_batch(gb.amp_model.context, gb.amp_batch), next_byte_loss

    measurement = dict(steps=2 * len(gb.lengths), precision="fp32")
    return [
        Run(
            "12",
            f"12.1 memory, teaching path, t = {max(gb.lengths)}",
            build_teaching,
            **measurement,
            attention="teaching",
        ),
        Run("12", "12.2 generator in fp32", build_amp, **length(gb.amp_train), precision="fp32"),
        Run("12", "12.2 generator in the fast precision", build_amp, **length(gb.amp_train)),
        Run(
            "12",
            f"12.4 depth {max(gb.checkpoint_depths)} without checkpointing",
            build_deep,
            steps=2 * (gb.repeats + 1),
            precision="fp32",
        ),
    ]


def chapter_13(prof) -> list[Run]:
    size = prof.beyond

    def images(batch: int):
        torch.manual_seed(0)
        return next(
            iter(mnist.ImageBatches(digits().train_images, digits().train_labels, batch, shift=size.shift))
        )

    def build_set(kind) -> Built:
        torch.manual_seed(0)
        sets = mnist.OddOneOutBatches(
            digits().train_images, digits().train_labels, size.set_batch, set_size=size.set_size
        )
        return kind(size.sets), next(iter(sets)), labelled_loss

    def build_image(model: Callable[[], nn.Module], batch: int) -> Built:
        return model(), images(batch), labelled_loss

    def build_question() -> Built:
        x, y = images(size.image_batch)
        words = torch.randint(0, size.question.vocab_size, (len(x), size.question.max_words))
        return ImageQuestion(size.question), (x, words, y % size.question.vit.num_classes), labelled_loss

    def patches(config):
        return lambda batch: len(batch[0]) * ((config.image_size // config.patch) ** 2 + 1)

    counted = dict(attention=None)
    return [
        Run(
            "13",
            "13.1 set transformer",
            lambda: build_set(SetTransformer),
            **length(size.set_train),
            **counted,
            tokens=lambda b: b[0].shape[0] * b[0].shape[1],
        ),
        Run(
            "13",
            "13.1 DeepSets",
            lambda: build_set(DeepSets),
            **length(size.set_train),
            **counted,
            tokens=lambda b: b[0].shape[0] * b[0].shape[1],
        ),
        Run(
            "13",
            "13.2 ViT",
            lambda: build_image(lambda: ViT(size.vit), size.image_batch),
            **length(size.image_train),
            **counted,
            tokens=patches(size.vit),
        ),
        Run(
            "13",
            "13.2 CNN",
            lambda: build_image(lambda: CNN(size.cnn), size.image_batch),
            **length(size.image_train),
            **counted,
            tokens=lambda b: len(b[0]),
        ),
        Run(
            "13",
            "13.2 ViT without positions",
            lambda: build_image(lambda: ViT(size.vit, positions=None), size.image_batch),
            **length(size.image_train),
            **counted,
            tokens=patches(size.vit),
        ),
        Run(
            "13",
            "13.2 local and full ViT, each data size",
            lambda: build_image(lambda: ViT(size.local_vit, local=None), size.image_batch),
            **length(size.local_train),
            count=2 * len(size.local_sizes) * size.local_seeds,
            **counted,
            tokens=patches(size.local_vit),
        ),
        Run(
            "13",
            "13.4 image and question",
            build_question,
            **length(size.question_train),
            **counted,
            tokens=lambda b: b[1].numel() + patches(size.question.vit)(b),
        ),
    ]


def chapter_14(prof) -> list[Run]:
    run = prof.decoders

    def build(config) -> Built:
        return Llama(config), bytes_batch(config.context, run.batch_size), next_byte_loss

    return [  # the six rungs of 14.1's ladder, each for the same steps, once per seed
        Run(
            "14",
            f"14.1 {name}",
            functools.partial(build, config),
            **length(run.train),
            count=run.seeds,
            attention=None,
        )
        for name, config in run.ladder
    ]


CHAPTERS = {
    "01": chapter_01,
    "06": chapter_06,
    "07": chapter_07,
    "08": chapter_08,
    "09": chapter_09,
    "10": chapter_10,
    "11": chapter_11,
    "12": chapter_12,
    "13": chapter_13,
    "14": chapter_14,
    "15": chapter_15,
}
