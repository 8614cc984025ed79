"""Chapter 17's GRPO: one step (the notebook writes the same step out, and a checked cell keeps the two
equal) and the cached run of many steps, with the curves and the frames the chapter draws.

One step: draw ``g`` training problems, sample ``n`` answers to each (:func:`~.tasks.sample_groups`),
reward them, give each its group's advantage (:func:`~fromscratch.training.rl.group_advantages`), read
the log-probabilities of the samples under the policy that drew them (constant) and under the reference
(the SFT model, constant), then take ``updates`` optimiser steps on the clipped loss with its KL penalty
(:func:`~fromscratch.training.rl.clipped_policy_loss`). The first update is on-policy (ratio 1); later
ones are off-policy, and the clip acts there.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from fromscratch.chapters.ch17_reasoning.tasks import Pieces, response_logprobs, sample_groups
from fromscratch.data.verifiable import Problem
from fromscratch.training.checkpoints import load_checkpoint, save_checkpoint
from fromscratch.training.rl import clipped_policy_loss, group_advantages, kl_k3

CURVES = ("reward", "length", "entropy", "kl", "clipped", "loss")


def step_problems(pool: Sequence[Problem], g: int, step: int, seed: int = 0) -> list[Problem]:
    """The ``g`` training problems of step ``step``: the same on every run and after a resume."""
    return random.Random(f"grpo/{seed}/{step}").sample(list(pool), g)


def optimizer(policy, rl) -> torch.optim.AdamW:
    """GRPO's optimiser: AdamW at ``rl.lr``, constant, no weight decay, ``betas=(0.9, 0.99)``."""
    return torch.optim.AdamW(policy.parameters(), lr=rl.lr, weight_decay=0.0, betas=(0.9, 0.99))


def grpo_step(policy, reference, optimizer, tokenizer: Pieces, problems: Sequence[Problem], rl, *, seed: int):
    """One GRPO step on ``problems`` with the sizes of ``rl`` (a :class:`~.profile.GrpoRun`); returns the
    step's numbers (:data:`CURVES`) and the sampled groups (for the frames)."""
    groups = sample_groups(
        policy, tokenizer, problems, rl.group, max_tokens=rl.max_tokens, temperature=rl.temperature, seed=seed
    )
    g, n, t = groups.shape
    advantages = group_advantages(groups.rewards, scale=rl.scale)  # (g, n)
    with torch.no_grad():
        old, _ = response_logprobs(policy, groups.tokens, groups.prompt_len)  # (g * n, t)
        ref, _ = response_logprobs(reference, groups.tokens, groups.prompt_len)  # (g * n, t)
    old, ref = old.view(g, n, t), ref.view(g, n, t)
    policy.train()
    for update in range(rl.updates):
        logprobs, entropy = response_logprobs(policy, groups.tokens, groups.prompt_len)
        logprobs = logprobs.view(g, n, t)
        loss = clipped_policy_loss(
            logprobs, old, advantages, groups.mask, clip=rl.clip, ref_logprobs=ref, beta=rl.beta
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), rl.grad_clip)
        optimizer.step()
        if update == 0:  # on-policy: the numbers of the samples as drawn
            mask = groups.mask
            tokens = mask.sum().clamp(min=1)
            numbers = {
                "reward": groups.rewards.mean().item(),
                "length": (mask.sum() / (g * n)).item(),
                "entropy": (entropy.view(g, n, t) * mask).sum().item() / tokens.item(),
                "kl": (kl_k3(logprobs.detach(), ref) * mask).sum().item() / tokens.item(),
                "loss": loss.item(),
            }
    ratio = torch.exp(logprobs.detach() - old)[groups.mask]  # the last update's
    numbers["clipped"] = ((ratio - 1).abs() > rl.clip).float().mean().item()
    return numbers, groups


def run_grpo(
    policy,
    reference,
    tokenizer: Pieces,
    pool: Sequence[Problem],
    rl,
    *,
    checkpoint: Path,
    watch: Problem,
    progress: bool = True,
) -> dict:
    """``rl.steps`` GRPO steps on problems drawn from ``pool``, in place on ``policy``; cached in
    ``checkpoint`` (resumed where a run stopped; a finished run is loaded at once).

    Only the trainable weights are saved (:func:`_trained`).

    Returns ``{"curves": {name: [per step]}, "frames": [...], "seconds": ...}`` (the seconds spent in
    GRPO steps, over every session of the run): every ``rl.frame_every`` steps (and at
    step 0), ``rl.group`` samples for the problem ``watch`` with their rewards and advantages."""
    adam = optimizer(policy, rl)
    state = {"step": 0, "seconds": 0.0, "curves": {name: [] for name in CURVES}, "frames": []}
    if checkpoint.is_file():
        saved = load_checkpoint(checkpoint)
        _, unexpected = policy.load_state_dict(saved["model"], strict=False)
        if unexpected or set(_trained(policy)) - set(saved["model"]):
            raise ValueError(f"{checkpoint} holds other weights than this policy trains; delete it to rerun.")
        adam.load_state_dict(saved["optimizer"])
        state = saved["state"]
    bar = tqdm(total=rl.steps, initial=state["step"], desc="GRPO steps", disable=not progress)
    while state["step"] < rl.steps:
        step = state["step"]
        if step % rl.frame_every == 0:
            state["frames"].append(watch_frame(policy, tokenizer, watch, rl, step))
        problems = step_problems(pool, rl.problems, step, rl.seed)
        started = time.perf_counter()
        numbers, _ = grpo_step(
            policy, reference, adam, tokenizer, problems, rl, seed=rl.seed * 100_003 + step
        )
        state["seconds"] += time.perf_counter() - started
        for name in CURVES:
            state["curves"][name].append(numbers[name])
        state["step"] = step + 1
        bar.update(1)
        bar.set_postfix(reward=f"{numbers['reward']:.2f}")
        if state["step"] % rl.checkpoint_every == 0 or state["step"] == rl.steps:
            if state["step"] == rl.steps:
                state["frames"].append(watch_frame(policy, tokenizer, watch, rl, state["step"]))
            save_checkpoint(
                checkpoint, {"model": _trained(policy), "optimizer": adam.state_dict(), "state": state}
            )
    bar.close()
    return state


def _trained(policy) -> dict:
    """The weights GRPO changes (every one for a model trained whole; with LoRA, its A and B only): what a
    checkpoint keeps (a frozen 135M-parameter model is read from its own file)."""
    trained = {name for name, p in policy.named_parameters(remove_duplicate=False) if p.requires_grad}
    return {name: value for name, value in policy.state_dict().items() if name in trained}


def watch_frame(policy, tokenizer: Pieces, problem: Problem, rl, step: int) -> dict:
    """``rl.group`` samples for ``problem`` at ``step``: their texts, rewards and advantages."""
    groups = sample_groups(
        policy,
        tokenizer,
        [problem],
        rl.group,
        max_tokens=rl.max_tokens,
        temperature=rl.temperature,
        seed=10_007 + step,
    )
    advantages = group_advantages(groups.rewards, scale=rl.scale)[0]
    return {
        "step": step,
        "texts": groups.texts[0],
        "rewards": groups.rewards[0].tolist(),
        "advantages": advantages.tolist(),
    }


__all__ = ["CURVES", "grpo_step", "optimizer", "run_grpo", "step_problems", "watch_frame"]
