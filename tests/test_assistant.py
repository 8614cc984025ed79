"""Chapter 15's pipelines on a tiny random Llama: prefix-cached scoring equals scoring every prompt whole,
replies stop at the end of the turn, the stand-in file, the probe strings, the intervals, the paired tests,
few-shot orders and calibration, the base model's chat tokens, and the write-back count."""

from __future__ import annotations

import pytest
import torch

from fromscratch.chapters.ch15_assistant.assistant import (
    accuracy_of,
    chat_model_file,
    choice_ids,
    common_prefix,
    continue_ids,
    label_logits,
    prompt_ids,
    stand_in_tokenizer,
)
from fromscratch.chapters.ch15_assistant.learning_arms import steps_for
from fromscratch.data.probes import ODD_STRINGS, probe_strings
from fromscratch.generate import generate
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


def test_continue_ids_is_generate_up_to_the_stop(tiny):
    model, tokenizer = tiny
    ids = prompt_ids(tokenizer, [{"role": "user", "content": "Hello"}])
    out = generate(model, torch.tensor([ids]), steps=12, temperature=0)[0, len(ids) :].tolist()
    assert continue_ids(model, ids, max_new=12, stop=None) == out
    stop = out[3]
    assert continue_ids(model, ids, max_new=12, stop=stop) == out[: out.index(stop) + 1]
    sampled = continue_ids(model, ids, max_new=12, stop=None, temperature=1.0, top_p=0.9, seed=3)
    assert sampled == continue_ids(model, ids, max_new=12, stop=None, temperature=1.0, top_p=0.9, seed=3)


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


def test_few_shot_orders_end_with_each_label(mirror):
    from fromscratch.chapters.ch15_assistant.assistant_imdb import sentiment_data, shot_sets

    data = sentiment_data(vocab_words=1_000, pool=48, test=16)
    sets = shot_sets(data, 4, words=10, draws=2)
    assert len(sets) == 2 and sets[0]["ends positive"] != sets[1]["ends positive"]
    for shots in sets:
        assert [e.answer for e in shots["ends positive"]] == ["negative", "positive"] * 2
        assert [e.answer for e in shots["ends negative"]] == ["positive", "negative"] * 2


def test_calibration_divides_out_the_prompts_lean():
    from fromscratch.chapters.ch15_assistant.assistant_imdb import calibrate

    logits = torch.tensor([[0.0, 1.0], [0.0, 3.0]])  # both lean positive
    leaning = torch.tensor([[0.0, 2.0]])  # so does "N/A"
    assert calibrate(logits, leaning).argmax(-1).tolist() == [0, 1]
    neutral = torch.zeros(1, 2)
    assert torch.equal(calibrate(logits, neutral).argmax(-1), logits.argmax(-1))


def test_paired_tests():
    from fromscratch.chapters.ch15_assistant.paired import mcnemar, mean_interval, paired_bootstrap

    a = torch.tensor([True] * 30 + [False] * 70)
    assert mcnemar(a, a) == 1.0
    b = torch.tensor([True] * 10 + [False] * 90)  # a right on 20 more, never worse
    assert mcnemar(a, b) == pytest.approx(2 / 2**20)
    d = paired_bootstrap(a, b)
    assert d.value == pytest.approx(0.2) and d.low > 0 and d.verdict == "ahead" and d.p is not None
    assert paired_bootstrap(b, a).verdict == "behind"
    coin = torch.rand(200, generator=torch.Generator().manual_seed(0)) < 0.5
    flip = coin.clone()
    flip[:4] = ~flip[:4]  # two arms that differ on 4 of 200 reviews, in both directions
    assert paired_bootstrap(coin, flip).verdict == "not distinguishable"
    seeds = torch.stack([a, b])  # (2 runs, 100)
    assert paired_bootstrap(seeds, b).value == pytest.approx(0.1) and paired_bootstrap(seeds, b).p is None
    probabilities = torch.linspace(0.2, 0.8, 100)
    d = paired_bootstrap(probabilities + 0.1, probabilities)  # float tables: mean differences
    assert d.value == pytest.approx(0.1) and d.low == pytest.approx(0.1) and d.p is None
    mean, low, high = mean_interval(torch.arange(10.0))
    assert low < mean == 4.5 < high


def test_the_paired_interval_holds_the_spread_between_seeds():
    from fromscratch.chapters.ch15_assistant.paired import paired_bootstrap

    generator = torch.Generator().manual_seed(0)
    n = 5_000
    steady = torch.rand(n, generator=generator) < 0.7
    # three seeds of one arm that disagree (95, 55 and 80 %): 7 points ahead on average, but one seed
    # is far behind; resampling the reviews alone would call it ahead
    unsteady = torch.stack([torch.rand(n, generator=generator) < p for p in (0.95, 0.55, 0.8)])
    d = paired_bootstrap(unsteady, steady)
    assert d.value == pytest.approx(0.07, abs=0.02) and d.verdict == "not distinguishable"
    assert d.low < -0.1 and d.high > 0.2  # about the seeds' own range
    reviews_only = (unsteady.float().mean(0) - steady.float())[
        torch.randint(n, (500, n), generator=generator)
    ].mean(1)
    assert reviews_only.quantile(0.025) > 0  # what the seed-blind interval says
    agreeing = torch.stack([torch.rand(n, generator=generator) < 0.77 for _ in range(3)])
    assert paired_bootstrap(agreeing, steady).verdict == "ahead"  # seeds that agree: still decided


def test_chat_tokens_keep_the_base_model_and_the_template(tiny):
    from fromscratch.chapters.ch15_assistant.base_chat import ChatPieces, follows, with_chat_tokens
    from fromscratch.tokenizers.chat import encode_chat
    from fromscratch.tokenizers.sentencepiece import SentencePieceBPE

    pieces = SentencePieceBPE(
        ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), "▁a", "▁b"], [0.0] * 261
    )
    chat = ChatPieces(pieces)
    assert chat.special == {"<|im_start|>": 261, "<|im_end|>": 262} and len(chat) == 263
    ids, mask = encode_chat(
        chat, [{"role": "user", "content": "a b"}, {"role": "assistant", "content": "b"}], default_system=None
    )
    assert ids.count(261) == 2 and ids.count(262) == 2 and sum(mask) == len(chat.encode("b")) + 1
    assert (
        chat.decode(chat.encode("<|im_start|>a b<|im_end|>", allowed_special="all"))
        == "<|im_start|>a b<|im_end|>"
    )
    torch.manual_seed(0)
    base = Llama(vocab_size=261, context=64, emb=16, heads=2, kv_heads=1, depth=1, hidden=32).eval()
    bigger = with_chat_tokens(base)
    x = torch.randint(261, (1, 5))
    with torch.no_grad():
        assert torch.allclose(bigger(x)[..., :261], base(x), atol=1e-6)
    said = follows([("Tom had a kite.", True), ("Tom ran.", False)], [("Tom", "kite"), ("Tom", "kite")])
    assert (said.stopped, said.named, said.thing, said.both) == (0.5, 1.0, 0.5, 0.5)


def test_a_small_update_rounds_away_under_q4_1():
    from fromscratch.blocks.lora import add_lora, lora_layers
    from fromscratch.chapters.ch15_assistant.write_back import q4_1, surviving_update

    torch.manual_seed(0)
    model = Llama(vocab_size=64, context=32, emb=64, heads=2, kv_heads=1, depth=1, hidden=64)
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.weight.copy_(q4_1(layer.weight))  # on the grid, as read from a file
    add_lora(model, targets=["to_queries"], rank=2, alpha=4.0)
    layer = next(iter(lora_layers(model).values()))
    with torch.no_grad():
        layer.B.normal_(std=1e-6)  # far below a step
    tiny = surviving_update(model)
    assert tiny.below_half_step == 1.0 and tiny.unchanged > 0.99
    with torch.no_grad():
        layer.B.normal_(std=1.0)  # far above
    large = surviving_update(model)
    assert large.below_half_step < 0.5 and large.unchanged < 0.5 and large.kept > 0.5
    with torch.no_grad():
        layer.B.normal_(std=3e-3, generator=torch.Generator().manual_seed(0))  # a quarter of a Q4_1 step
    q4, q8 = surviving_update(model), surviving_update(model, "Q8_0")
    assert (q4.kind, q8.kind) == ("Q4_1", "Q8_0")
    assert q4.below_half_step > 0.9 and q4.kept < 0.5  # 4 bits round most of it away
    assert q8.below_half_step < 0.5 and abs(q8.kept - 1) < 0.1  # 8 bits keep it
    with pytest.raises(ValueError, match="Q8_0"):
        surviving_update(model, "Q2_K")
