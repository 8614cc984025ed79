"""Hugging Face's BERT and GPT-2 weights in our models (chapter 10), and Llama's (chapter 14).

The weight tables of :mod:`fromscratch.interop.pytorch` extended to whole models: our key on the
left, Hugging Face's on the right, ``(ours, theirs)``. :func:`load_state` renames a Hugging Face
state dict (from a model or straight from a ``.safetensors`` file) along a table and loads it, after
checking it fits: otherwise a :class:`StateDictMismatch` lists the **missing**, **unexpected** and
**wrongly shaped** keys. GPT-2 keeps its linear layers in ``Conv1D`` modules, whose weights are the
transpose of ``nn.Linear``'s, and its query, key and value weights side by side in one ``c_attn``.

- :func:`from_hf`: our twin of a ``transformers`` ``BertModel``, ``GPT2LMHeadModel`` or ``LlamaForCausalLM``
  (its tables and RoPE reordering in :mod:`fromscratch.interop.hf_llama`), same weights;
- :func:`load_bert`: all-MiniLM-L6-v2 (a real pretrained BERT) and its WordPiece tokenizer;
- :func:`load_gpt2`: GPT-2 124M's real weights (downloaded once where a network exists).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping

import torch
from torch import nn

from fromscratch.data.pretrained import GPT2_124M, MINILM, fetch_online
from fromscratch.data.registry import fetch
from fromscratch.interop.hf_llama import LLAMA_NAMES, hf_llama_state, llama_config_from_hf, llama_table
from fromscratch.interop.pytorch import Table, bert_layer_table, prefixed
from fromscratch.models.bert import BertConfig, BertEncoder
from fromscratch.models.gpt2 import GPT2, GPT2Config
from fromscratch.models.llama import Llama

# their keys that hold no weight of ours: BERT's pooler and position-id buffer, GPT-2's causal-mask
# buffers and its lm_head (the same tensor as wte)
BERT_IGNORED = r"^(pooler\..*|embeddings\.position_ids)$"
GPT2_IGNORED = r"^(h\.\d+\.attn\.(masked_)?bias|lm_head\.weight)$"
GPT2_TRANSPOSED = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


class StateDictMismatch(ValueError):
    """A state dict does not fit the model; the message lists the keys that differ."""


def _pairs(ours: str, theirs: str) -> Table:
    return [(f"{ours}.{p}", f"{theirs}.{p}") for p in ("weight", "bias")]


def bert_table(depth: int) -> Table:
    """:class:`BertEncoder` <-> ``BertModel`` (keys without a ``bert.`` prefix)."""
    return [
        ("token_embedding.weight", "embeddings.word_embeddings.weight"),
        ("position_embedding.weight", "embeddings.position_embeddings.weight"),
        ("segment_embedding.weight", "embeddings.token_type_embeddings.weight"),
        *_pairs("embedding_norm", "embeddings.LayerNorm"),
        *(
            row
            for i in range(depth)
            for row in prefixed(bert_layer_table(), f"blocks.{i}.", f"encoder.layer.{i}.")
        ),
    ]


def gpt2_table(depth: int) -> Table:
    """:class:`GPT2` <-> ``GPT2LMHeadModel`` (keys without a ``transformer.`` prefix)."""
    block = [
        *_pairs("norm1", "ln_1"),
        (
            (("attention.to_queries.weight", "attention.to_keys.weight", "attention.to_values.weight")),
            "attn.c_attn.weight",
        ),
        (
            (("attention.to_queries.bias", "attention.to_keys.bias", "attention.to_values.bias")),
            "attn.c_attn.bias",
        ),
        *_pairs("attention.unify_heads", "attn.c_proj"),
        *_pairs("norm2", "ln_2"),
        *_pairs("ff.net.0", "mlp.c_fc"),
        *_pairs("ff.net.3", "mlp.c_proj"),
    ]
    return [
        ("token_embedding.weight", "wte.weight"),
        ("position_embedding.weight", "wpe.weight"),
        *(row for i in range(depth) for row in prefixed(block, f"blocks.{i}.", f"h.{i}.")),
        *_pairs("final_norm", "ln_f"),
    ]


def load_state(
    model: nn.Module,
    state: Mapping[str, torch.Tensor],
    table: Table,
    *,
    transposed: Collection[str] = (),
    ignored: str = r"^$",
    strip: str = "",
) -> nn.Module:
    """Load their ``state`` into ``model`` along ``table`` and return ``model``.

    ``strip``: a prefix removed from their keys first (``"bert."``, ``"transformer."``); keys matching
    the regex ``ignored`` are skipped; keys ending in one of ``transposed`` are stored transposed.
    Raises :class:`StateDictMismatch` listing every missing, unexpected and wrongly shaped key.
    """
    theirs = {k.removeprefix(strip): v for k, v in state.items()}
    ours = model.state_dict()
    tied = {"to_logits.weight", "mlm.to_logits.weight"} & set(ours)  # the same tensor as the token embedding
    converted: dict[str, torch.Tensor] = {}
    used, shapes, misshapen = set(), [], set()
    for our_keys, their_key in table:
        if their_key not in theirs:
            continue
        used.add(their_key)
        tensor = theirs[their_key]
        if their_key.endswith(tuple(transposed)):
            tensor = tensor.t()
        names = (our_keys,) if isinstance(our_keys, str) else tuple(our_keys or ())
        expected = [tuple(ours[n].shape) if n in ours else None for n in names]
        if None in expected:
            continue  # ours has no such key: reported as unexpected below
        if tensor.shape[0] != sum(s[0] for s in expected) or any(
            tuple(tensor.shape[1:]) != s[1:] for s in expected
        ):
            shapes.append(f"{their_key} {tuple(theirs[their_key].shape)} -> {', '.join(names)} {expected}")
            misshapen.update(names)  # reported as wrongly shaped, not again as missing
            continue
        for name, part in zip(names, tensor.split([s[0] for s in expected]), strict=True):
            converted[name] = part
    missing = sorted(set(ours) - set(converted) - tied - misshapen)
    unexpected = sorted(k for k in theirs if k not in used and not re.match(ignored, k))
    unexpected += sorted(f"{t} (ours has no {o})" for o, t in table if t in theirs and _absent(o, ours))
    if missing or unexpected or shapes:
        raise StateDictMismatch(
            f"The weights do not fit this {type(model).__name__} ({type(model).__name__}.config = "
            f"{getattr(model, 'config', '?')}).\n  missing ({len(missing)}): {missing}\n  unexpected "
            f"({len(unexpected)}): {unexpected}\n  wrong shape ({len(shapes)}): {shapes}\n"
            f"Build the model with the config the weights were trained with."
        )
    model.load_state_dict(converted, strict=False)
    return model


def _absent(our_keys, ours: Mapping) -> bool:
    names = (our_keys,) if isinstance(our_keys, str) else tuple(our_keys or ())
    return any(n not in ours for n in names)


# --- from Hugging Face's classes -----------------------------------------------------------------
def bert_config_from_hf(config) -> BertConfig:
    """Our :class:`BertConfig` from a ``transformers.BertConfig`` (or its JSON as a dict)."""
    get = config.get if isinstance(config, dict) else lambda k: getattr(config, k)
    emb, hidden = get("hidden_size"), get("intermediate_size")
    if hidden % emb or get("hidden_act") != "gelu":
        raise ValueError(
            f"Our BERT has an exact-GELU feed-forward of width k * e; got {hidden} and {get('hidden_act')}."
        )
    return BertConfig(
        vocab_size=get("vocab_size"),
        emb=emb,
        heads=get("num_attention_heads"),
        depth=get("num_hidden_layers"),
        ff_mult=hidden // emb,
        context=get("max_position_embeddings"),
        segments=get("type_vocab_size"),
        dropout=0.0,
        norm_eps=get("layer_norm_eps"),
    )


def gpt2_config_from_hf(config) -> GPT2Config:
    """Our :class:`GPT2Config` from a ``transformers.GPT2Config``."""
    inner = config.n_inner or 4 * config.n_embd
    if inner % config.n_embd or config.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ValueError(
            f"Our GPT-2 has a tanh-GELU feed-forward of width k * e; "
            f"got {inner}, {config.activation_function}."
        )
    return GPT2Config(
        vocab_size=config.vocab_size,
        context=config.n_positions,
        emb=config.n_embd,
        heads=config.n_head,
        depth=config.n_layer,
        ff_mult=inner // config.n_embd,
        dropout=0.0,
        norm_eps=config.layer_norm_epsilon,
    )


def from_hf(hf_model: nn.Module) -> nn.Module:
    """Our model holding the weights of a ``transformers`` model: ``BertModel`` -> :class:`BertEncoder`,
    ``GPT2LMHeadModel`` (or ``GPT2Model``) -> :class:`GPT2`, ``LlamaForCausalLM`` -> :class:`Llama` (any
    GQA ratio, ``rope_theta``, tied or untied output). Built with dropout 0, in eval mode."""
    name = type(hf_model).__name__
    state = hf_model.state_dict()
    if name in ("BertModel", "BertForMaskedLM", "BertForSequenceClassification"):
        ours = BertEncoder(bert_config_from_hf(hf_model.config))
        state = {
            k: v for k, v in state.items() if not k.startswith("cls.") and not k.startswith("classifier.")
        }
        load_state(ours, state, bert_table(ours.config.depth), ignored=BERT_IGNORED, strip="bert.")
    elif name in ("GPT2LMHeadModel", "GPT2Model"):
        ours = GPT2(gpt2_config_from_hf(hf_model.config))
        load_state(
            ours,
            state,
            gpt2_table(ours.config.depth),
            transposed=GPT2_TRANSPOSED,
            ignored=GPT2_IGNORED,
            strip="transformer.",
        )
    elif name in LLAMA_NAMES:
        ours = Llama(llama_config_from_hf(hf_model.config))
        tied = r"^lm_head\.weight$" if ours.config.tied else r"^$"  # tied: the same tensor as embed_tokens
        state = hf_llama_state(state, ours.config)  # RoPE: their halves -> our interleaved pairs
        load_state(ours, state, llama_table(ours.config), ignored=tied, strip="model.")
    else:
        raise ValueError(
            f"from_hf knows BertModel, GPT2LMHeadModel (and GPT2Model) and LlamaForCausalLM, got {name}."
        )
    return ours.eval()


# --- real pretrained weights ---------------------------------------------------------------------
def load_bert(name: str = "all-MiniLM-L6-v2"):
    """``encoder, tokenizer``: our :class:`BertEncoder` with the real weights of ``name`` (in eval mode)
    and its WordPiece tokenizer (a ``tokenizers.Tokenizer``, adding ``[CLS]``/``[SEP]``, truncating at 128
    tokens as the file says, padding a batch to its longest text), from the registered files."""
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    if name != "all-MiniLM-L6-v2":
        raise ValueError(
            f"Only 'all-MiniLM-L6-v2' is registered (see fromscratch.data.pretrained), got {name!r}."
        )
    config = bert_config_from_hf(json.loads(fetch(MINILM["config.json"]).read_text()))
    encoder = BertEncoder(config)
    state = load_file(fetch(MINILM["model.safetensors"]))
    load_state(encoder, state, bert_table(config.depth), ignored=BERT_IGNORED, strip="bert.")
    tokenizer = Tokenizer.from_file(str(fetch(MINILM["tokenizer.json"])))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad a batch to its longest text, not to 128
    return encoder.eval(), tokenizer


def load_gpt2(name: str = "gpt2") -> GPT2:
    """GPT-2 124M with OpenAI's weights, in eval mode. Needs the 548 MB file: downloaded (and checked
    against its sha256) where a network exists; otherwise a ``DataError`` says so at once."""
    from safetensors.torch import load_file

    if name != "gpt2":
        raise ValueError(f"Only 'gpt2' (124M) is registered, got {name!r}.")
    model = GPT2(GPT2Config(dropout=0.0))
    state = load_file(fetch_online(GPT2_124M))
    load_state(
        model,
        state,
        gpt2_table(model.config.depth),
        transposed=GPT2_TRANSPOSED,
        ignored=GPT2_IGNORED,
        strip="transformer.",
    )
    return model.eval()


__all__ = [
    "StateDictMismatch",
    "bert_config_from_hf",
    "bert_table",
    "from_hf",
    "gpt2_config_from_hf",
    "gpt2_table",
    "load_bert",
    "load_gpt2",
    "load_state",
]
