"""Run profiles: automatic choice, the environment override, and a clear error for a bad name."""

from __future__ import annotations

import pytest
import torch

from fromscratch import profiles


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
    assert smoke.imdb.emb <= cpu.imdb.emb <= gpu.imdb.emb
    assert smoke.enwik8.context <= cpu.enwik8.context <= gpu.enwik8.context
    assert (gpu.imdb.depth, gpu.imdb.max_len, gpu.imdb.emb, gpu.imdb.heads) == (6, 512, 128, 8)  # the blog's
    assert (gpu.enwik8.depth, gpu.enwik8.emb, gpu.enwik8.context, gpu.enwik8.batch_size) == (12, 256, 256, 32)


def test_setup_seeds_and_reports(monkeypatch, capsys):
    monkeypatch.setenv("FROMSCRATCH_PROFILE", "smoke")
    device, prof = profiles.setup(seed=7)
    first = torch.rand(3)
    profiles.setup(seed=7)
    torch.testing.assert_close(torch.rand(3), first)
    out = capsys.readouterr().out
    assert f"device={device.type}" in out and "profile=smoke" in out and torch.__version__ in out
    assert prof.name == "smoke"


def test_runs_build_the_model_configs():
    from fromscratch.models import ClassifierConfig, GeneratorConfig
    from fromscratch.tokenizers.words import SPECIALS

    for name in profiles.PROFILE_NAMES:
        prof = profiles.get_profile(name)
        imdb, enwik8 = prof.imdb.model, prof.enwik8.model
        assert isinstance(imdb, ClassifierConfig) and isinstance(enwik8, GeneratorConfig)
        assert imdb.vocab_size == prof.imdb.vocab_words + len(SPECIALS) and imdb.max_len == prof.imdb.max_len
        assert (imdb.emb, imdb.heads, imdb.depth, imdb.dropout) == (
            prof.imdb.emb,
            prof.imdb.heads,
            prof.imdb.depth,
            prof.imdb.dropout,
        )
        assert (enwik8.emb, enwik8.heads, enwik8.depth, enwik8.context) == (
            prof.enwik8.emb,
            prof.enwik8.heads,
            prof.enwik8.depth,
            prof.enwik8.context,
        )
    assert profiles.get_profile("gpu").imdb.model == ClassifierConfig(
        dropout=0.1
    )  # the blog's model, with dropout
    assert profiles.get_profile("gpu").enwik8.model == GeneratorConfig()  # the blog's model


def test_modern_runs_hold_bert_and_train_configs():
    from fromscratch.models.bert import BertConfig
    from fromscratch.tokenizers.special import WORD_SPECIALS
    from fromscratch.training import TrainConfig

    for name in profiles.PROFILE_NAMES:
        run = profiles.get_profile(name).modern
        assert isinstance(run.bert, BertConfig)
        assert isinstance(run.pretraining, TrainConfig) and isinstance(run.finetuning, TrainConfig)
        assert run.bert.vocab_size == run.vocab_words + len(WORD_SPECIALS) + 1  # [MASK] is the last id
        assert run.pretraining.steps and run.finetuning.epochs and run.pretrain_len <= run.bert.max_len
    cpu = profiles.get_profile("cpu").modern  # the sizes 10.6's measured numbers were taken with
    assert (cpu.bert.emb, cpu.bert.heads, cpu.bert.depth, cpu.bert.max_len) == (64, 4, 2, 512)
    assert (cpu.pretraining.steps, cpu.pretraining.lr, cpu.finetuning.epochs, cpu.finetuning.lr) == (
        1_800,
        2e-3,
        1,
        1e-3,
    )


def test_translation_schedules_are_the_keywords_of_train_for_minutes():
    import inspect

    from fromscratch.recipes.translation import train_for_minutes

    keywords = set(inspect.signature(train_for_minutes).parameters)
    for name in profiles.PROFILE_NAMES:
        run = profiles.get_profile(name).translation
        for kind in ("transformer", "rnn", "rnn_attention"):
            assert set(run.schedule(kind)) <= keywords
        assert (
            run.schedule("rnn")["minutes"] == run.rnn_minutes and run.schedule("transformer")["lr"] == run.lr
        )
    with pytest.raises(ValueError, match="kind must be"):
        profiles.get_profile("smoke").translation.schedule("lstm")
