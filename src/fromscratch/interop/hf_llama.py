"""Hugging Face's ``LlamaForCausalLM`` weights in our :class:`~fromscratch.models.Llama` (chapter 14).

The names map one to one (``model.layers.i.self_attn.q_proj`` -> ``blocks.i.attention.to_queries``,
``mlp.gate_proj`` -> ``ff.gate``, ``input_layernorm`` -> ``norm1`` ...), with one twist: **RoPE's
coordinate order**. Meta's original code (and llama2.c, and our :func:`~fromscratch.attention.rotate`)
rotates interleaved pairs ``(2m, 2m+1)`` of each head; Hugging Face's rotates the two halves
``(m, m + s/2)``, and its conversion script reorders the query and key rows of every head to match.
A dot product does not care in which order a head's coordinates are listed, as long as queries and
keys use the same order, so undoing that reordering (:func:`pairs_from_halves`) gives equal logits.

:func:`llama_config_from_hf` reads a ``transformers.LlamaConfig`` (``rope_theta`` from
``rope_parameters`` in transformers 5, from the config itself in 4.x); :func:`llama_table` lists the
keys for :func:`fromscratch.interop.huggingface.load_state`, which ``from_hf`` calls.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from fromscratch.interop.pytorch import Table
from fromscratch.models.llama import LlamaConfig

LLAMA_NAMES = ("LlamaForCausalLM", "LlamaModel")  # the Hugging Face classes from_hf takes


def _get(config, key: str, default=None):
    return config.get(key, default) if isinstance(config, dict) else getattr(config, key, default)


def llama_config_from_hf(config) -> LlamaConfig:
    """Our :class:`LlamaConfig` from a ``transformers.LlamaConfig`` (or its JSON as a dict).

    Raises a ValueError for what our Llama does not have: another activation than SiLU, a head width
    other than ``hidden_size / num_attention_heads``, RoPE scaling, or biases in only some layers."""
    emb, heads = _get(config, "hidden_size"), _get(config, "num_attention_heads")
    head_dim = _get(config, "head_dim") or emb // heads
    rope = _get(config, "rope_parameters") or {}
    theta = rope.get("rope_theta", _get(config, "rope_theta", 10_000.0))
    rope_scaling = _get(config, "rope_scaling") or {}  # transformers 4.x
    scaling = rope.get("rope_type", "default") if rope else rope_scaling.get("rope_type")
    activation = _get(config, "hidden_act")
    attention_bias = bool(_get(config, "attention_bias", False))
    mlp_bias = bool(_get(config, "mlp_bias", False))
    problems = []
    if activation != "silu":
        problems.append(f"hidden_act={activation!r} (ours: 'silu')")
    if head_dim * heads != emb:
        problems.append(f"head_dim={head_dim} (ours: hidden_size / heads = {emb / heads:g})")
    if scaling not in (None, "default"):
        problems.append(f"RoPE scaling {scaling!r} (ours: none)")
    if attention_bias != mlp_bias:
        problems.append(f"attention_bias={attention_bias} but mlp_bias={mlp_bias} (ours: one switch)")
    if problems:
        raise ValueError(f"Our Llama cannot hold this model: {'; '.join(problems)}.")
    return LlamaConfig(
        vocab_size=_get(config, "vocab_size"),
        context=_get(config, "max_position_embeddings"),
        emb=emb,
        heads=heads,
        kv_heads=_get(config, "num_key_value_heads") or heads,
        depth=_get(config, "num_hidden_layers"),
        hidden=_get(config, "intermediate_size"),
        rope_theta=float(theta),
        norm_eps=_get(config, "rms_norm_eps"),
        tied=bool(_get(config, "tie_word_embeddings", False)),
        bias=attention_bias,
    )


def llama_table(config: LlamaConfig) -> Table:
    """:class:`~fromscratch.models.Llama` <-> ``LlamaForCausalLM`` (their keys without ``model.``)."""
    names = [
        ("norm1", "input_layernorm"),
        ("attention.to_queries", "self_attn.q_proj"),
        ("attention.to_keys", "self_attn.k_proj"),
        ("attention.to_values", "self_attn.v_proj"),
        ("attention.unify_heads", "self_attn.o_proj"),
        ("norm2", "post_attention_layernorm"),
        ("ff.gate", "mlp.gate_proj"),
        ("ff.up", "mlp.up_proj"),
        ("ff.down", "mlp.down_proj"),
    ]
    kinds = ("weight", "bias") if config.bias else ("weight",)
    block = [
        (f"{ours}.{k}", f"{theirs}.{k}")
        for ours, theirs in names
        for k in kinds
        if k == "weight" or "norm" not in ours
    ]
    return [
        ("token_embedding.weight", "embed_tokens.weight"),
        *(
            (f"blocks.{i}.{ours}", f"layers.{i}.{theirs}")
            for i in range(config.depth)
            for ours, theirs in block
        ),
        ("final_norm.weight", "norm.weight"),
        *([] if config.tied else [("to_logits.weight", "lm_head.weight")]),
    ]


def pairs_from_halves(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Reorder each head's rows from Hugging Face's RoPE layout (halves) to ours (interleaved pairs).

    x: ``(heads·s, ...)`` (a projection's weight ``(heads·s, e)`` or bias ``(heads·s,)``). Row ``m``
    of a head's first half and row ``m`` of its second half (a rotated pair for Hugging Face) become
    rows ``2m`` and ``2m + 1``. Returns a tensor of the same shape."""
    s = x.size(0) // heads
    return x.unflatten(0, (heads, 2, s // 2)).transpose(1, 2).reshape(x.shape)  # (heads·s, ...)


def hf_llama_state(state: Mapping[str, torch.Tensor], config: LlamaConfig) -> dict[str, torch.Tensor]:
    """Their state dict with every query and key projection reordered by :func:`pairs_from_halves`."""
    out = {}
    for key, value in state.items():
        if ".self_attn.q_proj." in key:
            value = pairs_from_halves(value, config.heads)
        elif ".self_attn.k_proj." in key:
            value = pairs_from_halves(value, config.kv_heads)
        out[key] = value
    return out


__all__ = ["LLAMA_NAMES", "hf_llama_state", "llama_config_from_hf", "llama_table", "pairs_from_halves"]
