"""Every model family computes what it computed before the rewrite to one attention, weight for weight.

``tests/golden/*.pt`` hold tiny models' state dicts, inputs and outputs recorded from the old code
(``tests/golden/make_goldens.py``, commit 012f766). Each case here builds the new class, loads the old
state dict (through :data:`RENAMED` where names changed) and compares every output at 1e-6 (fp32).

Key mapping, old -> new (everything else kept its name):

- chapter 11's generator (``Generator(positions=..., sparsity=...)`` before, ``LongContextGenerator``
  now): ``stack.positions.`` -> ``position_embedding.``, ``stack.`` -> nothing;
- the old ``return_attention=True`` outputs (``*_w``, ``weights``) are the new ``attention=[...]``
  lists; the encoder-decoder's dict is :meth:`EncoderDecoder.attention_parts`; the RNN's alignment
  ``(b, tt, ts)`` is one head, ``(b, 1, tt, ts)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fromscratch.attention import NarrowSelfAttention, SelfAttention, WideSelfAttention
from fromscratch.blocks import TransformerBlock
from fromscratch.models import (
    GPT2,
    BertEncoder,
    BertForClassification,
    BertForPretraining,
    Classifier,
    DeepSets,
    EncoderDecoder,
    Generator,
    ImageQuestion,
    ImageQuestionConfig,
    Llama,
    LlamaConfig,
    LongContextGenerator,
    RNNSeq2Seq,
    SequenceClassifier,
    SetTransformer,
    TransformerXL,
    ViT,
    ViTConfig,
)
from fromscratch.models.llama import MLP

GOLDEN = Path(__file__).parent / "golden"
V, T = 32, 6


def same(new, old) -> None:
    torch.testing.assert_close(new, old, atol=1e-6, rtol=1e-5)


def renamed_long_context(state: dict) -> dict:
    """Chapter 11's generator: the old ``Generator``'s keys in the new ``LongContextGenerator``."""
    return {
        k.replace("stack.positions.", "position_embedding.").removeprefix("stack."): v
        for k, v in state.items()
    }


def loaded(model, state, rename=None):
    model.load_state_dict(rename(state) if rename else state)
    return model.eval()


def with_weights(module, *args, **options):
    """``module(*args, **options, attention=weights)``: the output and the list ``weights``."""
    weights = []
    return module(*args, **options, attention=weights), weights


def stepped(model, ids, **options):
    cache = model.new_cache()
    parts = [model(ids[:, :3], cache=cache, **options)]
    parts += [model(ids[:, i : i + 1], cache=cache, **options) for i in range(3, ids.size(1))]
    return torch.cat(parts, dim=1)


@pytest.fixture(scope="module")
def goldens():
    return {path.stem: torch.load(path) for path in GOLDEN.glob("*.pt")}


ATTENTION = {
    "standard": lambda: SelfAttention(8, 2),
    "standard_bias": lambda: SelfAttention(8, 2, qkv_bias=True),
    "causal": lambda: SelfAttention(8, 2, causal=True),
    "wide": lambda: WideSelfAttention(8, 2),
    "wide_any": lambda: WideSelfAttention(10, 3),
    "narrow": lambda: NarrowSelfAttention(8, 2),
    "block_post": lambda: TransformerBlock(8, 2, ff_mult=2),
    "block_pre_causal": lambda: TransformerBlock(8, 2, ff_mult=2, norm="pre", causal=True),
    "block_bert": lambda: TransformerBlock(8, 2, qkv_bias=True, activation="gelu"),
}


@pytest.mark.parametrize("name", ATTENTION)
@torch.no_grad()
def test_attention_and_blocks(goldens, name):
    case = goldens["attention"][name]
    module = loaded(ATTENTION[name](), case["state"])
    if name == "block_bert":
        module.norm1.eps = module.norm2.eps = 1e-12
    x, pad, pattern, out = *case["inputs"].values(), case["outputs"]
    same(module(x), out["plain"])
    same(module(x, padding_mask=pad), out["padded"])
    same(module(x, padding_mask=pad, attn_mask=pattern), out["masked"])
    y, weights = with_weights(module, x, padding_mask=pad, attn_mask=pattern)
    same(y, out["masked_w"])
    same(weights, [out["weights"]])


SMALL = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2)
EARLY = {
    "classifier_mean": lambda: Classifier(**SMALL, context=T),
    "classifier_cls": lambda: Classifier(**SMALL, context=T, pooling="cls", norm="pre"),
    "classifier_sinusoidal": lambda: Classifier(**SMALL, context=T, positions="sinusoidal"),
    "classifier_nopos": lambda: Classifier(**SMALL, context=T, positions=None, pad_id=None),
    "generator": lambda: Generator(**SMALL, context=T),
    "generator_pre": lambda: Generator(**SMALL, context=T, norm="pre"),
    "generator_unmasked": lambda: Generator(**SMALL, context=T, causal=False),
}


@pytest.mark.parametrize("name", EARLY)
@torch.no_grad()
def test_classifier_and_generator(goldens, name):
    case = goldens["early"][name]
    model, ids, out = loaded(EARLY[name](), case["state"]), case["inputs"]["ids"], case["outputs"]
    same(model(ids), out["logits"])
    if "pad" in case["inputs"]:
        same(model(ids, padding_mask=case["inputs"]["pad"]), out["padded"])
    if "weights" in out:
        logits, weights = with_weights(model, ids)
        same(logits, out["logits_w"])
        same(weights, out["weights"])
    if name == "generator_pre":  # its KV cache lives in chapter 11's generator now
        twin = loaded(LongContextGenerator(**SMALL, context=T), case["state"], renamed_long_context)
        same(stepped(twin, ids), out["stepped"])


@torch.no_grad()
def test_sequence_classifier(goldens):
    case = goldens["early"]["sequence_transformer"]
    model = loaded(SequenceClassifier(**SMALL, context=T, encoder="transformer"), case["state"])
    ids, pad = case["inputs"]["ids"], case["inputs"]["pad"]
    same(model(ids), case["outputs"]["logits"])
    same(model(ids, padding_mask=pad), case["outputs"]["padded"])


LONG = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2, context=8)
VARIANTS = {
    **{f"positions_{p}": {"positions": p} for p in ("learned", "sinusoidal", "rope", "alibi", "t5")},
    "positions_none": {"positions": "nope"},  # recorded under the scheme's old name
    "sparse_strided": {"sparsity": "strided", "sparse_block": 4},
    "sparse_fixed": {"sparsity": "fixed", "sparse_block": 4},
}


@pytest.mark.parametrize("name", VARIANTS)
@torch.no_grad()
def test_long_context_generator(goldens, name):
    case = goldens["long_context"][name]
    model = loaded(LongContextGenerator(**LONG, **VARIANTS[name]), case["state"], renamed_long_context)
    ids, out = case["inputs"]["ids"], case["outputs"]
    same(model(ids), out["logits"])
    same(stepped(model, ids), out["stepped"])
    logits, weights = with_weights(model, ids)
    same(logits, out["logits_w"])
    same(weights, out["weights"])


@torch.no_grad()
def test_transformer_xl(goldens):
    case = goldens["long_context"]["transformer_xl"]
    model = loaded(TransformerXL(**SMALL, segment=4, memory=4), case["state"])
    ids, x, context = case["inputs"].values()
    out = case["outputs"]
    first, memory = model(ids[:, :4])
    second, memory = model(ids[:, 4:], memory)
    same(first, out["first"])
    same(second, out["second"])
    same(memory, out["memory"])
    y, weights = with_weights(model.layers[0].attention, x, context)
    same(y, out["attention_out"])
    same(weights, [out["attention_weights"]])


BASE = LlamaConfig(vocab_size=V, context=8, emb=16, heads=4, kv_heads=2, depth=2, hidden=24, tied=False)
GPT2_STYLE = dict(
    kv_heads=4, norm_kind="layer", feedforward="gelu_tanh", positions="learned", bias=True, tied=True
)
DECODERS = {
    "gpt2": lambda: GPT2(vocab_size=V, context=8, emb=8, heads=2, depth=2, ff_mult=2, dropout=0.0),
    "llama": lambda: Llama(BASE),
    "llama_tied": lambda: Llama(BASE, tied=True, rope_theta=500.0),
    "llama_bias": lambda: Llama(BASE, bias=True),
    "llama_mqa": lambda: Llama(BASE, kv_heads=1),
    "ladder_gpt2": lambda: Llama(BASE, **GPT2_STYLE),
    "ladder_rms": lambda: Llama(BASE, **{**GPT2_STYLE, "norm_kind": "rms"}),
    "ladder_swiglu": lambda: Llama(BASE, **{**GPT2_STYLE, "norm_kind": "rms", "feedforward": "swiglu"}),
    "ladder_rope": lambda: Llama(
        BASE, **{**GPT2_STYLE, "norm_kind": "rms", "feedforward": "swiglu", "positions": "rope"}
    ),
}


def learned_positions_as_gpt2s(state):
    """The learned rungs' positions moved to GPT-2's own name (``position_embedding.weight``)."""
    old = "position_embedding.embedding.weight"
    return {("position_embedding.weight" if k == old else k): v for k, v in state.items()}


def as_recorded(model):
    """The GPT-2 rungs' MLP used the exact GELU when the goldens were recorded; it is GPT-2's tanh form
    now (so that GPT-2's weights load into the rung with equal logits). Give it the old GELU back: every
    other computation must still equal the recording."""
    for block in getattr(model, "blocks", []):
        if isinstance(block.ff, MLP):
            block.ff.net[1] = torch.nn.GELU()
    return model


@pytest.mark.parametrize("name", DECODERS)
@torch.no_grad()
def test_gpt2_and_llama(goldens, name):
    case = goldens["modern"][name]
    model = as_recorded(loaded(DECODERS[name](), case["state"], learned_positions_as_gpt2s))
    ids, pad, out = case["inputs"]["ids"], case["inputs"]["pad"], case["outputs"]
    same(model(ids), out["logits"])
    same(model(ids, padding_mask=pad), out["padded"])
    same(stepped(model, ids), out["stepped"])
    logits, weights = with_weights(model, ids, padding_mask=pad)
    same(logits, out["logits_w"])
    same(weights, out["weights"])


BERT = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2, context=8, dropout=0.0)


@torch.no_grad()
def test_bert(goldens):
    case = goldens["modern"]["bert_encoder"]
    model = loaded(BertEncoder(**BERT), case["state"])
    ids, pad, segments = case["inputs"].values()
    same(model(ids), case["outputs"]["hidden"])
    same(model(ids, pad, segment_ids=segments), case["outputs"]["padded"])
    hidden, weights = with_weights(model, ids, pad, segment_ids=segments)
    same(hidden, case["outputs"]["hidden_w"])
    same(weights, case["outputs"]["weights"])
    case = goldens["modern"]["bert_mlm"]
    model = loaded(BertForPretraining(**BERT), case["state"])
    ids, pad, only = case["inputs"].values()
    same(model(ids, pad), case["outputs"]["logits"])
    same(model(ids, pad, only=only), case["outputs"]["only"])
    for pooling in ("cls", "mean"):
        case = goldens["modern"][f"bert_classifier_{pooling}"]
        model = loaded(BertForClassification(BertEncoder(**BERT), 3, pooling=pooling), case["state"])
        same(model(*case["inputs"].values()), case["outputs"]["logits"])


TRANSLATION = dict(src_vocab_size=V, tgt_vocab_size=V, emb=8, heads=2, encoder_depth=2, decoder_depth=2)
ENCODER_DECODERS = {
    "encoder_decoder": {},
    "encoder_decoder_pre": {"norm": "pre", "positions": "learned"},
    "encoder_decoder_apart": {"positions": None, "share_embeddings": False, "tie_output": False},
}


@pytest.mark.parametrize("name", ENCODER_DECODERS)
@torch.no_grad()
def test_encoder_decoder(goldens, name):
    case = goldens["translation"][name]
    fields = ENCODER_DECODERS[name]
    model = loaded(EncoderDecoder(**TRANSLATION, ff_mult=2, dropout=0.0, context=8, **fields), case["state"])
    src, tgt, src_pad = case["inputs"].values()
    out = case["outputs"]
    same(model(src, tgt, src_pad), out["logits"])
    logits, weights = with_weights(model, src, tgt, src_pad)
    same(logits, out["logits_w"])
    for part, tensors in model.attention_parts(weights).items():
        same(tensors, out[part])
    memory, cache = model.encode(src, src_pad), model.new_cache()
    steps = [model.decode(tgt[:, i : i + 1], memory, src_pad, cache=cache) for i in range(tgt.size(1))]
    same(torch.cat(steps, dim=1), out["stepped"])


@torch.no_grad()
def test_rnn_alignment(goldens):
    case = goldens["translation"]["rnn_attention"]
    model = loaded(RNNSeq2Seq(vocab_size=V, emb=8, hidden=8, context=8), case["state"])
    src, tgt, src_pad = case["inputs"].values()
    same(model(src, tgt, src_pad), case["outputs"]["logits"])
    logits, weights = with_weights(model, src, tgt, src_pad)
    same(logits, case["outputs"]["logits_w"])
    same(weights, [case["outputs"]["alignment"][:, None]])


VIT = dict(image_size=8, patch=4, num_classes=3, emb=8, heads=2, depth=2, ff_mult=2)
SETS = dict(input_dim=6, hidden=8, emb=8, heads=2, depth=2, ff_mult=2, num_classes=3)
BEYOND = {
    "vit": lambda: ViT(**VIT),
    "vit_mean_learned": lambda: ViT(**VIT, pooling="mean", positions="learned", norm="post"),
    "vit_local": lambda: ViT(**VIT, positions=None, local=0),
    "image_question": lambda: ImageQuestion(ImageQuestionConfig(ViTConfig(**VIT), vocab_size=5, max_words=3)),
    "set_transformer": lambda: SetTransformer(**SETS),
    "set_nodes": lambda: SetTransformer(**SETS, pooling=None, norm="post"),
    "deep_sets": lambda: DeepSets(**SETS),
}


@pytest.mark.parametrize("name", BEYOND)
@torch.no_grad()
def test_vision_and_sets(goldens, name):
    case = goldens["beyond"][name]
    model, inputs, out = loaded(BEYOND[name](), case["state"]), case["inputs"], case["outputs"]
    if "images" in inputs:
        args, options = [inputs["images"], *([inputs["words"]] if "words" in inputs else [])], {}
    else:
        args, options = [inputs["x"]], {"padding_mask": inputs["pad"]}
        options |= {"attn_mask": inputs["graph"]} if "graph" in inputs else {}
    same(model(*args, **options), out["logits"])
    if "weights" in out:
        logits, weights = with_weights(model, *args, **options)
        same(logits, out["logits_w"])
        same(weights, out["weights"])
