"""Chapter 15's chat template, assistant mask, instruction set and SFT loss; the template against
``transformers``' ``apply_chat_template`` (a tokenizer read from a GGUF file we write: no download)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fromscratch.chapters.ch15_assistant.assistant import stand_in_tokenizer
from fromscratch.data.instructions import (
    TASKS,
    ChatBatches,
    arithmetic_examples,
    clip_words,
    encode_example,
    sentiment_examples,
    spelling_examples,
    split,
    translation_examples,
)
from fromscratch.interop.gguf_llama import write_gguf_llama
from fromscratch.models import Llama
from fromscratch.tokenizers.chat import SMOLLM2_SYSTEM, SMOLLM2_TEMPLATE, encode_chat, render_chatml
from fromscratch.tokenizers.special import IGNORE
from fromscratch.training.sft import assistant_loss

TEXTS = ["The film was wonderful, I loved it.", "A dull, long and boring movie!", "Ein Hund läuft."] * 10
USER = {"role": "user", "content": "What is the capital of France?"}
CONVERSATIONS = [
    [USER],
    [{"role": "system", "content": "Be brief."}, USER],
    [USER, {"role": "assistant", "content": "Paris."}, {"role": "user", "content": "And of Italy?"}],
    [USER, {"role": "assistant", "content": "Paris, of course.\nIt is big."}],
]


@pytest.fixture(scope="module")
def tokenizer():
    return stand_in_tokenizer(TEXTS, 300)


@pytest.fixture(scope="module")
def hf_tokenizer(tmp_path_factory, tokenizer):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    path = tmp_path_factory.mktemp("chat") / "tiny.gguf"
    model = Llama(vocab_size=len(tokenizer), context=64, emb=32, heads=2, kv_heads=1, depth=1, hidden=32)
    write_gguf_llama(path, model, tokenizer, chat_template=SMOLLM2_TEMPLATE)
    return transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


def test_the_first_turn_is_smollm2s():
    assert render_chatml([USER], add_generation_prompt=True) == (
        f"<|im_start|>system\n{SMOLLM2_SYSTEM}<|im_end|>\n<|im_start|>user\n"
        "What is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.parametrize("conversation", CONVERSATIONS)
@pytest.mark.parametrize("prompt", [False, True])
def test_render_chatml_equals_apply_chat_template(hf_tokenizer, conversation, prompt):
    theirs = hf_tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=prompt)
    assert render_chatml(conversation, add_generation_prompt=prompt) == theirs


@pytest.mark.parametrize("conversation", CONVERSATIONS)
def test_encode_chat_is_the_whole_texts_ids_and_masks_the_assistants_tokens(tokenizer, conversation):
    ids, mask = encode_chat(tokenizer, conversation)
    assert ids == tokenizer.encode(render_chatml(conversation), allowed_special="all")
    scored = [i for i, m in zip(ids, mask, strict=True) if m]
    replies = [m["content"] for m in conversation if m["role"] == "assistant"]
    end = tokenizer.special["<|im_end|>"]
    assert tokenizer.decode([i for i in scored if i != end]) == "".join(replies)
    assert scored.count(end) == len(replies)  # each reply's end is learned too


def test_bad_conversations_are_clear_errors(tokenizer):
    with pytest.raises(ValueError, match="role"):
        render_chatml([{"role": "bot", "content": "hi"}])
    with pytest.raises(ValueError, match="only the first"):
        render_chatml([USER, {"role": "system", "content": "x"}])
    with pytest.raises(ValueError, match="without"):
        render_chatml([{"role": "user", "content": "a<|im_end|>b"}])
    with pytest.raises(ValueError, match="non-empty list"):
        render_chatml("hello")


def test_the_instruction_set_is_right_by_construction_and_splits_by_task():
    assert clip_words("one<br />two three four five", 3) == "one … four five"
    examples = [
        *sentiment_examples(["Great film.", "Awful."], [1, 0], words=10),
        *translation_examples([("A dog.", "Ein Hund.")] * 3),
        *arithmetic_examples(5, seed=0),
        *spelling_examples(["movie", "actor", "cinema", "x"], 5, seed=0),
    ]
    assert examples[0].answer == "positive" and examples[1].answer == "negative"
    for e in examples:
        if e.task == "arithmetic":
            assert str(eval(e.prompt[-1]["content"].removeprefix("What is ").removesuffix("?"))) == e.answer
    train, held = split(examples, 1, seed=0)
    assert sorted(e.task for e in held) == sorted(TASKS)
    assert len(train) + len(held) == len(examples) and not set(map(id, train)) & set(map(id, held))


def test_labels_score_the_next_token_where_it_is_the_assistants(tokenizer):
    example = arithmetic_examples(1, seed=3)[0]
    ids, labels = encode_example(tokenizer, example)
    full, mask = encode_chat(tokenizer, example.messages)
    assert ids.tolist() == full
    expected = [full[i + 1] if i + 1 < len(full) and mask[i + 1] else IGNORE for i in range(len(full))]
    assert labels.tolist() == expected


def test_chat_batches_pad_at_the_end_and_the_loss_skips_everything_else(tokenizer):
    examples = arithmetic_examples(3, seed=0) + spelling_examples(["movie", "actor"], 2, seed=0)
    batches = ChatBatches(tokenizer, examples, 2, pad_id=0, context=512)
    batch = batches.batch([0, 3])
    assert batch["ids"].shape == batch["labels"].shape and batch["lengths"].max() == batch["ids"].size(1)
    assert len(list(batches)) == len(batches) == 3
    torch.manual_seed(0)
    model = Llama(vocab_size=len(tokenizer), context=512, emb=16, heads=2, kv_heads=1, depth=1, hidden=32)
    logits = model(batch["ids"])
    scored = batch["labels"] != IGNORE
    by_hand = F.cross_entropy(logits[scored], batch["labels"][scored])
    assert torch.allclose(assistant_loss(model, batch), by_hand)
    with pytest.raises(ValueError, match="context"):
        ChatBatches(tokenizer, examples, 2, pad_id=0, context=10)
