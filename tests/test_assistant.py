"""Chapter 15's pipelines on a tiny random Llama: prefix-cached scoring equals scoring every prompt whole,
greedy replies stop at the end of the turn, the stand-in file, the probe strings, and the intervals."""

from __future__ import annotations

import pytest
import torch

from fromscratch.chapters.ch15_assistant.assistant import (
    accuracy_of,
    chat_model_file,
    choice_ids,
    common_prefix,
    greedy_reply,
    label_logits,
    prompt_ids,
    stand_in_tokenizer,
)
from fromscratch.chapters.ch15_assistant.assistant_imdb import steps_for
from fromscratch.data.probes import ODD_STRINGS, probe_strings
from fromscratch.generate import generate_tokens
from fromscratch.interop.gguf_llama import read_gguf_llama
from fromscratch.metrics.intervals import wilson_interval
from fromscratch.models import Llama, LlamaConfig

TEXTS = ["The film was wonderful, I loved it.", "A dull, long and boring movie!", "Ein Hund läuft."] * 10


@pytest.fixture(scope="module")
def tiny():
    tokenizer = stand_in_tokenizer(TEXTS, 320)
    torch.manual_seed(0)
    model = Llama(
        vocab_size=len(tokenizer), context=1024, emb=32, heads=4, kv_heads=2, depth=2, hidden=64
    ).eval()
    return model, tokenizer


def test_common_prefix():
    assert common_prefix([[1, 2, 3], [1, 2, 4, 5], [1, 2]]) == [1, 2]
    assert common_prefix([[1, 2], [3]]) == []


def test_prefix_cached_scores_equal_whole_prompts(tiny):
    model, tokenizer = tiny
    shots = [{"role": "user", "content": "A dull film."}, {"role": "assistant", "content": "negative"}]
    prompts = [prompt_ids(tokenizer, [*shots, {"role": "user", "content": t}]) for t in TEXTS[:5]]
    choices = choice_ids(tokenizer, ["positive", "negative"])
    assert len(common_prefix(prompts)) > 20  # the system turn and the example are shared
    cached = label_logits(model, prompts, choices, batch=2)
    with torch.no_grad():
        whole = torch.stack([model(torch.tensor([p]))[0, -1, choices] for p in prompts])
    assert cached.shape == (5, 2) and torch.allclose(cached, whole, atol=1e-5)


def test_greedy_reply_is_generate_tokens_cut_at_the_stop(tiny):
    model, tokenizer = tiny
    ids = prompt_ids(tokenizer, [{"role": "user", "content": "Hello"}])
    out = generate_tokens(model, torch.tensor([ids]), 12, context=model.context, temperature=0)[
        0, len(ids) :
    ].tolist()
    assert greedy_reply(model, ids, max_new=12, stop=-1) == out
    stop = out[3]
    assert greedy_reply(model, ids, max_new=12, stop=stop) == out[: out.index(stop) + 1]


def test_the_stand_in_file_is_written_once_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("FROMSCRATCH_DATA", str(tmp_path))
    config = LlamaConfig(vocab_size=300, context=256, emb=32, heads=2, kv_heads=1, depth=1, hidden=32)
    path = chat_model_file("tiny", tiny=config, texts=TEXTS)
    assert path.parent == tmp_path / "chat" and chat_model_file("tiny", tiny=config, texts=TEXTS) == path
    model, tokenizer = read_gguf_llama(path)
    assert model.config.vocab_size == len(tokenizer) <= 300 and "<|im_start|>" in tokenizer.special
    with pytest.raises(ValueError, match="'tiny'"):
        chat_model_file("gpt-5")


def test_probe_strings_are_seeded_and_start_with_the_odd_ones():
    strings = probe_strings(TEXTS, 50, ["<|im_end|>"], seed=0)
    assert strings == probe_strings(TEXTS, 50, ["<|im_end|>"], seed=0) and len(strings) == 50
    assert strings[: len(ODD_STRINGS)] == list(ODD_STRINGS)


def test_wilson_interval():
    none = wilson_interval(0, 10)
    assert none.low == 0 and abs(none.high - 3.8415 / 13.8415) < 1e-4  # z²/(n + z²)
    half = wilson_interval(50, 100)
    assert abs(half.low - 0.4038) < 1e-3 and abs(half.high - 0.5962) < 1e-3
    assert str(wilson_interval(3, 4)).startswith("75.0% [")
    with pytest.raises(ValueError, match="correct <= n"):
        wilson_interval(5, 4)
    p = accuracy_of(torch.tensor([[0.0, 1.0], [2.0, 1.0], [0.0, 3.0]]), torch.tensor([1, 1, 1]))
    assert (p.correct, p.n) == (2, 3)


def test_steps_for():
    assert steps_for(8, batch_size=8, epochs=1, min_steps=4) == 4
    assert steps_for(130, batch_size=8, epochs=1, min_steps=4) == 17


def test_few_shot_examples_alternate_their_labels(mirror):
    from fromscratch.chapters.ch15_assistant.assistant_imdb import sentiment_data, shot_examples

    data = sentiment_data(vocab_words=1_000, max_len=64, pool=48, test=16)
    assert [e.answer for e in shot_examples(data, 4, words=10)] == ["negative", "positive"] * 2
    assert [e.answer for e in shot_examples(data, 3, words=10)] == ["negative", "positive", "positive"]
