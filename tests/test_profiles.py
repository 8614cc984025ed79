"""Run profiles: automatic choice, the environment override, and a clear error for a bad name."""

from __future__ import annotations

import pytest
import torch

from fromscratch import chapters as profiles


@pytest.mark.parametrize("name", profiles.PROFILE_NAMES)
def test_env_override_picks_that_profile(monkeypatch, name):
    monkeypatch.setenv("FROMSCRATCH_PROFILE", name)
    assert profiles.profile().name == name


def test_auto_detects_gpu_or_cpu(monkeypatch):
    monkeypatch.delenv("FROMSCRATCH_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert profiles.profile().name == "gpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert profiles.profile().name == "cpu"


def test_override_is_case_and_space_tolerant(monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_PROFILE", " Smoke ")
    assert profiles.profile().name == "smoke"


def test_unknown_profile_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_PROFILE", "laptop")
    with pytest.raises(ValueError, match=r"Unknown run profile 'laptop'.*smoke, cpu, gpu"):
        profiles.profile()


def test_profiles_grow_from_smoke_to_gpu():
    smoke, cpu, gpu = (profiles.get_profile(n) for n in profiles.PROFILE_NAMES)
    assert smoke.ch06.model.emb <= cpu.ch06.model.emb <= gpu.ch06.model.emb
    assert smoke.ch07.model.context <= cpu.ch07.model.context <= gpu.ch07.model.context
    classifier, generator = gpu.ch06.model, gpu.ch07.model  # the blog's
    assert (classifier.depth, classifier.context, classifier.emb, classifier.heads) == (6, 512, 128, 8)
    assert (generator.depth, generator.emb, generator.context, gpu.ch07.batch_size) == (12, 256, 256, 32)


def test_setup_seeds_and_reports(monkeypatch, capsys):
    monkeypatch.setenv("FROMSCRATCH_PROFILE", "smoke")
    device, prof = profiles.setup(seed=7)
    first = torch.rand(3)
    profiles.setup(seed=7)
    torch.testing.assert_close(torch.rand(3), first)
    out = capsys.readouterr().out
    assert f"device={device.type}" in out and "profile=smoke" in out and torch.__version__ in out
    assert prof.name == "smoke"


def test_early_runs_hold_model_and_train_configs():
    from fromscratch.models import ClassifierConfig, GeneratorConfig
    from fromscratch.tokenizers.words import SPECIALS
    from fromscratch.training import TrainConfig

    for name in profiles.PROFILE_NAMES:
        prof = profiles.get_profile(name)
        assert isinstance(prof.ch06.model, ClassifierConfig)
        assert isinstance(prof.ch07.model, GeneratorConfig)
        for run in (prof.ch01, prof.ch06, prof.ch07):
            assert isinstance(run.train, TrainConfig) and not hasattr(run, "tag")
        assert isinstance(prof.ch07.demo, TrainConfig) and prof.ch07.demo.lr == prof.ch07.train.lr
        assert prof.ch06.model.vocab_size == prof.ch06.vocab_words + len(SPECIALS)
        assert prof.ch06.train.epochs is not None and prof.ch07.train.steps is not None
        assert prof.ch01.train.precision == "fp32"  # dot products of short vectors: no mixed precision
    assert profiles.get_profile("gpu").ch06.model == ClassifierConfig(
        dropout=0.1
    )  # the blog's model, with dropout
    assert profiles.get_profile("gpu").ch07.model == GeneratorConfig()  # the blog's model


def test_modern_runs_hold_bert_and_train_configs():
    from fromscratch.models.bert import BertConfig
    from fromscratch.tokenizers.special import WORD_SPECIALS
    from fromscratch.training import TrainConfig

    for name in profiles.PROFILE_NAMES:
        run = profiles.get_profile(name).ch10
        assert isinstance(run.bert, BertConfig)
        assert isinstance(run.pretraining, TrainConfig) and isinstance(run.finetuning, TrainConfig)
        assert run.bert.vocab_size == run.vocab_words + len(WORD_SPECIALS) + 1  # [MASK] is the last id
        assert run.pretraining.steps and run.finetuning.epochs and run.pretrain_len <= run.bert.context
        assert run.pretrain_len == run.bert.context  # pretrained at the length it is fine-tuned at
        assert 0 < run.mask_rate < 1
    cpu = profiles.get_profile("cpu").ch10  # the sizes 10.6's measured numbers were taken with
    assert (cpu.bert.emb, cpu.bert.heads, cpu.bert.depth, cpu.bert.context) == (64, 4, 2, 128)
    assert (cpu.pretraining.steps, cpu.pretraining.lr, cpu.mask_rate, cpu.finetuning.lr) == (
        12_000,
        5e-3,
        0.3,
        1e-3,
    )


def test_translation_run_holds_its_models_and_training_configs():
    from dataclasses import replace

    from fromscratch.chapters.ch09_encoder_decoder.pipeline import translation_checkpoint
    from fromscratch.models import EncoderDecoderConfig, RNNSeq2SeqConfig
    from fromscratch.training import TrainConfig

    for name in profiles.PROFILE_NAMES:
        run = profiles.get_profile(name).ch09
        assert isinstance(run.model, EncoderDecoderConfig) and isinstance(run.rnn, RNNSeq2SeqConfig)
        assert isinstance(run.train, TrainConfig) and isinstance(run.rnn_train, TrainConfig)
        assert run.model.src_vocab_size == run.model.tgt_vocab_size == run.rnn.vocab_size == run.vocab_size
        assert run.model.context == run.rnn.context == run.context
        assert not run.rnn.attention and run.rnn_attention == replace(run.rnn, attention=True)
        assert run.train.minutes and run.rnn_train.minutes  # time budgets; the lr decays to 0 at their end
        # the checkpoint's name follows every setting that shapes the weights, and nothing else
        first = translation_checkpoint("transformer", run.model, run.train, run)
        assert first.name.startswith("09_transformer-")
        for model, train, data, same in [
            (run.model, replace(run.train, progress=False), run, True),
            (run.model, replace(run.train, lr=1.0), run, False),
            (replace(run.model, dropout=0.0), run.train, run, False),
            (run.model, run.train, replace(run, max_tokens=1), False),
        ]:
            assert (translation_checkpoint("transformer", model, train, data) == first) == same


def test_sequence_runs_hold_model_and_train_configs():
    from fromscratch.models import SequenceClassifierConfig
    from fromscratch.training import TrainConfig

    for name in profiles.PROFILE_NAMES:
        run = profiles.get_profile(name).ch08
        assert all(isinstance(c, SequenceClassifierConfig) for c in (run.transformer, run.rnn, run.cnn))
        assert (run.rnn.encoder, run.cnn.encoder) == ("rnn", "cnn")
        assert isinstance(run.task_train, TrainConfig) and run.task_train.steps is not None
        # 8.4 races on the clock: a time budget only, the same TrainConfig for every model
        assert run.imdb_train.minutes and run.imdb_train.steps is None and run.imdb_train.epochs is None


def test_runs_are_named_by_chapter():
    prof = profiles.get_profile("smoke")
    assert set(prof.runs) == {"ch01", "ch02"} | {f"ch{n:02d}" for n in range(6, 20)}
    with pytest.raises(AttributeError, match="no run 'imdb'.*ch06"):
        _ = prof.imdb
