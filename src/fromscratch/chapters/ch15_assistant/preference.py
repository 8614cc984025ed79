"""Preference tuning with DPO on SmolLM2, with LoRA, on pairs built offline (chapter 15).

The pairs are IMDb reviews asked about in the sentiment question, the right answer preferred to the wrong
one (:func:`~fromscratch.data.instructions.sentiment_pairs`). The reference is the chat model itself; its
log-probabilities of both answers are computed once (:func:`reference_logprobs`), then LoRA is trained
on :func:`~fromscratch.training.dpo.preference_loss` by ``train``. On held-out pairs
(:func:`held_out_preferences`):

- **preference accuracy**: the share of pairs whose implicit reward ``β log(π/π_ref)`` is higher for the
  chosen answer than for the rejected one (DPO's own measure), with its Wilson interval;
- the share where the policy itself gives the chosen answer the higher probability (the task's accuracy:
  the pairs are labels written as preferences), and which pairs, to compare two policies paired;
- **KL to the reference**: ``KL(π(·|x) || π_ref(·|x))`` of the reply's first token over the whole
  vocabulary, exact per prompt, its mean over the held-out prompts with a 95 % bootstrap interval: how
  far the tuning moved the model where it decides.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fromscratch.chapters.ch15_assistant.assistant import prompt_ids
from fromscratch.chapters.ch15_assistant.paired import mean_interval
from fromscratch.data.instructions import Pair, PairBatches
from fromscratch.metrics.intervals import Proportion, wilson_interval
from fromscratch.models.llama import Llama
from fromscratch.training.dpo import answer_logprobs
from fromscratch.utils import evaluating


@torch.no_grad()
def reference_logprobs(model: Llama, batches: PairBatches) -> torch.Tensor:
    """Sequence log-probabilities ``(pairs, 2)`` (chosen, rejected) of every pair's answers by ``model``."""
    device = next(model.parameters()).device
    out = torch.zeros(batches.pairs, 2)
    with evaluating(model):
        for batch in batches.in_order():
            chosen, rejected = answer_logprobs(model, {k: v.to(device) for k, v in batch.items()}).chunk(2)
            out[batch["pair"]] = torch.stack([chosen, rejected], dim=1).float().cpu()
    return out


@torch.no_grad()
def first_token_kl(policy: Llama, reference: Llama, tokenizer, pairs: list[Pair]) -> torch.Tensor:
    """``KL(π || π_ref)`` (nats) of the first token of the reply to each pair's prompt: ``(pairs,)``."""
    device = next(policy.parameters()).device
    out = []
    for pair in pairs:
        ids = torch.tensor([prompt_ids(tokenizer, list(pair.prompt))], device=device)  # (1, t)
        logp = []
        for model in (policy, reference):
            with evaluating(model):
                logp.append(torch.log_softmax(model(ids)[0, -1].float(), dim=-1))  # (V,)
        out.append(float((logp[0].exp() * (logp[0] - logp[1])).sum()))
    return torch.tensor(out)


@dataclass(frozen=True)
class Preferences:
    """What DPO did on held-out pairs."""

    reward_accuracy: Proportion  # implicit reward higher for the chosen answer
    policy_accuracy: Proportion  # the policy's own probability higher for the chosen answer
    reference_accuracy: Proportion  # the same, for the reference
    kl: tuple[float, float, float]  # mean first-token KL to the reference (nats), 95 % interval
    chosen_first: torch.Tensor | None = None  # bool (pairs,): the policy's probability higher for the chosen


def held_out_preferences(
    policy: Llama,
    reference: Llama,
    tokenizer,
    batches: PairBatches,
    pairs: list[Pair],
    reference_lp: torch.Tensor,
) -> Preferences:
    """:class:`Preferences` of ``policy`` against ``reference`` on the held-out ``pairs`` (``batches`` of
    them, ``reference_lp`` their :func:`reference_logprobs`)."""
    lp = reference_logprobs(policy, batches)  # (pairs, 2)
    margin = (lp[:, 0] - reference_lp[:, 0]) - (lp[:, 1] - reference_lp[:, 1])  # (pairs,)
    n = len(pairs)
    kl = first_token_kl(policy, reference, tokenizer, pairs)
    return Preferences(
        wilson_interval(int((margin > 0).sum()), n),
        wilson_interval(int((lp[:, 0] > lp[:, 1]).sum()), n),
        wilson_interval(int((reference_lp[:, 0] > reference_lp[:, 1]).sum()), n),
        mean_interval(kl),
        lp[:, 0] > lp[:, 1],
    )


__all__ = ["Preferences", "first_token_kl", "held_out_preferences", "reference_logprobs"]
