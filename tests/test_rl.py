"""Oracles of ``fromscratch.training.rl``: on a softmax policy over K answers (a table of logits ``θ``)
the exact gradient of the expected reward is ``∇E[r] = π ⊙ (r - E[r])``, and each sampled estimator is
checked against it within 4 standard errors; the clipped loss's gradient at and beyond the clip; pass@k
against enumerating every subset; TRL's GRPO loss on the same inputs where ``trl`` is installed.

On the table, ``∇_θ log π(a) = e_a - π``, so a group's sampled gradient ``(1/n) Σ_i A_i ∇ log π(a_i)``
is written out without autograd, for many groups at once; autograd is checked to give the same.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fromscratch.training import rl

K = 5  # answers
SIGMAS = 4.0  # tolerance, in standard errors


def _policy(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits ``θ`` (K,) and the policy ``π = softmax(θ)`` (K,), float64."""
    theta = torch.randn(K, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return theta, torch.softmax(theta, dim=0)


def _exact(pi: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``∇_θ E_{a~π}[r(a)] = π ⊙ (r - π·r)`` (K,)."""
    return pi * (r - pi @ r)


def _sample(pi: torch.Tensor, groups: int, n: int, seed: int) -> torch.Tensor:
    """``groups`` groups of ``n`` answers drawn from ``pi``: int ``(groups, n)``."""
    generator = torch.Generator().manual_seed(seed)
    return torch.multinomial(pi, groups * n, replacement=True, generator=generator).view(groups, n)


def _group_gradients(pi: torch.Tensor, answers: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """Each group's ``(1/n) Σ_i A_i (e_{a_i} - π)``: answers and advantages ``(G, n)`` -> ``(G, K)``."""
    score = F.one_hot(answers, K).double() - pi  # (G, n, K): ∇ log π(a_i)
    return (advantages.double().unsqueeze(-1) * score).mean(dim=1)  # (G, K)


def _assert_mean_is(estimates: torch.Tensor, expected: torch.Tensor) -> None:
    """The mean of ``estimates`` ``(G, K)`` is ``expected`` (K,) within SIGMAS standard errors."""
    mean = estimates.mean(dim=0)
    error = estimates.std(dim=0) / math.sqrt(estimates.size(0))
    assert torch.all((mean - expected).abs() <= SIGMAS * error + 1e-12), (mean, expected, error)


def test_reinforce_with_a_fixed_baseline_is_unbiased():
    _, pi = _policy(0)
    r = torch.tensor([0.0, 1.0, 0.3, 0.8, 0.5], dtype=torch.float64)
    answers = _sample(pi, 200_000, 1, seed=1)  # (G, 1)
    gradients = _group_gradients(pi, answers, r[answers] - 0.5)  # baseline 0.5, fixed
    _assert_mean_is(gradients, _exact(pi, r))


def test_rloo_is_unbiased_and_the_group_mean_is_not():
    _, pi = _policy(2)
    r = torch.tensor([1.0, 0.0, 0.2, 0.0, 0.7], dtype=torch.float64)
    n = 4
    answers = _sample(pi, 100_000, n, seed=3)  # (G, n)
    _assert_mean_is(_group_gradients(pi, answers, rl.rloo_advantages(r[answers])), _exact(pi, r))
    # The group mean includes the sample itself: the estimate shrinks by (n - 1) / n, exactly.
    centred = rl.group_advantages(r[answers], scale=False)
    _assert_mean_is(_group_gradients(pi, answers, centred), (n - 1) / n * _exact(pi, r))


def _grpo_factor(p: float, n: int, eps: float) -> float:
    """With rewards 1 (right) or 0, the expected GRPO gradient is this factor times the exact one.

    Given m right answers in a group, the right ones are drawn from π restricted to the right answers and
    the wrong ones from π restricted to the wrong ones, so the group's expected gradient is
    ``m (n - m) / (n² σ_m) · D`` with ``D = π 1_right / p - π 1_wrong / (1 - p)``, and the exact gradient
    is ``p (1 - p) D``: the factor is ``Σ_m P(m) m (n - m) / (n² (σ_m + eps) p (1 - p))``."""
    total = 0.0
    for m in range(1, n):
        sigma = math.sqrt(m * (n - m) / (n * (n - 1)))  # Bessel-corrected std of m ones, n - m zeros
        total += math.comb(n, m) * p**m * (1 - p) ** (n - m) * m * (n - m) / (n**2 * (sigma + eps))
    return total / (p * (1 - p))


def test_grpo_std_scaling_changes_the_expected_gradient_by_a_positive_factor_per_group():
    right = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    n, eps, factors = 8, 1e-4, []
    easy = torch.tensor([0.2, 0.3, 0.2, 0.2, 0.1], dtype=torch.float64)  # right half the time
    hard = torch.tensor([0.3, 0.05, 0.3, 0.05, 0.3], dtype=torch.float64)  # right 1 time in 10
    for seed, pi in enumerate((easy, hard)):
        answers = _sample(pi, 50_000, n, seed=seed + 10)
        rewards = right[answers]  # (G, n)
        scaled = _group_gradients(pi, answers, rl.group_advantages(rewards, eps=eps))
        plain = _group_gradients(pi, answers, rl.group_advantages(rewards, scale=False))
        # Per group, the same direction times 1 / (std + eps) > 0 (and zero for an all-equal group).
        std = rewards.std(dim=1, keepdim=True)
        assert torch.allclose(scaled, plain / (std + eps), atol=1e-12)
        factor = _grpo_factor(float(pi @ right), n, eps)
        _assert_mean_is(scaled, factor * _exact(pi, right))
        _assert_mean_is(plain, (n - 1) / n * _exact(pi, right))
        factors.append(factor)
    assert min(factors) > 0
    assert factors[1] > 1.2 * factors[0], factors  # the division up-weights the hard problem


def test_at_ratio_one_the_clipped_loss_gradient_is_reinforce():
    theta, pi = _policy(6)
    theta.requires_grad_(True)
    r = torch.tensor([0.0, 1.0, 0.3, 0.8, 0.5], dtype=torch.float64)
    answers = _sample(pi, 64, 8, seed=7)  # (g, n)
    advantages = rl.rloo_advantages(r[answers])
    logprobs = torch.log_softmax(theta, dim=0)[answers].unsqueeze(-1)  # (g, n, 1)
    mask = torch.ones_like(logprobs, dtype=torch.bool)
    loss = rl.clipped_policy_loss(logprobs, logprobs.detach(), advantages, mask, aggregate="sequence_mean")
    (gradient,) = torch.autograd.grad(-loss, theta)
    expected = _group_gradients(pi, answers, advantages).mean(dim=0)
    assert torch.allclose(gradient, expected, atol=1e-12)


def test_at_ratio_one_each_token_gets_minus_its_advantage_over_the_tokens():
    g, n, t = 2, 3, 5
    generator = torch.Generator().manual_seed(8)
    logprobs = torch.randn(g, n, t, generator=generator).requires_grad_(True)
    advantages = torch.randn(g, n, generator=generator)
    mask = torch.rand(g, n, t, generator=generator) > 0.3
    loss = rl.clipped_policy_loss(logprobs, logprobs.detach(), advantages, mask)  # token_mean
    (gradient,) = torch.autograd.grad(loss, logprobs)
    expected = -advantages.unsqueeze(-1) * mask / mask.sum()
    assert torch.allclose(gradient, expected, atol=1e-7)


def test_the_clip_zeroes_the_gradient_only_on_the_side_the_advantage_pushes():
    eps = 0.2
    ratios = torch.tensor([0.5, 0.9, 1.0, 1.1, 1.5])  # below, inside, inside, inside, above the clip
    logprobs = ratios.log().expand(2, 1, 5).clone().requires_grad_(True)  # (g=2, n=1, t=5)
    advantages = torch.tensor([[1.0], [-1.0]])  # the first pushes the ratio up, the second down
    mask = torch.ones(2, 1, 5, dtype=torch.bool)
    old = torch.zeros(2, 1, 5)
    per_token = rl.clipped_policy_loss(logprobs, old, advantages, mask, clip=eps, aggregate="none")
    (gradient,) = torch.autograd.grad(per_token.sum(), logprobs)
    reinforce = -advantages * ratios  # d(-ratio A)/d logprob, unclipped
    kept = torch.tensor([[True, True, True, True, False], [False, True, True, True, True]])
    assert torch.allclose(gradient[:, 0], torch.where(kept, reinforce, torch.zeros(())), atol=1e-7)


def test_the_kl_term_is_k3_and_padding_never_makes_nan():
    g, n, t = 1, 2, 4
    generator = torch.Generator().manual_seed(9)
    logprobs = torch.randn(g, n, t, generator=generator)
    ref = torch.randn(g, n, t, generator=generator)
    mask = torch.ones(g, n, t, dtype=torch.bool)
    mask[0, 1, 2:] = False
    zero = torch.zeros(g, n)
    logprobs = logprobs.masked_fill(~mask, float("-inf")).requires_grad_(True)  # padding: -inf
    per_token = rl.clipped_policy_loss(
        logprobs, logprobs.detach(), zero, mask, ref_logprobs=ref, beta=0.1, aggregate="none"
    )
    d = ref - logprobs.detach()
    assert torch.allclose(per_token[mask], (0.1 * (d.exp() - d - 1))[mask])
    assert torch.all(per_token[~mask] == 0) and torch.all(rl.kl_k3(ref, ref) == 0)
    (gradient,) = torch.autograd.grad(per_token.sum(), logprobs)
    assert torch.isfinite(gradient).all()


def test_aggregations():
    g, n, t = 2, 2, 3
    generator = torch.Generator().manual_seed(10)
    logprobs, old = torch.randn(g, n, t, generator=generator), torch.randn(g, n, t, generator=generator)
    advantages = torch.randn(g, n, generator=generator)
    mask = torch.tensor([[[1, 1, 0], [1, 0, 0]], [[1, 1, 1], [0, 0, 0]]], dtype=torch.bool)
    args = (logprobs, old, advantages, mask)
    per_token = rl.clipped_policy_loss(*args, aggregate="none")
    assert per_token.shape == (g, n, t) and torch.all(per_token[~mask] == 0)
    assert torch.allclose(rl.clipped_policy_loss(*args), per_token.sum() / 6)
    lengths = mask.sum(-1).clamp(min=1)
    assert torch.allclose(
        rl.clipped_policy_loss(*args, aggregate="sequence_mean"), (per_token.sum(-1) / lengths).mean()
    )
    assert torch.allclose(rl.clipped_policy_loss(*args, aggregate="constant"), per_token.sum() / (g * n * t))
    constant = rl.clipped_policy_loss(*args, aggregate="constant", max_tokens=10)
    assert torch.allclose(constant, per_token.sum() / (g * n * 10))
    for bad in ({"aggregate": "sum"}, {"max_tokens": 10}, {"clip": 0.0}, {"beta": 0.1}):
        with pytest.raises(ValueError):
            rl.clipped_policy_loss(*args, **bad)
    with pytest.raises(ValueError, match="must be bool"):
        rl.clipped_policy_loss(logprobs, old, advantages, mask.float())
    with pytest.raises(ValueError, match="advantages"):
        rl.clipped_policy_loss(logprobs, old, advantages[:, :1], mask)


def test_group_advantages():
    rewards = torch.tensor([[0.1, 0.1, 0.1], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 2.0]])
    for scale in (True, False):
        advantages = rl.group_advantages(rewards, scale=scale)
        assert torch.all(advantages[:3] == 0), advantages
    assert torch.allclose(rl.group_advantages(rewards)[3], torch.tensor([-1.0, 0.0, 1.0]) / (1 + 1e-4))
    assert torch.allclose(rl.group_advantages(rewards, scale=False)[3], torch.tensor([-1.0, 0.0, 1.0]))
    one = rl.group_advantages(torch.tensor([[3.0], [1.0]]))  # one sample per problem
    assert torch.all(one == 0)
    assert torch.all(rl.group_advantages(torch.tensor([[1, 1], [0, 1]]))[0] == 0)  # integer rewards
    with pytest.raises(ValueError, match=r"\(g, n\)"):
        rl.group_advantages(torch.zeros(4))


def test_rloo_advantages():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    expected = torch.tensor([[1 - 1 / 3, -2 / 3, -2 / 3, 1 - 1 / 3], [0.0, 0.0, 0.0, 0.0]])
    assert torch.allclose(rl.rloo_advantages(rewards), expected)
    assert torch.allclose(rl.rloo_advantages(rewards), 4 / 3 * rl.group_advantages(rewards, scale=False))
    with pytest.raises(ValueError, match="n >= 2"):
        rl.rloo_advantages(torch.ones(3, 1))


def test_pass_at_k_against_every_subset():
    for n in range(1, 8):
        for c in range(n + 1):
            right = set(range(c))
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(range(n), k))
                hits = sum(bool(right.intersection(s)) for s in subsets)
                assert rl.pass_at_k(n, c, k) == pytest.approx(float(Fraction(hits, len(subsets))), abs=1e-15)
    assert rl.pass_at_k(10, 3, 8) == 1.0  # n - c < k
    assert rl.pass_at_k(200, 0, 100) == 0.0 and rl.pass_at_k(1, 1, 1) == 1.0
    assert rl.pass_at_k(10**4, 1, 10**4 - 1) == pytest.approx(1 - 1 / 10**4)  # no overflow


def test_pass_at_k_elementwise_and_errors():
    n, c = torch.tensor([10, 10, 5]), torch.tensor([0, 3, 5])
    out = rl.pass_at_k(n, c, 2)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    assert out.tolist() == [rl.pass_at_k(10, 0, 2), rl.pass_at_k(10, 3, 2), 1.0]
    array = rl.pass_at_k(np.array([[4], [6]]), np.array([1, 2]), 3)  # broadcast (2, 1) with (2,)
    assert isinstance(array, np.ndarray) and array.shape == (2, 2) and array[0, 0] == rl.pass_at_k(4, 1, 3)
    for bad in ((5, 2, 6), (5, 6, 1), (5, -1, 1), (-1, 0, 1), (5, 1, 0), (5, 1.5, 1), (5, True, 1)):
        with pytest.raises(ValueError):
            rl.pass_at_k(*bad)
    with pytest.raises(ValueError, match="k=3 > n=2"):
        rl.pass_at_k(torch.tensor([4, 2]), 0, 3)


def _trl_loss(loss_type: str, logprobs, old, advantages, mask, ref, beta: float):
    """TRL's ``GRPOTrainer._compute_loss`` run on given per-token log-probabilities: a stand-in for the
    trainer holds the settings it reads, and its model call returns ``logprobs`` ``(B, T)``."""
    from trl.trainer.grpo_trainer import GRPOTrainer

    b, t = logprobs.shape
    trainer = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *args, **kwargs: (logprobs, torch.zeros(b, t), None),
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level="token",
        beta=beta,
        loss_type=loss_type,
        epsilon_low=0.2,
        epsilon_high=0.2,
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None),
        use_vllm=False,
        vllm_importance_sampling_correction=False,
        model=SimpleNamespace(training=False),  # evaluation: no accumulation scaling
        max_completion_length=t,
        _entropy_bonus_enabled=False,
        aux_loss_enabled=False,
        accelerator=SimpleNamespace(reduce=lambda x, reduction: x, gather=lambda x: x),
        _metrics=defaultdict(lambda: defaultdict(list)),
    )
    inputs = {
        "prompt_ids": torch.zeros(b, 1, dtype=torch.long),
        "prompt_mask": torch.ones(b, 1),
        "completion_ids": torch.zeros(b, t, dtype=torch.long),
        "completion_mask": mask,
        "advantages": advantages,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
    }
    return GRPOTrainer._compute_loss(trainer, None, inputs)


def test_equals_trl_grpo_loss():
    """The losses of TRL 1.16's ``GRPOTrainer._compute_loss``, called with a stand-in trainer: ``bnpo``
    is ``token_mean``, ``grpo`` ``sequence_mean``, ``dr_grpo`` ``constant``; the per-token losses are read
    from TRL as the gradient of its ``dr_grpo`` loss with respect to a float mask, times ``B · T``."""
    pytest.importorskip(
        "trl", reason="trl is not installed (pip install 'fromscratch[trl]'): TRL check skipped"
    )
    g, n, t, beta = 3, 4, 6, 0.04
    generator = torch.Generator().manual_seed(11)
    logprobs = -torch.rand(g, n, t, generator=generator, dtype=torch.float64) * 3
    old = logprobs + 0.3 * torch.randn(g, n, t, generator=generator, dtype=torch.float64)  # some clipped
    ref = logprobs + 0.5 * torch.randn(g, n, t, generator=generator, dtype=torch.float64)
    advantages = rl.group_advantages(torch.randint(0, 2, (g, n), generator=generator))
    mask = torch.rand(g, n, t, generator=generator) > 0.25
    mask[..., 0] = True
    ours = {
        a: rl.clipped_policy_loss(logprobs, old, advantages, mask, ref_logprobs=ref, beta=beta, aggregate=a)
        for a in ("token_mean", "sequence_mean", "constant", "none")
    }
    flat = {"logprobs": logprobs.view(g * n, t), "old": old.view(g * n, t), "ref": ref.view(g * n, t)}
    flat |= {"advantages": advantages.reshape(g * n).double(), "beta": beta}
    for loss_type, aggregate in (("bnpo", "token_mean"), ("grpo", "sequence_mean"), ("dr_grpo", "constant")):
        theirs = _trl_loss(loss_type, mask=mask.view(g * n, t).double(), **flat)
        assert torch.allclose(theirs, ours[aggregate], atol=1e-12), (loss_type, theirs, ours[aggregate])
    float_mask = mask.view(g * n, t).double().requires_grad_(True)
    (per_token,) = torch.autograd.grad(_trl_loss("dr_grpo", mask=float_mask, **flat), float_mask)
    theirs = (per_token * g * n * t).view(g, n, t)
    assert torch.allclose(theirs[mask], ours["none"][mask], atol=1e-12)
