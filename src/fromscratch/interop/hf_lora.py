"""Our LoRA beside ``peft``'s, with the same ``A`` and ``B`` (chapter 15).

``peft`` (Hugging Face's parameter-efficient fine-tuning library) wraps a ``transformers`` model's
linear layers in ``lora.Linear`` modules holding ``lora_A`` (an ``nn.Linear`` from ``in`` to ``r``,
weight ``(r, in)``: our ``A``) and ``lora_B`` (``r`` to ``out``, weight ``(out, r)``: our ``B``) and
computes ``base(x) + lora_B(lora_A(x)) · α/r``, our :class:`~fromscratch.blocks.lora.LoRALinear`.

:func:`peft_twin` builds that twin of one of our LoRA Llamas: ``transformers``' ``LlamaForCausalLM``
with our weights (Hugging Face's names; the query and key rows put back in the **halves** order of
its RoPE, :func:`halves_from_pairs`, the inverse of :func:`~fromscratch.interop.hf_llama.pairs_from_halves`),
``peft`` LoRA on the same projections, and our ``A`` and ``B`` copied in (``B``'s rows reordered for
queries and keys like the weight's; ``A`` reads the input, whose order is the same). :data:`HF_NAMES`
maps our projection names to theirs.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import torch
from torch import nn

from fromscratch.blocks.lora import LoRALinear, lora_layers
from fromscratch.interop.hf_llama import llama_table, pairs_from_halves
from fromscratch.models.llama import Llama

HF_NAMES = {  # our layer name -> Hugging Face's Llama (peft's target_modules)
    "to_queries": "q_proj",
    "to_keys": "k_proj",
    "to_values": "v_proj",
    "unify_heads": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}


def halves_from_pairs(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Reorder each head's rows from our RoPE layout (interleaved pairs) to Hugging Face's (halves).

    x: ``(heads·s, ...)``; rows ``2m`` and ``2m + 1`` of a head become rows ``m`` and ``m + s/2``.
    The inverse of :func:`~fromscratch.interop.hf_llama.pairs_from_halves`; same shape."""
    s = x.size(0) // heads
    return x.unflatten(0, (heads, s // 2, 2)).transpose(1, 2).reshape(x.shape)  # (heads·s, ...)


def hf_llama_config(model: Llama):
    """``transformers.LlamaConfig`` of our Llama (the inverse of ``llama_config_from_hf``)."""
    import transformers

    c = model.config
    if c.norm_kind != "rms" or c.feedforward != "swiglu" or c.positions != "rope" or c.bias:
        raise ValueError("Only a Llama proper (RMSNorm, SwiGLU, RoPE, no biases) has a transformers twin.")
    return transformers.LlamaConfig(
        vocab_size=c.vocab_size,
        hidden_size=c.emb,
        intermediate_size=c.hidden,
        num_hidden_layers=c.depth,
        num_attention_heads=c.heads,
        num_key_value_heads=c.kv_heads,
        max_position_embeddings=c.context,
        rope_theta=c.rope_theta,
        rms_norm_eps=c.norm_eps,
        tie_word_embeddings=c.tied,
        attention_bias=False,
        mlp_bias=False,
    )


def _hf_rows(name: str, tensor: torch.Tensor, model: Llama) -> torch.Tensor:
    """``tensor`` of our layer ``name`` with its output rows in Hugging Face's order."""
    if name.endswith("to_queries"):
        return halves_from_pairs(tensor, model.config.heads)
    if name.endswith("to_keys"):
        return halves_from_pairs(tensor, model.config.kv_heads)
    return tensor


def _base_state(model: Llama) -> dict[str, torch.Tensor]:
    """Our state dict without LoRA: each wrapped layer's frozen ``base`` under the layer's own name."""
    state = {}
    for key, value in model.state_dict().items():
        if key.endswith((".A", ".B")):
            continue
        state[key.replace(".base.", ".")] = value
    return state


def peft_twin(model: Llama, *, targets: Sequence[str]) -> nn.Module:
    """``peft``'s LoRA on ``transformers``' Llama, holding our LoRA Llama's weights and ``A``, ``B``.

    ``targets``: our layer names, as given to :func:`~fromscratch.blocks.lora.add_lora`. Returns the
    ``PeftModel`` in eval mode; ``twin(ids).logits`` ``(b, t, V)`` equals ``model(ids)``."""
    import peft
    import transformers

    layers = lora_layers(model)
    if not layers:
        raise ValueError("The model has no LoRA layers; call add_lora(model, targets=...) first.")
    ranks = {(m.rank, m.alpha) for m in layers.values()}
    if len(ranks) != 1:
        raise ValueError(f"peft_twin needs one rank and one alpha for every layer, got {sorted(ranks)}.")
    (rank, alpha), c = ranks.pop(), model.config
    hf = transformers.LlamaForCausalLM(hf_llama_config(model)).eval()
    state = _base_state(model)
    theirs = {}
    for ours_key, their_key in llama_table(c):
        value = state[ours_key]
        if ".self_attn.q_proj." in their_key or ".self_attn.k_proj." in their_key:
            heads = c.heads if ".q_proj." in their_key else c.kv_heads
            value = halves_from_pairs(value, heads)
            if not torch.equal(pairs_from_halves(value, heads), state[ours_key]):  # the orders round-trip
                raise ValueError(
                    f"{ours_key}: halves_from_pairs and pairs_from_halves do not invert each other."
                )
        theirs[f"model.{their_key}"] = value
    missing, unexpected = hf.load_state_dict(theirs, strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ValueError(
            f"transformers' Llama did not take our weights: missing {missing}, unexpected {unexpected}."
        )
    config = peft.LoraConfig(
        r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=[HF_NAMES[t] for t in targets]
    )
    with warnings.catch_warnings():  # transformers' deprecation notices, raised inside peft
        warnings.simplefilter("ignore", FutureWarning)
        twin = peft.get_peft_model(hf, config)
    modules = dict(twin.named_modules())
    for name, layer in layers.items():
        block, kind = name.split(".")[1], name.split(".")[-1]
        inner = "self_attn" if kind in ("to_queries", "to_keys", "to_values", "unify_heads") else "mlp"
        theirs_layer = modules[f"base_model.model.model.layers.{block}.{inner}.{HF_NAMES[kind]}"]
        with torch.no_grad():
            theirs_layer.lora_A["default"].weight.copy_(layer.A)
            theirs_layer.lora_B["default"].weight.copy_(_hf_rows(name, layer.B, model))
    return twin.to(next(model.parameters()).device).eval()


def peft_layer(layer: LoRALinear) -> nn.Module:
    """``peft``'s ``lora.Linear`` around a copy of ``layer.base``, holding the same ``A`` and ``B``
    (``peft.inject_adapter_in_model`` on a module whose only layer it is)."""
    import peft

    holder = nn.Module()
    holder.layer = copy.deepcopy(layer.base)
    config = peft.LoraConfig(r=layer.rank, lora_alpha=layer.alpha, lora_dropout=0.0, target_modules=["layer"])
    theirs = peft.inject_adapter_in_model(config, holder).layer
    with torch.no_grad():
        theirs.lora_A["default"].weight.copy_(layer.A)
        theirs.lora_B["default"].weight.copy_(layer.B)
    weight = layer.base.weight
    return theirs.to(device=weight.device, dtype=weight.dtype).eval()


__all__ = ["HF_NAMES", "halves_from_pairs", "hf_llama_config", "peft_layer", "peft_twin"]
