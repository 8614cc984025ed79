"""DPO (chapter 15): the loss by its definition, its optimum in closed form on a table of answers, the
sequence log-probabilities it reads, and equality with TRL's DPO loss where ``trl`` is installed."""

from __future__ import annotations

import itertools
import math
import tempfile

import pytest
import torch

from fromscratch.tokenizers.special import IGNORE
from fromscratch.training.dpo import (
    dpo_loss,
    implicit_rewards,
    optimal_policy,
    preference_loss,
    sequence_logprobs,
)


def test_the_loss_is_its_definition():
    generator = torch.Generator().manual_seed(0)
    pc, pr, rc, rr = (torch.randn(5, generator=generator) * 3 for _ in range(4))
    margin = (pc - rc) - (pr - rr)
    by_hand = sum(math.log(1 + math.exp(-0.5 * m)) for m in margin.tolist()) / len(margin)
    assert dpo_loss(pc, pr, rc, rr, beta=0.5).item() == pytest.approx(by_hand, rel=1e-6)
    assert dpo_loss(pc, pr, pc, pr).item() == pytest.approx(math.log(2))  # the policy is the reference
    assert torch.equal(implicit_rewards(pc, rc, beta=0.5), 0.5 * (pc - rc))
    with pytest.raises(ValueError, match="beta"):
        dpo_loss(pc, pr, rc, rr, beta=0)


def _population_loss(logits, reference, rewards, beta):
    """DPO's loss over every ordered pair of K answers, each weighted by Bradley-Terry's preference."""
    logp = torch.log_softmax(logits, dim=-1)
    total = 0.0
    for i, j in itertools.permutations(range(len(logits)), 2):
        prefer = torch.sigmoid(rewards[i] - rewards[j])  # p(y_i ≻ y_j)
        pair = dpo_loss(
            logp[i : i + 1], logp[j : j + 1], reference[i : i + 1], reference[j : j + 1], beta=beta
        )
        total = total + prefer * pair
    return total


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_the_optimum_is_the_reference_tilted_by_the_reward(beta):
    """π* = π_ref · exp(r/β) / Z minimises the loss over preferences drawn from r: its gradient there is
    zero, and gradient descent from the reference ends there."""
    generator = torch.Generator().manual_seed(1)
    reference = torch.softmax(torch.randn(4, generator=generator), dim=-1)
    rewards = torch.randn(4, generator=generator)
    best = optimal_policy(reference, rewards, beta=beta)
    assert torch.allclose(best.sum(), torch.tensor(1.0)) and torch.all(best > 0)
    at_best = optimal_policy(reference.double(), rewards.double(), beta=beta).log().requires_grad_(True)
    _population_loss(at_best, reference.double().log(), rewards.double(), beta).backward()
    assert at_best.grad.abs().max() < 1e-9
    logits = reference.log().clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([logits], max_iter=200, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = _population_loss(logits, reference.log(), rewards, beta)
        loss.backward()
        return loss

    optimizer.step(closure)
    assert torch.allclose(torch.softmax(logits, dim=-1), best, atol=1e-4)


def test_sequence_logprobs_sum_the_scored_tokens():
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 4, 7, generator=generator)
    labels = torch.tensor([[IGNORE, 3, 5, IGNORE], [1, IGNORE, IGNORE, IGNORE]])
    logp = torch.log_softmax(logits, dim=-1)
    expected = torch.stack([logp[0, 1, 3] + logp[0, 2, 5], logp[1, 0, 1]])
    assert torch.allclose(sequence_logprobs(logits, labels), expected)


def test_preference_loss_reads_chosen_rows_first():
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(4, 3, 5, generator=generator)
    labels = torch.tensor([[2, 1, IGNORE]] * 4)

    def model(ids):
        return logits

    reference = torch.randn(6, 2, generator=generator)
    batch = {"ids": torch.zeros(4, 3, dtype=torch.long), "labels": labels, "pair": torch.tensor([4, 1])}
    lp = sequence_logprobs(logits, labels)
    expected = dpo_loss(lp[:2], lp[2:], reference[[4, 1], 0], reference[[4, 1], 1], beta=0.2)
    assert torch.allclose(preference_loss(model, batch, reference=reference, beta=0.2), expected)


def test_equals_trl():
    """The loss of TRL's DPOTrainer (loss_type "sigmoid") on one batch of a tiny Llama and its reference."""
    pytest.importorskip("trl", reason="trl is not installed (pip install 'fromscratch[trl]')")
    import datasets
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers
    from trl import DPOConfig, DPOTrainer

    words = ["<pad>", "<eos>", "good", "bad", "film", "is", "the", "a", "very", "?", "yes", "no"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    hf_tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="<eos>"
    )
    config = transformers.LlamaConfig(
        vocab_size=len(words),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    policy, reference = transformers.LlamaForCausalLM(config), transformers.LlamaForCausalLM(config)
    pairs = datasets.Dataset.from_dict(
        {
            "prompt": ["the film is", "a very bad film is", "is the film good ?"],
            "chosen": [" good", " bad", " yes"],
            "rejected": [" bad very", " good", " no no"],
        }
    )
    with tempfile.TemporaryDirectory() as out:
        args = DPOConfig(output_dir=out, per_device_train_batch_size=3, beta=0.3, report_to=[], use_cpu=True)
        trainer = DPOTrainer(
            model=policy, ref_model=reference, args=args, train_dataset=pairs, processing_class=hf_tokenizer
        )
        batch = next(iter(trainer.get_train_dataloader()))
        theirs = trainer.compute_loss(trainer.model, batch)
    ids, completion = batch["input_ids"], batch["completion_mask"].bool()
    labels = torch.full_like(ids, IGNORE)
    labels[:, :-1] = torch.where(completion[:, 1:], ids[:, 1:], IGNORE)  # position i predicts token i + 1
    with torch.no_grad():
        ours = [
            sequence_logprobs(m(ids, attention_mask=batch["attention_mask"]).logits, labels).chunk(2)
            for m in (policy, reference)
        ]
    (chosen, rejected), (ref_chosen, ref_rejected) = ours
    assert torch.allclose(dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta=0.3), theirs, atol=1e-6)
