"""Our BERT: equal to Hugging Face's on random small configs and on all-MiniLM-L6-v2; masking; loading
errors; chapter 10's recipe (checkpoint names, the [MASK] id)."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.masks import padding_mask
from fromscratch.data.masking import mask_tokens
from fromscratch.interop.huggingface import StateDictMismatch, bert_table, from_hf, load_bert, load_state
from fromscratch.models.bert import BertEncoder, BertForClassification, BertForPretraining
from fromscratch.tokenizers.special import IGNORE

transformers = pytest.importorskip("transformers")


def hf_bert(seed: int = 0, **sizes):
    torch.manual_seed(seed)
    config = dict(
        vocab_size=97,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=96,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )
    return transformers.BertModel(transformers.BertConfig(**(config | sizes))).eval()


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_hf_bert_with_padding(seed):
    hf = hf_bert(seed)
    ours = from_hf(hf)
    ids = torch.randint(0, 97, (3, 11), generator=torch.Generator().manual_seed(seed))
    mask = padding_mask(torch.tensor([11, 7, 1]), 11)  # (b, t)
    segments = (torch.arange(11) >= 5).long().expand(3, 11)
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask.long(), token_type_ids=segments).last_hidden_state
        mine = ours(ids, mask, segment_ids=segments)
    torch.testing.assert_close(mine[mask], theirs[mask], atol=1e-5, rtol=1e-5)  # real tokens only


def test_minilm_equals_hf_on_the_mirrored_weights(hf_minilm):
    encoder, tokenizer = load_bert("all-MiniLM-L6-v2")
    batch = tokenizer.encode_batch(
        ["This movie was great!", "A much longer sentence, with emoji 😀 and digits 42."]
    )
    ids = torch.tensor([e.ids for e in batch])
    mask = torch.tensor([e.attention_mask for e in batch]).bool()
    with torch.no_grad():
        theirs = hf_minilm(ids, attention_mask=mask.long()).last_hidden_state
        mine = encoder(ids, mask)
    assert mine.shape == (2, ids.size(1), 384)
    torch.testing.assert_close(mine[mask], theirs[mask], atol=1e-5, rtol=1e-5)


def test_a_state_dict_for_another_config_lists_the_keys():
    state = hf_bert().state_dict()
    ours = BertEncoder(vocab_size=97, emb=24, heads=3, depth=3, context=16, dropout=0.0)
    with pytest.raises(StateDictMismatch) as error:
        load_state(ours, state, bert_table(3), ignored=r"^pooler\.")
    message = str(error.value)
    assert "missing (16)" in message and "blocks.2.attention.to_queries.weight" in message
    assert "embeddings.position_embeddings.weight (32, 24)" in message  # wrong shape: 32 positions, not 16
    state["stray.weight"] = torch.zeros(1)
    with pytest.raises(StateDictMismatch, match="unexpected .*stray.weight"):
        load_state(BertEncoder(vocab_size=97, emb=24, heads=3, depth=2, context=32), state, bert_table(2))


def test_too_long_input_raises():
    model = BertEncoder(vocab_size=10, emb=8, heads=2, depth=1, context=4)
    with pytest.raises(ValueError, match="context=4"):
        model(torch.zeros(1, 5, dtype=torch.long))


def test_heads_shapes_and_tied_weights():
    model = BertForPretraining(vocab_size=50, emb=16, heads=2, depth=1, context=8, dropout=0.0)
    assert model.mlm.to_logits.weight is model.encoder.token_embedding.weight
    ids = torch.randint(0, 50, (2, 8))
    assert model(ids).shape == (2, 8, 50)
    only = torch.zeros(2, 8, dtype=torch.bool)
    only[0, 3] = only[1, 5] = True
    torch.testing.assert_close(model(ids, only=only), model(ids)[only])
    classifier = BertForClassification(model.encoder, 3)
    assert classifier(ids, torch.ones(2, 8, dtype=torch.bool)).shape == (2, 3)


def test_masking_proportions_on_a_large_sample():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 1000, (200, 500), generator=generator)
    ids[:, -50:] = 0  # padding
    real = ids != 0
    inputs, labels = mask_tokens(
        ids, mask_id=1000, vocab_size=1000, special_ids=(0,), padding_mask=real, generator=generator
    )
    chosen = labels != IGNORE
    assert not chosen[~real].any()  # padding is never chosen
    assert torch.equal(labels[chosen], ids[chosen]) and torch.equal(inputs[~chosen], ids[~chosen])
    n = chosen.sum().item()
    assert abs(n / real.sum().item() - 0.15) < 0.005
    masked = (inputs == 1000) & chosen
    kept = (inputs == ids) & chosen
    swapped = chosen & ~masked & ~kept
    assert abs(masked.sum().item() / n - 0.8) < 0.01
    assert abs(kept.sum().item() / n - 0.1) < 0.01  # includes random draws of the same id (0.1 %)
    assert abs(swapped.sum().item() / n - 0.1) < 0.01
    with pytest.raises(ValueError, match="rate"):
        mask_tokens(ids, mask_id=1, vocab_size=2, rate=1.5)


def test_bert_checkpoints_change_with_every_part_of_the_run():
    from dataclasses import replace

    from fromscratch.chapters import get_profile
    from fromscratch.chapters.ch10_modern_transformers.bert_imdb import bert_checkpoint

    run = get_profile("smoke").ch10
    pretraining, finetuning = bert_checkpoint(run, "pretraining"), bert_checkpoint(run, "finetuning")
    assert pretraining.name.startswith("10_bert_pretraining-") and pretraining != finetuning
    assert bert_checkpoint(run, "pretraining") == pretraining  # the chapter and the benchmark agree
    longer = replace(run, pretraining=replace(run.pretraining, lr=1e-3))
    assert bert_checkpoint(longer, "pretraining") != pretraining  # a new lr, a new file
    assert bert_checkpoint(longer, "finetuning") != finetuning  # fine-tuning starts from that run
    slower = replace(run, finetuning=replace(run.finetuning, lr=1e-4))
    assert bert_checkpoint(slower, "pretraining") == pretraining
    assert bert_checkpoint(slower, "finetuning") != finetuning
    assert bert_checkpoint(replace(run, pooling="mean"), "finetuning") != finetuning
    assert bert_checkpoint(run, "finetuning", seed=1) != finetuning
    with pytest.raises(ValueError, match="pretraining, finetuning"):
        bert_checkpoint(run, "probe")


def test_imdb_for_bert_puts_mask_last_after_the_special_table(mirror):
    from fromscratch.chapters import get_profile
    from fromscratch.chapters.ch10_modern_transformers.bert_imdb import imdb_for_bert, pretraining_batches
    from fromscratch.tokenizers.special import CLS, PAD, UNK, WORD_SPECIALS

    run = get_profile("smoke").ch10
    data = imdb_for_bert(run)
    assert data.vocab.itos[: len(WORD_SPECIALS)] == list(WORD_SPECIALS)
    assert (data.vocab.stoi["<pad>"], data.vocab.stoi["<unk>"], data.vocab.stoi["<cls>"]) == (PAD, UNK, CLS)
    assert data.mask_id == len(data.vocab) == run.bert.vocab_size - 1  # [MASK]: the model's last id
    batch = next(iter(pretraining_batches(run, data)))
    assert (batch["tokens"][:, 0] == CLS).all() and batch["tokens"].max() <= data.mask_id
    scored = batch["labels"] != IGNORE
    assert scored.any() and not (batch["labels"][scored] == PAD).any()  # padding is never asked for
