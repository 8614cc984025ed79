"""Decoding encoder-decoders (chapter 09): greedy, beam search, the repetition guard, translate()."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention.masks import padding_mask
from fromscratch.data.multi30k_tokenizer import train_tokenizer
from fromscratch.generate import beam_search, block_repeats, greedy_search, translate
from fromscratch.generate.beam import _select, _select_cache, detokenize
from fromscratch.models import EncoderDecoder, RNNSeq2Seq
from fromscratch.tokenizers.special import BOS, EOS

V = 30


@pytest.fixture
def model():
    torch.manual_seed(1)
    sizes = dict(emb=16, heads=2, encoder_depth=1, decoder_depth=1, ff_mult=2, dropout=0.0, context=40)
    return EncoderDecoder(src_vocab_size=V, tgt_vocab_size=V, **sizes).eval()


def source(seed=0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (4, 6), generator=g)
    mask = padding_mask(torch.tensor([6, 4, 5, 1]), 6)
    return src.masked_fill(~mask, 0), mask


def naive_greedy(model, src, mask, steps):
    """One sentence at a time, the most likely token each step, no repetition guard."""
    out = []
    for i in range(src.size(0)):
        n = int(mask[i].sum())
        tokens = [BOS]
        with torch.no_grad():
            memory = model.encode(src[i : i + 1, :n])
            for _ in range(steps):
                logits = model.decode(torch.tensor([tokens]), memory)[0, -1]
                tokens.append(int(logits.argmax()))
                if tokens[-1] == EOS:
                    break
        out.append([t for t in tokens[1:] if t != EOS])
    return out


def test_beam_of_one_is_greedy_and_batched_greedy_matches_one_at_a_time(model):
    src, mask = source()
    greedy = greedy_search(model, src, mask, no_repeat_ngram=0, max_len_a=0, max_len_b=8)
    assert beam_search(model, src, mask, beam_size=1, no_repeat_ngram=0, max_len_a=0, max_len_b=8) == greedy
    assert greedy == naive_greedy(model, src, mask, steps=8)
    assert all(len(seq) <= 8 for seq in greedy)


def sequence_logprob(model, src, mask, seq):
    with torch.no_grad():
        tokens = torch.tensor([[BOS, *seq]])
        logp = torch.log_softmax(model(src, tokens, mask), -1)[0]
        return float(sum(logp[i, t] for i, t in enumerate(seq)))


def test_beam_search_finds_at_least_as_likely_translations_as_greedy(model):
    src, mask = source(3)
    options = dict(no_repeat_ngram=0, length_penalty=0.0, max_len_a=0, max_len_b=5)
    greedy = greedy_search(model, src, mask, **options)
    beam = beam_search(model, src, mask, beam_size=5, **options)
    for i in range(src.size(0)):
        n = int(mask[i].sum())
        s, m = src[i : i + 1, :n], mask[i : i + 1, :n]
        # compare complete 5-token prefixes or finished sentences by their log-probabilities
        assert sequence_logprob(model, s, m, beam[i]) >= sequence_logprob(model, s, m, greedy[i]) - 1e-4 or (
            len(beam[i]) < 5
        )


def test_block_repeats_forbids_a_second_copy_of_an_ngram():
    prefix = torch.tensor([[5, 6, 7, 5, 6], [1, 2, 3, 4, 5]])
    logits = torch.zeros(2, 10)
    out = block_repeats(logits, prefix, 3)  # "5 6" occurred before, followed by 7
    assert out[0, 7] == float("-inf") and torch.isfinite(out[0, :7]).all() and torch.isfinite(out[1]).all()
    assert block_repeats(logits, prefix, 0) is logits
    assert block_repeats(logits, prefix, 1)[1, 1:6].eq(float("-inf")).all()


def test_decoding_works_for_the_rnn_baselines():
    torch.manual_seed(0)
    rnn = RNNSeq2Seq(vocab_size=V, emb=8, hidden=8, attention=True, dropout=0.0, context=40).eval()
    src, mask = source()
    assert beam_search(rnn, src, mask, beam_size=1, max_len_b=6) == greedy_search(rnn, src, mask, max_len_b=6)
    assert len(beam_search(rnn, src, mask, beam_size=3, max_len_b=6)) == 4


def test_translate_empty_unknown_and_too_long_input():
    tokenizer = train_tokenizer(["a cat danced", "eine Katze tanzte", "the dog ran"] * 5, vocab_size=300)
    torch.manual_seed(0)
    n = tokenizer.get_vocab_size()
    sizes = dict(emb=16, heads=2, encoder_depth=1, decoder_depth=1, dropout=0.0, context=12)
    model = EncoderDecoder(src_vocab_size=n, tgt_vocab_size=n, **sizes).eval()
    assert translate(model, tokenizer, "") == ""
    out = translate(model, tokenizer, ["", "the cat danced", "ü 🐱 ✓"], beam_size=2)
    assert len(out) == 3 and out[0] == "" and all(isinstance(s, str) for s in out)
    with pytest.raises(ValueError, match="context=12"):
        translate(model, tokenizer, "the cat danced " * 10)


def test_control_bytes_in_an_output_become_replacement_characters():
    tokenizer = train_tokenizer(["Ein Hund läuft", "a dog runs"] * 5, vocab_size=300)
    ids = tokenizer.encode("Ein\x1b[31m Hund\x00\tläuft\n").ids
    assert detokenize(tokenizer, ids) == "Ein\ufffd[31m Hund\ufffd\tläuft\n"


@pytest.mark.parametrize("kind", ["transformer", "rnn", "rnn_attention"])
def test_cached_steps_equal_decoding_the_whole_prefix_even_after_reordering(model, kind):
    if kind != "transformer":
        torch.manual_seed(2)
        model = RNNSeq2Seq(
            vocab_size=V, emb=8, hidden=12, attention=kind == "rnn_attention", context=40
        ).eval()
    src, mask = source()
    g = torch.Generator().manual_seed(3)
    tokens = torch.cat([torch.full((4, 1), BOS), torch.randint(4, V, (4, 6), generator=g)], dim=1)  # (4, 7)
    order = torch.tensor([2, 0, 0, 3])  # beam search's reordering: rows may be dropped or repeated
    with torch.no_grad():
        memory = model.encode(src, mask)
        cache = model.new_cache()
        for i in range(3):  # the first three tokens, one at a time
            model.decode(tokens[:, i : i + 1], memory, mask, cache=cache)
        _select_cache(cache, order)
        memory = _select(memory, order)
        tokens, mask = tokens[order], mask[order]
        for i in range(3, 7):
            step = model.decode(tokens[:, i : i + 1], memory, mask, cache=cache)  # (4, 1, V): the new token
            full = model.decode(tokens[:, : i + 1], memory, mask)  # (4, i + 1, V): the whole prefix
            assert step.shape == (4, 1, V) and full.shape == (4, i + 1, V)
            torch.testing.assert_close(step[:, -1], full[:, -1], atol=1e-5, rtol=1e-4)
