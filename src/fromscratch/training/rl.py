"""Reinforcement learning from verifiable rewards: advantages, the clipped policy loss, pass@k (chapter 17).

A policy ``π_θ`` samples ``n`` responses to each of ``g`` problems; a program scores each one (reward
``r``, e.g. 1 if the answer is right). The policy gradient (REINFORCE, Williams 1992) of ``E[r]`` is
``E[(r - b) ∇ log π_θ(y)]`` for any baseline ``b`` that does not depend on the sample itself. The
methods differ in the advantage ``A = r - b`` they give each sample, computed from its group:

- RLOO (Kool et al. 2019; Ahmadian et al. 2024): ``b`` = the mean of the *other* ``n - 1`` rewards of the
  group, so the estimate stays unbiased (:func:`rloo_advantages`);
- GRPO (Shao et al. 2024, DeepSeekMath): ``(r - group mean) / group std`` (:func:`group_advantages`);
  Dr. GRPO (Liu et al. 2025) drops the division, which re-weights problems by how spread their
  rewards are (``scale=False``).

:func:`clipped_policy_loss` is PPO's clipped surrogate (Schulman et al. 2017) with one advantage per
sample, as GRPO uses it, plus an optional KL penalty to a reference policy (the ``k3`` estimator of
Schulman's note "Approximating KL divergence", as GRPO and TRL write it). At ratio 1 its gradient is
REINFORCE's. :func:`pass_at_k` scores a model that may try ``k`` times (Chen et al. 2021).
Shapes: ``g`` problems (groups), ``n`` samples per problem, ``t`` response tokens.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch
from torch import Tensor

AGGREGATIONS = ("token_mean", "sequence_mean", "constant", "none")


def _pass_at_k_int(n: int, c: int, k: int) -> float:
    """:func:`pass_at_k` of plain integers, checked."""
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"pass_at_k: {name}={value!r} must be a whole number.")
    n, c, k = int(n), int(c), int(k)
    if n < 1 or c < 0 or k < 1:
        raise ValueError(f"pass_at_k(n={n}, c={c}, k={k}): needs n >= 1 samples, c >= 0 correct, k >= 1.")
    if c > n:
        raise ValueError(f"pass_at_k: c={c} correct samples out of n={n}: c must be at most n.")
    if k > n:
        raise ValueError(f"pass_at_k: k={k} > n={n}: draw at least k samples per problem to estimate pass@k.")
    if n - c < k:  # every set of k samples holds a correct one
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)  # int / int: correctly rounded


def pass_at_k(n, c, k):
    """The unbiased estimate of pass@k from ``n`` samples of which ``c`` are correct (Chen et al. 2021):
    the probability that a random set of ``k`` of the ``n`` holds at least one correct sample,
    ``1 - C(n - c, k) / C(n, k)`` (1 when ``n - c < k``), computed exactly from whole numbers.

    ``n``, ``c``, ``k`` are whole numbers, or arrays/Tensors of them (broadcast together, one estimate
    per element, returned as a float64 array or Tensor). A mean over problems is the benchmark's
    pass@k. Raises ``ValueError`` for ``k > n``, ``c > n``, negatives or non-integers.
    """
    if not any(isinstance(x, (Tensor, np.ndarray)) for x in (n, c, k)):
        return _pass_at_k_int(n, c, k)
    as_tensor = any(isinstance(x, Tensor) for x in (n, c, k))
    arrays = [x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x) for x in (n, c, k)]
    n_, c_, k_ = np.broadcast_arrays(*arrays)
    out = np.array(
        [_pass_at_k_int(*v) for v in zip(n_.flat, c_.flat, k_.flat, strict=True)], dtype=np.float64
    )
    out = out.reshape(n_.shape)
    return torch.from_numpy(out) if as_tensor else out


def _check_rewards(rewards: Tensor, name: str) -> Tensor:
    """``rewards`` checked to be ``(g, n)``, as floats."""
    if not isinstance(rewards, Tensor) or rewards.dim() != 2:
        shape = tuple(rewards.shape) if isinstance(rewards, Tensor) else type(rewards).__name__
        raise ValueError(f"{name}: rewards must be a Tensor (g, n), g problems by n samples; got {shape}.")
    return rewards.float() if not rewards.is_floating_point() else rewards


def group_advantages(rewards: Tensor, *, scale: bool = True, eps: float = 1e-4) -> Tensor:
    """GRPO's advantages: ``rewards`` ``(g, n)`` -> ``(r - group mean) / (group std + eps)`` ``(g, n)``, the
    std with Bessel's correction (``torch.std``, as TRL); ``scale=False`` gives ``r - group mean``
    (Dr. GRPO). A group whose rewards are all equal (one sample included) gets zeros, never NaN."""
    rewards = _check_rewards(rewards, "group_advantages")
    if eps < 0:
        raise ValueError(f"group_advantages: eps={eps} must be >= 0 (it keeps the division finite).")
    centred = rewards - rewards.mean(dim=1, keepdim=True)  # (g, n)
    flat = (rewards.amax(dim=1) == rewards.amin(dim=1)).unsqueeze(1)  # (g, 1): nothing to prefer
    if scale:
        std = rewards.std(dim=1, keepdim=True) if rewards.size(1) > 1 else torch.ones_like(centred[:, :1])
        centred = centred / (std + eps)  # (g, n)
    return centred.masked_fill(flat, 0.0)  # (g, n)


def rloo_advantages(rewards: Tensor) -> Tensor:
    """Leave-one-out advantages: ``rewards`` ``(g, n)`` -> ``r_i`` minus the mean of the group's other
    ``n - 1`` rewards ``(g, n)``, equal to ``n / (n - 1) · (r_i - group mean)``. Needs ``n >= 2``."""
    rewards = _check_rewards(rewards, "rloo_advantages")
    n = rewards.size(1)
    if n < 2:
        raise ValueError(f"rloo_advantages: n={n} sample per problem; leave-one-out needs n >= 2 samples.")
    others = (rewards.sum(dim=1, keepdim=True) - rewards) / (n - 1)  # (g, n)
    return rewards - others  # (g, n)


def kl_k3(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """Per-token estimate of ``KL(π || π_ref)`` from tokens sampled from ``π``: ``exp(d) - d - 1`` with
    ``d = log π_ref - log π`` (``k3``: unbiased, never negative); inputs' shape."""
    d = ref_logprobs - logprobs
    return torch.exp(d) - d - 1


def clipped_policy_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip: float = 0.2,
    ref_logprobs: Tensor | None = None,
    beta: float = 0.0,
    aggregate: Literal["token_mean", "sequence_mean", "constant", "none"] = "token_mean",
    max_tokens: int | None = None,
) -> Tensor:
    """PPO/GRPO's clipped surrogate, the loss to minimise.

    ``logprobs`` ``(g, n, t)``: the policy's log-probability of each sampled response token (with
    gradient); ``old_logprobs`` ``(g, n, t)``: the same under the policy that sampled them (constant);
    ``advantages`` ``(g, n)``: one per sample; ``mask`` bool ``(g, n, t)``, True at response tokens (the
    other positions are ignored, whatever they hold). With ``ratio = exp(logprobs - old_logprobs)``,
    each token's loss is ``-min(ratio · A, clip(ratio, 1 - clip, 1 + clip) · A)``, plus
    ``beta ·`` :func:`kl_k3` to ``ref_logprobs`` ``(g, n, t)`` when ``beta > 0``.

    ``aggregate``: ``"token_mean"`` the mean over all response tokens of the batch (TRL's ``bnpo``);
    ``"sequence_mean"`` each sample's mean over its tokens, then the mean over the ``g · n`` samples
    (GRPO); ``"constant"`` the sum over all tokens divided by ``g · n · max_tokens`` (Dr. GRPO; the
    generation budget ``max_tokens`` defaults to ``t``); ``"none"`` the per-token losses ``(g, n, t)``,
    zero outside the mask. Returns a scalar Tensor, or ``(g, n, t)`` for ``"none"``.
    """
    if logprobs.dim() != 3:
        raise ValueError(f"clipped_policy_loss: logprobs must be (g, n, t); got {tuple(logprobs.shape)}.")
    shape = tuple(logprobs.shape)
    named = {"old_logprobs": old_logprobs, "mask": mask}
    if ref_logprobs is not None:
        named["ref_logprobs"] = ref_logprobs
    for name, value in named.items():
        if tuple(value.shape) != shape:
            raise ValueError(f"clipped_policy_loss: {name} {tuple(value.shape)} must match logprobs {shape}.")
    if tuple(advantages.shape) != shape[:2]:
        raise ValueError(
            f"clipped_policy_loss: advantages {tuple(advantages.shape)} must be (g, n) = {shape[:2]}."
        )
    if mask.dtype != torch.bool:
        raise ValueError("clipped_policy_loss: mask must be bool (True at response tokens).")
    if not 0 < clip < 1:
        raise ValueError(f"clipped_policy_loss: clip={clip} must be in (0, 1) (PPO and GRPO use 0.2).")
    if beta < 0 or (beta > 0 and ref_logprobs is None):
        raise ValueError(f"clipped_policy_loss: beta={beta} must be >= 0, and > 0 only with ref_logprobs.")
    if aggregate not in AGGREGATIONS:
        raise ValueError(f"clipped_policy_loss: aggregate={aggregate!r}; choose one of {AGGREGATIONS}.")
    if max_tokens is not None and (aggregate != "constant" or max_tokens < shape[2]):
        raise ValueError(
            f"clipped_policy_loss: max_tokens={max_tokens} is the generation budget of aggregate='constant', "
            f"at least t={shape[2]}; leave it out otherwise."
        )

    # Padding may hold -inf or garbage: zero it before any arithmetic, so no NaN reaches the gradient.
    logprobs = logprobs.masked_fill(~mask, 0.0)
    old = old_logprobs.detach().masked_fill(~mask, 0.0)
    ratio = torch.exp(logprobs - old)  # (g, n, t)
    a = advantages.detach().to(ratio.dtype).unsqueeze(-1)  # (g, n, 1)
    per_token = -torch.minimum(ratio * a, ratio.clamp(1 - clip, 1 + clip) * a)  # (g, n, t)
    if beta > 0:
        ref = ref_logprobs.detach().masked_fill(~mask, 0.0)
        per_token = per_token + beta * kl_k3(logprobs, ref)  # (g, n, t)
    per_token = per_token.masked_fill(~mask, 0.0)  # (g, n, t)

    if aggregate == "none":
        return per_token
    if aggregate == "token_mean":
        return per_token.sum() / mask.sum().clamp(min=1)
    if aggregate == "sequence_mean":
        return (per_token.sum(-1) / mask.sum(-1).clamp(min=1)).mean()
    return per_token.sum() / (shape[0] * shape[1] * (max_tokens or shape[2]))
