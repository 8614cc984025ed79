"""What a training step costs: parameters counted two ways, and FLOPs per token (chapter 19).

**Parameters.** Kaplan et al. (2020) count ``N`` without the embeddings; Hoffmann et al. (2022,
Chinchilla) count every parameter. :func:`parameter_count` gives both: the ``embedding`` part is every
matrix indexed by the vocabulary or by position (the token embedding, learned positions, and an output
layer not tied to the token embedding), the rest (the blocks and the final norm) is ``non_embedding``.
At small ``N`` the difference is large: a 1M-parameter model over a 49k-token vocabulary is mostly
embedding, and the two counts give different exponents for the same runs.

**FLOPs per token of training.** A matrix product ``(m, k) @ (k, n)`` costs ``2 m k n`` FLOPs (a multiply
and an add per term). A token passing through a linear layer with a ``(k, n)`` weight costs ``2 k n``
forward; the backward computes two such products (the gradient of the input and of the weight), so
training costs ``3 ×`` forward, ``6`` FLOPs per weight per token: the ``6N`` rule. Here ``N`` is exactly
the weights of the linear layers, the output layer included (``matmul_weights``); the embedding lookups
cost no FLOPs. Attention adds two products per layer that have no weights: the scores ``q kᵀ`` and the
weighted sum ``a v``, each ``2 · t · e`` FLOPs per token forward for ``t`` keys (``e = h · s``, every
head), so per token of training::

    C = 6 · matmul_weights + 12 · depth · t · e          (forward 2N + 4·depth·t·e, times 3)

Kaplan et al.'s Table 1 writes the attention term as ``2 · n_layer · n_ctx · d_attn`` forward (the scores
only); Chinchilla's Appendix F counts both products, as here. Both count the full ``t × t`` matrix,
although a causal mask leaves half of it unused (a fused causal kernel skips most of that half); so does
``torch.utils.flop_counter.FlopCounterMode``. What the count leaves out: softmax, norms, activations,
RoPE, residual sums, biases and the loss: a few FLOPs per activation, not per weight
(``tests/test_flops.py`` checks the rest against PyTorch's counter).

Shape legend: ``t`` the training sequence length, ``e`` embedding, ``h`` heads, ``s = e // h``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from fromscratch.models.generator import Generator, GeneratorConfig
from fromscratch.models.llama import Llama, LlamaConfig

Decoder = Llama | Generator | LlamaConfig | GeneratorConfig


@dataclass(frozen=True)
class ParameterCount:
    """A decoder's parameters, counted as Kaplan and as Chinchilla do."""

    total: int  # every parameter, a tied matrix once (Chinchilla's N)
    embedding: int  # token and position embeddings, and an untied output layer (weight and bias)
    matmul_weights: int  # weights of every linear layer, the output layer included: the 6N of FLOPs

    @property
    def non_embedding(self) -> int:
        """Kaplan's N: the blocks and the final norm."""
        return self.total - self.embedding


@dataclass(frozen=True)
class FlopsPerToken:
    """Training FLOPs (forward and backward) per token of a sequence of length ``t``."""

    weights: int  # 6 · matmul_weights: the linear layers, forward and backward
    attention: int  # 12 · depth · t · e: the scores q kᵀ and the weighted sum a v, forward and backward

    @property
    def total(self) -> int:
        """``weights + attention``: the step's matrix products per token."""
        return self.weights + self.attention


def decoder(model: Decoder) -> Llama | Generator:
    """``model`` itself, or the model a config describes, built on the ``meta`` device (shapes only: no
    memory, no time), so that sizes can be counted before anything is trained."""
    if isinstance(model, (Llama, Generator)):
        return model
    if isinstance(model, (LlamaConfig, GeneratorConfig)):
        with torch.device("meta"):
            return Llama(model) if isinstance(model, LlamaConfig) else Generator(model)
    kind = type(model).__name__
    raise ValueError(
        f"parameter_count and flops_per_token read a Llama or a Generator (or their configs); got {kind}. "
        "For another model, count its linear layers' weights and its attention layers the same way."
    )


def parameter_count(model: Decoder) -> ParameterCount:
    """The parameters of a :class:`~fromscratch.models.llama.Llama` or a
    :class:`~fromscratch.models.generator.Generator` (or of the model a config describes)."""
    model = decoder(model)
    unique = {id(p): p for p in model.parameters()}  # a tied matrix once
    vocabulary = {id(m.weight): m.weight for m in model.modules() if isinstance(m, nn.Embedding)}
    head = model.to_logits
    if id(head.weight) not in vocabulary:  # untied: the output layer is one more vocabulary matrix
        vocabulary |= {id(p): p for p in head.parameters()}
    linear = {id(m.weight): m.weight for m in model.modules() if isinstance(m, nn.Linear)}
    return ParameterCount(
        total=sum(p.numel() for p in unique.values()),
        embedding=sum(p.numel() for p in vocabulary.values()),
        matmul_weights=sum(w.numel() for w in linear.values()),
    )


def flops_per_token(model: Decoder, t: int | None = None) -> FlopsPerToken:
    """Training FLOPs per token for sequences of ``t`` tokens (default: the model's ``context``):
    ``6 · matmul_weights`` plus ``12 · depth · t · e`` (the module docstring says why)."""
    model = decoder(model)
    config = model.config
    t = config.context if t is None else t
    if not 0 < t <= config.context:
        raise ValueError(f"t must be a sequence length in 1..context={config.context}; got {t}.")
    weights = 6 * parameter_count(model).matmul_weights
    return FlopsPerToken(weights=weights, attention=12 * config.depth * t * config.emb)


def training_flops(model: Decoder, tokens: int, t: int | None = None) -> int:
    """FLOPs of training on ``tokens`` tokens in sequences of ``t``: :func:`flops_per_token` × ``tokens``
    (the ``C`` of a compute budget, where ``C ≈ 6 N D`` is its first term)."""
    return flops_per_token(model, t).total * tokens


__all__ = [
    "FlopsPerToken",
    "ParameterCount",
    "flops_per_token",
    "parameter_count",
    "training_flops",
]
