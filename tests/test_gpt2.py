"""Our GPT-2: equal to Hugging Face's GPT2LMHeadModel on random small configs; generation; loading errors."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.masks import padding_mask
from fromscratch.generate import generate
from fromscratch.interop.huggingface import (
    GPT2_TRANSPOSED,
    StateDictMismatch,
    from_hf,
    gpt2_table,
    load_state,
)
from fromscratch.models.gpt2 import GPT2

transformers = pytest.importorskip("transformers")


def hf_gpt2(seed: int = 0, **sizes):
    torch.manual_seed(seed)
    config = dict(
        vocab_size=101, n_embd=24, n_layer=2, n_head=3, n_positions=16, resid_pdrop=0.0, embd_pdrop=0.0
    )
    config = transformers.GPT2Config(**(config | sizes), attn_pdrop=0.0, attn_implementation="eager")
    return transformers.GPT2LMHeadModel(config).eval()


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_hf_gpt2_with_padding(seed):
    hf = hf_gpt2(seed)
    ours = from_hf(hf)
    ids = torch.randint(0, 101, (3, 16), generator=torch.Generator().manual_seed(seed))
    mask = padding_mask(torch.tensor([16, 9, 2]), 16)  # right padding: real tokens keep their positions
    with torch.no_grad():
        theirs = hf(ids, attention_mask=mask.long()).logits
        mine = ours(ids, padding_mask=mask)
        full = ours(ids)
    torch.testing.assert_close(mine[mask], theirs[mask], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(full[0], hf(ids[:1]).logits[0], atol=1e-5, rtol=1e-5)


def test_tied_output_layer_and_structure():
    model = GPT2(vocab_size=30, context=8, emb=16, heads=2, depth=2, dropout=0.0)
    assert model.to_logits.weight is model.token_embedding.weight
    assert all(isinstance(norm, torch.nn.LayerNorm) for norm in (model.blocks[0].norm1, model.final_norm))
    ids = torch.randint(0, 30, (2, 8))
    logits = model(ids)
    assert logits.shape == (2, 8, 30)
    changed = ids.clone()
    changed[:, 5] = (changed[:, 5] + 1) % 30
    torch.testing.assert_close(model(changed)[:, :5], logits[:, :5])  # causal: the past ignores the future


def test_too_long_input_raises():
    model = GPT2(vocab_size=30, context=8, emb=16, heads=2, depth=1)
    with pytest.raises(ValueError, match="context=8"):
        model(torch.zeros(1, 9, dtype=torch.long))


def test_generation_matches_hf_greedy():
    hf = hf_gpt2(0)
    ours = from_hf(hf)
    prompt = torch.tensor([[5, 17, 42]])
    mine = generate(ours, prompt, steps=8, temperature=0)
    theirs = hf.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert torch.equal(mine, theirs)


def test_a_state_dict_for_another_config_lists_the_keys():
    state = hf_gpt2(n_embd=30, n_head=3).state_dict()
    ours = GPT2(vocab_size=101, context=16, emb=24, heads=3, depth=2)
    with pytest.raises(StateDictMismatch) as error:
        load_state(
            ours, state, gpt2_table(2), transposed=GPT2_TRANSPOSED, ignored=r"^lm_head", strip="transformer."
        )
    message = str(error.value)
    assert "wrong shape" in message and "h.0.attn.c_attn.weight (30, 90)" in message
    assert "missing (0)" in message and "unexpected (0)" in message


def test_kv_cache_generation_equals_recomputation():
    torch.manual_seed(0)
    model = GPT2(vocab_size=40, context=16, emb=16, heads=2, depth=2, dropout=0.0).eval()
    prompt = torch.randint(0, 40, (2, 3))
    cached = generate(model, prompt, steps=10, temperature=0, cache=True)
    plain = generate(model, prompt, steps=10, temperature=0, cache=False)
    assert torch.equal(cached, plain)
    cache = model.new_cache()
    with torch.no_grad():
        full = model(cached[:, :8])
        model(cached[:, :5], cache=cache)
        step = model(cached[:, 5:8], cache=cache)
    torch.testing.assert_close(step, full[:, 5:8], atol=1e-5, rtol=1e-5)


def test_attention_weights_come_back_through_a_list():
    torch.manual_seed(0)
    model = GPT2(vocab_size=30, context=8, emb=16, heads=2, depth=2, dropout=0.0).eval()
    ids, mask = torch.randint(0, 30, (2, 8)), padding_mask(torch.tensor([8, 5]), 8)
    weights = []
    logits = model(ids, padding_mask=mask, attention=weights)
    assert [tuple(w.shape) for w in weights] == [(2, 2, 8, 8)] * 2
    assert all((w[1, :, :, 5:] == 0).all() and (w.triu(1) == 0).all() for w in weights)
    torch.testing.assert_close(model(ids, padding_mask=mask), logits, atol=1e-5, rtol=1e-5)
