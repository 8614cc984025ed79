"""Chapter 18's measurements on any decoder of the course: head scores, in-context loss, ablations, the logit
lens, activation patching, and a sparse autoencoder's features shown by their tokens.

A sequence ``tokens (b, skip + 2T)`` holds ``skip`` leading tokens (a BOS, or none), then ``T`` random
tokens, then the same ``T`` again. Shape legend: ``b`` batch, ``t`` length, ``L`` layers, ``h`` heads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from fromscratch.chapters.ch18_interpretability.toy import position_losses
from fromscratch.interp import (
    ablate_heads,
    block_names,
    induction_score,
    patch,
    patch_heads,
    previous_token_score,
    record,
    record_heads,
    unembed,
)

__all__ = [
    "InContext",
    "ablated",
    "attention_names",
    "feature_rows",
    "head_scores",
    "in_context",
    "lens_table",
    "logit_difference",
    "patch_heads_sweep",
    "patch_residual_sweep",
    "top_activations",
    "top_cells",
    "top_heads",
    "top_scored",
    "two_feature_category",
]


def _logits(model: nn.Module, tokens: Tensor, **keywords) -> Tensor:
    with torch.no_grad():
        return model(tokens, **keywords)  # (b, t, V)


def head_scores(model: nn.Module, tokens: Tensor, period: int, skip: int = 0) -> tuple[Tensor, Tensor]:
    """Every head's previous-token and induction score on ``tokens``: two ``(L, h)`` tensors."""
    weights: list[Tensor] = []
    _logits(model, tokens, attention=weights)
    kept = [w[:, :, skip:, skip:] for w in weights]  # (b, h, 2T, 2T): the leading tokens cut off
    previous = torch.stack([previous_token_score(w) for w in kept])  # (L, h)
    induction = torch.stack([induction_score(w, period) for w in kept])  # (L, h)
    return previous, induction


@dataclass(frozen=True)
class InContext:
    """Mean next-token loss (nats) on the first pass through the random tokens and on the repeat."""

    first: float
    repeat: float

    @property
    def gain(self) -> float:
        """What the context bought: the loss it took off on the repeat."""
        return self.first - self.repeat


def in_context(model: nn.Module, tokens: Tensor, period: int, skip: int = 0) -> InContext:
    """The loss on the first ``period`` tokens (from the second on) against the repeat (from its second
    token on: its first follows the end of the first pass, which no head can look up)."""
    losses = position_losses(_logits(model, tokens), tokens)  # (t - 1,): entry i predicts token i + 1
    first = losses[skip : skip + period - 1]  # targets skip + 1 .. skip + T - 1
    repeat = losses[skip + period : skip + 2 * period - 1]  # targets skip + T + 1 .. skip + 2T - 1
    return InContext(first.mean().item(), repeat.mean().item())


def top_heads(scores: Tensor, n: int) -> list[tuple[int, int]]:
    """The ``n`` highest of ``scores (L, h)`` as ``(layer, head)``, highest first."""
    order = scores.flatten().argsort(descending=True)[:n]
    h = scores.size(1)
    return [(int(i) // h, int(i) % h) for i in order]


def top_scored(scores: Tensor, n: int) -> list[tuple[int, int, float]]:
    """The ``n`` highest of ``scores (L, h)`` as ``(layer, head, score)``, highest first."""
    return [(layer, head, float(scores[layer, head])) for layer, head in top_heads(scores, n)]


def top_cells(restored: Tensor, labels: Sequence[str], n: int) -> list[tuple[int, str, float]]:
    """The ``n`` highest cells of a residual patching map ``(L, t)`` before the last position, as
    ``(block, token, share)``: where the clean run's information sits on its way to the answer."""
    t = restored.size(1)
    before = restored[:, :-1].flatten()  # the last position restores everything at the last block
    return [
        (int(i) // (t - 1), labels[int(i) % (t - 1)], float(before[i]))
        for i in before.argsort(descending=True)[:n]
    ]


def attention_names(model: nn.Module) -> list[str]:
    return [f"{name}.attention" for name in block_names(model)]


def ablated(model: nn.Module, heads: Sequence[tuple[int, int]]):
    """A context manager that zero-ablates ``heads`` (``(layer, head)`` pairs)."""
    names = attention_names(model)
    listed: dict[str, list[int]] = {}
    for layer, head in heads:
        listed.setdefault(names[layer], []).append(head)
    return ablate_heads(model, listed)


def lens_table(
    model: nn.Module, tokens: Tensor, decode: Callable[[list[int]], str], answer: int
) -> list[tuple[int, str, float]]:
    """The logit lens at the last position of ``tokens (1, t)``: per block, its top next token and the
    probability it gives the token ``answer`` (the model's own final choice, say)."""
    names = block_names(model)
    with torch.no_grad(), record(model, names) as acts:
        model(tokens)
        rows = []
        for i, name in enumerate(names):
            probabilities = unembed(model, acts[name][0][:, -1:]).softmax(dim=-1)[0, 0]  # (V,)
            rows.append((i, decode([int(probabilities.argmax())]), float(probabilities[answer])))
    return rows


def _difference(logits: Tensor, right: int, wrong: int) -> Tensor:
    return logits[:, -1, right] - logits[:, -1, wrong]  # (b,)


def logit_difference(model: nn.Module, tokens: Tensor, right: int, wrong: int) -> float:
    """``logit[right] - logit[wrong]`` at the last position of ``tokens (1, t)``."""
    return float(_difference(_logits(model, tokens), right, wrong))


def patch_residual_sweep(
    model: nn.Module, clean: Tensor, corrupted: Tensor, right: int, wrong: int
) -> Tensor:
    """Activation patching of the residual stream: for every block ``l`` and position ``p``, the corrupted
    run with block ``l``'s output at ``p`` taken from the clean run. Returns ``(L, t)``: the share of the
    logit difference ``logit[right] - logit[wrong]`` (last position) restored, 0 = corrupted, 1 = clean.
    ``clean`` and ``corrupted``: ``(1, t)``, the same length. One batched forward per block (row ``p``
    patches position ``p``)."""
    if clean.shape != corrupted.shape or clean.size(0) != 1:
        raise ValueError(
            f"clean and corrupted must both be (1, t); got {tuple(clean.shape)}, {tuple(corrupted.shape)}."
        )
    names = block_names(model)
    t = clean.size(1)
    with torch.no_grad(), record(model, names) as acts:
        low = float(_difference(model(corrupted), right, wrong))
        high = float(_difference(model(clean), right, wrong))
    clean_acts = {name: acts[name][1] for name in names}  # (1, t, e): the clean run's, recorded second
    rows = torch.arange(t)
    restored = torch.zeros(len(names), t)
    for layer, name in enumerate(names):

        def put_clean(out: Tensor, name: str = name) -> Tensor:
            out = out.clone()
            out[rows, rows] = clean_acts[name][0, rows]  # (t, e): row p gets the clean position p
            return out

        with torch.no_grad(), patch(model, {name: put_clean}):
            patched = _difference(model(corrupted.expand(t, -1)), right, wrong)  # (t,)
        restored[layer] = (patched - low) / (high - low)
    return restored


def patch_heads_sweep(model: nn.Module, clean: Tensor, corrupted: Tensor, right: int, wrong: int) -> Tensor:
    """Activation patching of single heads, at every position: ``(L, h)``, the share of the logit
    difference restored when head ``(l, j)``'s output comes from the clean run. One batched forward per
    layer (row ``j`` patches head ``j``)."""
    names = attention_names(model)
    with torch.no_grad(), record_heads(model, names) as z:
        low = float(_difference(model(corrupted), right, wrong))
        high = float(_difference(model(clean), right, wrong))
    h = z[names[0]][1].size(2)
    heads = torch.arange(h)
    restored = torch.zeros(len(names), h)
    for layer, name in enumerate(names):
        clean_z = z[name][1]  # (1, t, h, s)

        def put_clean(zs: Tensor, clean_z: Tensor = clean_z) -> Tensor:
            zs = zs.clone()
            zs[heads, :, heads] = clean_z[0].transpose(0, 1)  # (h, t, s): row j gets head j
            return zs

        with torch.no_grad(), patch_heads(model, {name: put_clean}):
            patched = _difference(model(corrupted.expand(h, -1)), right, wrong)  # (h,)
        restored[layer] = (patched - low) / (high - low)
    return restored


def top_activations(codes: Tensor, latent: int, n: int) -> list[int]:
    """The positions of the ``n`` largest codes of ``latent`` in ``codes (N, latents)``, largest first."""
    return codes[:, latent].argsort(descending=True)[:n].tolist()


def two_feature_category(W: Tensor, threshold: float = 0.5) -> str:
    """What a toy model of two features in one dimension (``W (1, 2)``) stores: one of
    :data:`~.figures.CATEGORIES`, by which columns are longer than ``threshold``."""
    kept = (W.detach().norm(dim=0) > threshold).tolist()
    return {
        (True, True): "both, in superposition",
        (True, False): "only feature 1",
        (False, True): "only feature 2",
        (False, False): "neither",
    }[tuple(kept)]


def feature_rows(
    codes: Tensor,
    tokens: Tensor,
    decode: Callable[[list[int]], str],
    latents: Sequence[int],
    n: int,
    before: int = 4,
) -> list[list[str]]:
    """For each latent, its ``n`` top-activating tokens of ``tokens (N,)`` (the stream's positions in
    order) shown as ``…context [token]``, with ``before`` tokens of context: rows for ``viz.table``."""
    rows = []
    for latent in latents:
        shown = []
        for position in top_activations(codes, latent, n):
            context = decode(tokens[max(0, position - before) : position].tolist())
            shown.append(f"{context}[{decode([int(tokens[position])])}]")
        rows.append([str(latent), f"{float(codes[:, latent].max()):.2f}", " · ".join(shown)])
    return rows
