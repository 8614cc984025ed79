"""Direct preference optimisation (DPO): fine-tuning on pairs of answers, one preferred (chapter 15).

Rafailov et al. (2023), "Direct Preference Optimization: Your Language Model is Secretly a Reward
Model". RLHF asks for the policy ``π`` that maximises a reward ``r`` while staying near a frozen
reference ``π_ref`` (the SFT model): ``max E[r(x, y)] - β KL(π(·|x) || π_ref(·|x))``. Its optimum has a
closed form (:func:`optimal_policy`)::

    π*(y|x) = π_ref(y|x) · exp(r(x, y) / β) / Z(x)

so a reward is a log-ratio, ``r = β log(π*/π_ref) + β log Z``, and under the Bradley-Terry model of
preferences, ``p(y_w ≻ y_l) = σ(r(y_w) - r(y_l))``, the ``Z`` cancels. DPO fits ``π`` to pairs ``(x, y_w,
y_l)`` (``y_w`` preferred) by the likelihood of those preferences, with the reward written through
``π`` itself, the *implicit reward* ``β log(π/π_ref)`` (:func:`implicit_rewards`)::

    loss = -log σ(β [(log π(y_w|x) - log π_ref(y_w|x)) - (log π(y_l|x) - log π_ref(y_l|x))])

No reward model, no sampling: four sequence log-probabilities per pair (:func:`sequence_logprobs`),
two of them from the frozen reference, computed once. ``β`` sets how far ``π`` may move from
``π_ref`` (small: far). :func:`dpo_loss` is TRL's ``loss_type="sigmoid"`` (tests).
Shapes: ``n`` pairs, ``b`` sequences, ``t`` tokens, ``V`` vocabulary, ``K`` answers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fromscratch.tokenizers.special import IGNORE


def dpo_loss(
    policy_chosen: Tensor,
    policy_rejected: Tensor,
    reference_chosen: Tensor,
    reference_rejected: Tensor,
    *,
    beta: float = 0.1,
) -> Tensor:
    """The mean DPO loss of ``n`` pairs: each argument ``(n,)``, the sequence log-probability (nats) of the
    chosen or the rejected answer under the policy or the reference. Returns a scalar."""
    if beta <= 0:
        raise ValueError(f"beta={beta} must be > 0: it is the weight of the KL term the loss comes from.")
    margin = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)  # (n,)
    return -F.logsigmoid(beta * margin).mean()


def implicit_rewards(policy: Tensor, reference: Tensor, *, beta: float = 0.1) -> Tensor:
    """``β (log π - log π_ref)``: the reward DPO's policy implies for each answer (inputs' shape)."""
    return beta * (policy - reference)


def optimal_policy(reference: Tensor, rewards: Tensor, *, beta: float) -> Tensor:
    """``π_ref · exp(r/β) / Z`` over the last dimension: ``reference`` probabilities ``(..., K)`` and
    ``rewards`` ``(..., K)`` -> the policy that maximises ``E[r] - β KL(π || π_ref)`` ``(..., K)``."""
    return torch.softmax(reference.log() + rewards / beta, dim=-1)  # (..., K)


def sequence_logprobs(logits: Tensor, labels: Tensor) -> Tensor:
    """Each row's summed log-probability of its labelled tokens: ``logits`` ``(b, t, V)`` at the positions
    that predict ``labels`` ``(b, t)`` (IGNORE where not scored, as :class:`~fromscratch.data.instructions.
    ChatBatches` makes them) -> ``(b,)`` nats."""
    scored = labels != IGNORE  # (b, t)
    logp = torch.log_softmax(logits.float(), dim=-1)  # (b, t, V)
    picked = logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # (b, t)
    return (picked * scored).sum(dim=-1)  # (b,)


def answer_logprobs(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
    """:func:`sequence_logprobs` of ``model`` on ``batch["ids"]`` and ``["labels"]`` ``(b, t)``: ``(b,)``."""
    return sequence_logprobs(model(batch["ids"]), batch["labels"])


def preference_loss(
    model: nn.Module, batch: dict[str, Tensor], *, reference: Tensor, beta: float = 0.1
) -> Tensor:
    """:func:`dpo_loss` of one batch of pairs, as ``train``'s ``loss_fn`` takes it (bind ``reference`` and
    ``beta`` with ``functools.partial``): ``batch["ids"]``/``["labels"]`` ``(2n, t)``, the ``n`` chosen
    answers' rows first, then the rejected ones in the same order; ``batch["pair"]`` ``(n,)`` the pairs'
    numbers, rows of ``reference`` ``(pairs, 2)``: the reference's log-probs (chosen, rejected)."""
    chosen, rejected = answer_logprobs(model, batch).chunk(2)  # (n,), (n,)
    ref = reference.to(chosen.device)[batch["pair"]]  # (n, 2)
    return dpo_loss(chosen, rejected, ref[:, 0], ref[:, 1], beta=beta)


__all__ = [
    "answer_logprobs",
    "dpo_loss",
    "implicit_rewards",
    "optimal_policy",
    "preference_loss",
    "sequence_logprobs",
]
