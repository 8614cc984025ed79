"""Record what every model family computed before issue 40's rewrite: ``tests/golden/*.pt``.

Run once against the old code (commit 012f766), never against the new one::

    git archive 012f766 src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python tests/golden/make_goldens.py

Each case builds a tiny model at a fixed seed, runs fixed inputs (with padding masks, and step by
step through the KV cache where the model had one) and stores ``{"state", "inputs", "outputs"}``:
the state dict, the inputs, and the logits (``*_w`` and ``weights``: the same call with
``return_attention=True``). ``tests/test_goldens.py`` loads each into the new classes.
"""

from __future__ import annotations

from pathlib import Path

import torch

from fromscratch.attention import SelfAttention, padding_mask
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
    RNNSeq2Seq,
    SequenceClassifier,
    SetTransformer,
    TransformerXL,
    ViT,
    ViTConfig,
)

HERE = Path(__file__).parent
V, T = 32, 6  # vocabulary and sequence length of the token models
LENGTHS = torch.tensor([6, 4])  # the second sequence ends in two padded positions


def tokens(seed: int = 1, b: int = 2, t: int = T, vocab: int = V) -> torch.Tensor:
    return torch.randint(1, vocab, (b, t), generator=torch.Generator().manual_seed(seed))


def built(make):
    torch.manual_seed(0)
    return make().eval()


def with_weights(model, *args, **options):
    """``model(*args, **options, return_attention=True)``: (output, weights), the weights as one list."""
    out, weights = model(*args, **options, return_attention=True)
    return out, list(weights) if isinstance(weights, (list, tuple)) else weights


def stepped(model, ids, **options):
    """Logits of a prompt of 3 tokens, then one token at a time, through the model's KV cache."""
    cache = model.new_cache()
    parts = [model(ids[:, :3], cache=cache, **options)]
    parts += [model(ids[:, i : i + 1], cache=cache, **options) for i in range(3, ids.size(1))]
    return torch.cat(parts, dim=1)  # (b, t, V)


@torch.no_grad()
def attention_cases() -> dict:
    """Chapters 04-05: SelfAttention in its three kinds and the block, with both masks."""
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(2))
    pad = padding_mask(torch.tensor([5, 3]), 5)
    pattern = torch.rand(5, 5, generator=torch.Generator().manual_seed(3)) < 0.6
    pattern[2] = False  # query 2 sees no key: zero weights, never NaN
    cases = {}
    for name, make in {
        "standard": lambda: SelfAttention(8, 2),
        "standard_bias": lambda: SelfAttention(8, 2, qkv_bias=True),
        "causal": lambda: SelfAttention(8, 2, causal=True),
        "wide": lambda: SelfAttention(8, 2, "wide"),
        "wide_any": lambda: SelfAttention(10, 3, "wide"),
        "narrow": lambda: SelfAttention(8, 2, "narrow"),
        "block_post": lambda: TransformerBlock(8, 2, ff_mult=2),
        "block_pre_causal": lambda: TransformerBlock(8, 2, ff_mult=2, norm="pre", causal=True),
        "block_bert": lambda: TransformerBlock(8, 2, qkv_bias=True, activation="gelu", norm_eps=1e-12),
    }.items():
        module = built(make)
        xi = torch.randn(2, 5, 10, generator=torch.Generator().manual_seed(2)) if name == "wide_any" else x
        outputs = {"plain": module(xi), "padded": module(xi, padding_mask=pad)}
        outputs["masked"] = module(xi, padding_mask=pad, attn_mask=pattern)
        outputs["masked_w"], outputs["weights"] = module(
            xi, padding_mask=pad, attn_mask=pattern, return_attention=True
        )
        cases[name] = {"state": module.state_dict(), "inputs": {"x": xi, "pad": pad, "pattern": pattern}}
        cases[name]["outputs"] = outputs
    return cases


@torch.no_grad()
def early_cases() -> dict:
    """Chapters 05-08: the classifier, the generator (with its cache), the sequence classifier."""
    ids, pad = tokens(), padding_mask(LENGTHS, T)
    ids = ids.masked_fill(~pad, 0)
    small = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2)
    cases = {}
    classifiers = {
        "classifier_mean": dict(),
        "classifier_cls": dict(pooling="cls", norm="pre"),
        "classifier_sinusoidal": dict(positions="sinusoidal"),
        "classifier_nopos": dict(positions=None, pad_id=None),
    }
    for name, fields in classifiers.items():
        model = built(lambda fields=fields: Classifier(**small, max_len=T, **fields))
        outputs = {"logits": model(ids), "padded": model(ids, padding_mask=pad)}
        outputs["logits_w"], outputs["weights"] = with_weights(model, ids)
        cases[name] = {"state": model.state_dict(), "inputs": {"ids": ids, "pad": pad}, "outputs": outputs}
    model = built(lambda: SequenceClassifier(**small, max_len=T, encoder="transformer"))
    cases["sequence_transformer"] = {
        "state": model.state_dict(),
        "inputs": {"ids": ids, "pad": pad},
        "outputs": {"logits": model(ids), "padded": model(ids, padding_mask=pad)},
    }
    full = tokens(seed=4)
    for name, fields in {"generator": {}, "generator_pre": {"norm": "pre"}}.items():
        model = built(lambda fields=fields: Generator(**small, context=T, **fields))
        outputs = {"logits": model(full), "stepped": stepped(model, full)}
        outputs["logits_w"], outputs["weights"] = with_weights(model, full)
        cases[name] = {"state": model.state_dict(), "inputs": {"ids": full}, "outputs": outputs}
    model = built(lambda: Generator(**small, context=T, causal=False))
    cases["generator_unmasked"] = {
        "state": model.state_dict(),
        "inputs": {"ids": full},
        "outputs": {"logits": model(full)},
    }
    return cases


@torch.no_grad()
def long_context_cases() -> dict:
    """Chapter 11: the generator with every position scheme and both sparse patterns, and its cache;
    Transformer-XL over two segments."""
    ids = tokens(seed=5, t=8)
    small = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2, context=8, norm="pre")
    cases = {}
    variants = {
        **{
            f"positions_{p}": {"positions": p}
            for p in ("learned", "sinusoidal", "rope", "alibi", "t5", "none")
        },
        "sparse_strided": {"sparsity": "strided", "sparse_block": 4},
        "sparse_fixed": {"sparsity": "fixed", "sparse_block": 4},
    }
    for name, fields in variants.items():
        model = built(lambda fields=fields: Generator(**small, **fields))
        if name == "positions_t5":  # its table starts at zero: give it something to show
            model.stack.position_bias.table.weight.normal_(generator=torch.Generator().manual_seed(6))
        outputs = {"logits": model(ids), "stepped": stepped(model, ids)}
        outputs["logits_w"], outputs["weights"] = with_weights(model, ids)
        cases[name] = {"state": model.state_dict(), "inputs": {"ids": ids}, "outputs": outputs}
    model = built(
        lambda: TransformerXL(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2, segment=4, memory=4)
    )
    for name, p in model.named_parameters():  # u and v start at zero
        if name.endswith((".u", ".v")):
            p.normal_(generator=torch.Generator().manual_seed(7))
    first, memory = model(ids[:, :4])
    second, memory = model(ids[:, 4:], memory)
    attention = model.layers[0].attention
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(8))
    context = torch.cat([torch.randn(2, 2, 8, generator=torch.Generator().manual_seed(9)), x], dim=1)
    out, weights = attention(x, context, return_attention=True)
    cases["transformer_xl"] = {
        "state": model.state_dict(),
        "inputs": {"ids": ids, "x": x, "context": context},
        "outputs": {
            "first": first,
            "second": second,
            "memory": memory,
            "attention_out": out,
            "attention_weights": weights,
        },
    }
    return cases


@torch.no_grad()
def modern_cases() -> dict:
    """Chapters 10 and 14: GPT-2, BERT, and the Llama with chapter 14's ablation and GQA."""
    ids, pad = tokens(seed=10, t=8), padding_mask(torch.tensor([8, 5]), 8)
    cases = {}
    model = built(lambda: GPT2(vocab_size=V, context=8, emb=8, heads=2, depth=2, ff_mult=2, dropout=0.0))
    outputs = {"logits": model(ids), "padded": model(ids, padding_mask=pad), "stepped": stepped(model, ids)}
    outputs["logits_w"], outputs["weights"] = with_weights(model, ids, padding_mask=pad)
    cases["gpt2"] = {"state": model.state_dict(), "inputs": {"ids": ids, "pad": pad}, "outputs": outputs}

    bert = dict(vocab_size=V, emb=8, heads=2, depth=2, ff_mult=2, max_len=8, dropout=0.0)
    segments = (torch.arange(8) >= 4).long().expand(2, 8)
    model = built(lambda: BertEncoder(**bert))
    outputs = {"hidden": model(ids), "padded": model(ids, pad, segment_ids=segments)}
    outputs["hidden_w"], outputs["weights"] = with_weights(model, ids, pad, segment_ids=segments)
    cases["bert_encoder"] = {
        "state": model.state_dict(),
        "inputs": {"ids": ids, "pad": pad, "segments": segments},
        "outputs": outputs,
    }
    model = built(lambda: BertForPretraining(**bert))
    cases["bert_mlm"] = {
        "state": model.state_dict(),
        "inputs": {"ids": ids, "pad": pad, "only": pad & (ids % 3 == 0)},
        "outputs": {"logits": model(ids, pad), "only": model(ids, pad, only=pad & (ids % 3 == 0))},
    }
    for pooling in ("cls", "mean"):
        model = built(lambda pooling=pooling: BertForClassification(BertEncoder(**bert), 3, pooling=pooling))
        cases[f"bert_classifier_{pooling}"] = {
            "state": model.state_dict(),
            "inputs": {"ids": ids, "pad": pad},
            "outputs": {"logits": model(ids, pad)},
        }

    base = LlamaConfig(vocab_size=V, context=8, emb=16, heads=4, kv_heads=2, depth=2, hidden=24, tied=False)
    gpt2_style = dict(kv_heads=4, norm="layer", feedforward="gelu", positions="learned", bias=True, tied=True)
    llamas = {
        "llama": {},
        "llama_tied": {"tied": True, "rope_theta": 500.0},
        "llama_bias": {"bias": True},
        "llama_mqa": {"kv_heads": 1},
        "ladder_gpt2": gpt2_style,
        "ladder_rms": {**gpt2_style, "norm": "rms"},
        "ladder_swiglu": {**gpt2_style, "norm": "rms", "feedforward": "swiglu"},
        "ladder_rope": {**gpt2_style, "norm": "rms", "feedforward": "swiglu", "positions": "rope"},
    }
    for name, fields in llamas.items():
        model = built(lambda fields=fields: Llama(base, **fields))
        outputs = {
            "logits": model(ids),
            "padded": model(ids, padding_mask=pad),
            "stepped": stepped(model, ids),
        }
        outputs["logits_w"], outputs["weights"] = with_weights(model, ids, padding_mask=pad)
        cases[name] = {"state": model.state_dict(), "inputs": {"ids": ids, "pad": pad}, "outputs": outputs}
    return cases


@torch.no_grad()
def translation_cases() -> dict:
    """Chapter 09: the encoder-decoder (teacher forcing, its weights, decoding through its cache)
    and the RNN with Bahdanau attention."""
    g = torch.Generator().manual_seed(11)
    src, tgt = torch.randint(4, V, (2, 7), generator=g), torch.randint(4, V, (2, 5), generator=g)
    src_pad = padding_mask(torch.tensor([7, 4]), 7)
    src = src.masked_fill(~src_pad, 0)
    small = dict(src_vocab_size=V, tgt_vocab_size=V, emb=8, heads=2, encoder_depth=2, decoder_depth=2)
    cases = {}
    variants = {
        "encoder_decoder": {},
        "encoder_decoder_pre": {"norm": "pre", "positions": "learned"},
        "encoder_decoder_apart": {"positions": "none", "share_embeddings": False, "tie_output": False},
    }
    for name, fields in variants.items():
        model = built(
            lambda fields=fields: EncoderDecoder(**small, ff_mult=2, dropout=0.0, max_len=8, **fields)
        )
        logits_w, weights = model(src, tgt, src_pad, return_attention=True)
        memory = model.encode(src, src_pad)
        cache = model.new_cache()
        steps = [model.decode(tgt[:, i : i + 1], memory, src_pad, cache=cache) for i in range(tgt.size(1))]
        cases[name] = {
            "state": model.state_dict(),
            "inputs": {"src": src, "tgt": tgt, "src_pad": src_pad},
            "outputs": {
                "logits": model(src, tgt, src_pad),
                "logits_w": logits_w,
                "encoder": weights["encoder"],
                "decoder": weights["decoder"],
                "cross": weights["cross"],
                "stepped": torch.cat(steps, dim=1),
            },
        }
    model = built(lambda: RNNSeq2Seq(vocab_size=V, emb=8, hidden=8, max_len=8))
    logits_w, alignment = model(src, tgt, src_pad, return_attention=True)
    cases["rnn_attention"] = {
        "state": model.state_dict(),
        "inputs": {"src": src, "tgt": tgt, "src_pad": src_pad},
        "outputs": {"logits": model(src, tgt, src_pad), "logits_w": logits_w, "alignment": alignment},
    }
    return cases


@torch.no_grad()
def beyond_cases() -> dict:
    """Chapter 13: the ViT (positions, pooling, a local mask), the image-question toy, sets."""
    images = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(12))
    vit = dict(image_size=8, patch=4, num_classes=3, emb=8, heads=2, depth=2, ff_mult=2)
    cases = {}
    variants = {
        "vit": {},
        "vit_mean_learned": {"pooling": "mean", "positions": "learned", "norm": "post"},
        "vit_local": {"positions": None, "local": 0},
    }
    for name, fields in variants.items():
        model = built(lambda fields=fields: ViT(**vit, **fields))
        outputs = {"logits": model(images)}
        outputs["logits_w"], outputs["weights"] = with_weights(model, images)
        cases[name] = {"state": model.state_dict(), "inputs": {"images": images}, "outputs": outputs}
    words = torch.randint(0, 5, (2, 3), generator=torch.Generator().manual_seed(13))
    model = built(lambda: ImageQuestion(ImageQuestionConfig(ViTConfig(**vit), vocab_size=5, max_words=3)))
    outputs = {"logits": model(images, words)}
    outputs["logits_w"], outputs["weights"] = with_weights(model, images, words)
    cases["image_question"] = {
        "state": model.state_dict(),
        "inputs": {"images": images, "words": words},
        "outputs": outputs,
    }
    x = torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(14))
    pad = padding_mask(torch.tensor([5, 3]), 5)
    graph = torch.rand(2, 5, 5, generator=torch.Generator().manual_seed(15)) < 0.4
    graph = (graph | graph.transpose(1, 2) | torch.eye(5, dtype=torch.bool))[:, None]  # (b, 1, n, n)
    sets = dict(input_dim=6, hidden=8, emb=8, heads=2, depth=2, ff_mult=2, num_classes=3)
    for name, fields in {"set_transformer": {}, "set_nodes": {"pooling": None, "norm": "post"}}.items():
        model = built(lambda fields=fields: SetTransformer(**sets, **fields))
        outputs = {"logits": model(x, padding_mask=pad, attn_mask=graph)}
        outputs["logits_w"], outputs["weights"] = with_weights(model, x, padding_mask=pad, attn_mask=graph)
        cases[name] = {"state": model.state_dict(), "inputs": {"x": x, "pad": pad, "graph": graph}}
        cases[name]["outputs"] = outputs
    model = built(lambda: DeepSets(**sets))
    cases["deep_sets"] = {
        "state": model.state_dict(),
        "inputs": {"x": x, "pad": pad},
        "outputs": {"logits": model(x, padding_mask=pad)},
    }
    return cases


FAMILIES = {
    "attention": attention_cases,
    "early": early_cases,
    "long_context": long_context_cases,
    "modern": modern_cases,
    "translation": translation_cases,
    "beyond": beyond_cases,
}

if __name__ == "__main__":
    torch.use_deterministic_algorithms(True)
    for family, make in FAMILIES.items():
        path = HERE / f"{family}.pt"
        torch.save(make(), path)
        print(f"{path.name}: {path.stat().st_size / 1e3:.0f} kB")
