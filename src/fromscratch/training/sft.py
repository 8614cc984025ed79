"""Supervised fine-tuning on the assistant's tokens only, and what one step costs (chapter 15).

SFT is next-token prediction (chapter 07) on conversations, with one change: the loss counts only the
positions whose *next* token is the assistant's. The user's text and the template are read as context,
never imitated: the model learns to answer, not to write questions.
:class:`~fromscratch.data.instructions.ChatBatches` puts :data:`~fromscratch.tokenizers.special.IGNORE`
at every other position, and cross-entropy skips those (``ignore_index``), so :func:`assistant_loss` is
the plain next-token loss over the rest:

    loss = mean over scored positions i of  -log p(ids[i + 1] | ids[..i])

:func:`step_cost` measures a step of any such model: seconds (:func:`~fromscratch.training.time_step`)
and bytes by kind: the parameters, the gradients and AdamW's two moments (of the *trainable* weights only,
which is where LoRA saves), and the activations autograd keeps for the backward pass
(:func:`~fromscratch.training.memory.measure_activations`). Shapes: ``b`` batch, ``t`` length, ``V``
vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor, nn

from fromscratch.training.losses import token_cross_entropy
from fromscratch.training.memory import measure_activations
from fromscratch.training.timing import time_step


def assistant_loss(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
    """Mean cross-entropy (nats) of the assistant's tokens: ``batch["ids"]`` ``(b, t)`` in,
    ``batch["labels"]`` ``(b, t)`` the next token where scored, IGNORE elsewhere (skipped)."""
    logits = model(batch["ids"])  # (b, t, V)
    return token_cross_entropy(logits, batch["labels"])  # IGNORE positions do not count


@dataclass(frozen=True)
class StepCost:
    """Seconds and bytes of one training step (AdamW, fp32)."""

    seconds: float  # median of the timed steps
    trainable: int  # parameters with requires_grad
    total: int  # all parameters
    parameter_bytes: int  # every weight, trained or frozen
    gradient_bytes: int  # one gradient per trainable weight
    optimizer_bytes: int  # AdamW's two moments per trainable weight
    activation_bytes: int  # saved for the backward pass

    @property
    def bytes(self) -> int:
        """Everything a step holds: weights, gradients, optimiser state and activations."""
        return self.parameter_bytes + self.gradient_bytes + self.optimizer_bytes + self.activation_bytes


def step_cost(
    model: nn.Module,
    batch: dict[str, Tensor],
    loss_fn: Callable[[nn.Module, dict[str, Tensor]], Tensor] = assistant_loss,
    *,
    repeats: int = 3,
    lr: float = 1e-4,
) -> StepCost:
    """Time ``repeats`` AdamW steps of ``model`` on ``batch`` (after one warm-up step) and count its bytes.

    The model's weights change (a real step): pass a copy when it matters."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("The model has no trainable parameters; nothing to fine-tune.")
    device = trainable[0].device
    seconds = time_step(model, batch, loss_fn, device=device, repeats=repeats, lr=lr)  # fp32, AdamW
    model.train()  # the activations a training step keeps (dropout on)
    saved = measure_activations(model, lambda: loss_fn(model, batch))
    size = {p.data_ptr(): p.numel() * p.element_size() for p in model.parameters()}  # a tied matrix once
    n_trainable = sum(p.numel() for p in trainable)
    width = trainable[0].element_size()
    return StepCost(
        seconds=seconds,
        trainable=n_trainable,
        total=sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values()),
        parameter_bytes=sum(size.values()),
        gradient_bytes=n_trainable * width,
        optimizer_bytes=2 * n_trainable * 4,
        activation_bytes=saved.bytes,
    )


__all__ = ["StepCost", "assistant_loss", "step_cost"]
