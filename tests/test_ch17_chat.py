"""Chapter 17's real-model path on its stand-in: problems through the chat template, groups cut at
``<|im_end|>`` and rewarded by the chapter's verifier, LoRA's policy equal to the reference at the start,
and a GRPO run that trains and saves only LoRA's matrices."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import torch

from fromscratch.chapters.ch17_reasoning import chat, grpo, scores
from fromscratch.chapters.ch17_reasoning.profile import CHAT_SMOKE, CPU
from fromscratch.chapters.ch17_reasoning.tasks import sample_groups
from fromscratch.data import verifiable
from fromscratch.tokenizers.chat import IM_START


def _models():
    return chat.chat_models("tiny", lora=CHAT_SMOKE.lora, tiny=CHAT_SMOKE.tiny)


def test_prompts_are_chatml_of_one_length_ending_in_the_assistants_turn():
    _, _, prompts = _models()
    problems = verifiable.generate("addition", 30, size=2)
    ids = [prompts.prompt(p) for p in problems]
    assert len({len(i) for i in ids}) == 1  # digits are single tokens: a step's prompts stack
    text = prompts.tokenizer.decode(ids[0])
    a, b = problems[0].numbers
    assert text.endswith(f"{IM_START}assistant\n") and f"What is {a} + {b}?" in text
    assert (
        prompts.decode([*prompts.tokenizer.encode("<answer>5</answer>"), prompts.stop])
        == "<answer>5</answer>"
    )
    with pytest.raises(ValueError, match="additions"):
        prompts.prompt(verifiable.generate("multiplication", 1, size=2)[0])


class Writer(torch.nn.Module):
    """A "model" that writes ``text`` then ``<|im_end|>`` after any prompt of ``tp`` tokens."""

    def __init__(self, prompts, tp, text):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.plan = [*prompts.tokenizer.encode(text), prompts.stop]
        self.tp, self.vocab = tp, prompts.vocab_size

    def forward(self, tokens):  # no new_cache: generate gives it the whole sequence every step
        logits = torch.full((len(tokens), tokens.size(1), self.vocab), -30.0)
        for i in range(tokens.size(1)):
            logits[:, i, self.plan[min(max(i + 1 - self.tp, 0), len(self.plan) - 1)]] = 30.0
        return logits + 0 * self.weight


def test_groups_end_at_im_end_and_the_verifier_reads_the_text():
    _, _, prompts = _models()
    problem = verifiable.generate("addition", 1, size=2)[0]
    tp = len(prompts.prompt(problem))
    right = Writer(prompts, tp, verifiable.answer(problem.target))
    groups = sample_groups(right, prompts, [problem], 2, max_tokens=30)
    assert groups.rewards.tolist() == [[1.0, 1.0]] and groups.texts[0][0] == verifiable.answer(problem.target)
    chatty = Writer(prompts, tp, verifiable.answer(problem.target) + " Hope that helps!")
    groups = sample_groups(chatty, prompts, [problem], 1, max_tokens=40)
    assert groups.formatted.tolist() == [[0.0]]  # text after the answer: the verifier's strict rule


def test_lora_policy_starts_as_the_reference_and_trains_only_lora():
    reference, policy, prompts = _models()
    tokens = torch.tensor([prompts.prompt(verifiable.generate("addition", 1, size=2)[0])])
    assert torch.equal(policy(tokens), reference(tokens))  # B = 0: the same function, exactly
    trained = [name for name, p in policy.named_parameters() if p.requires_grad]
    assert trained and all(name.endswith((".A", ".B")) for name in trained)
    assert not any(p.requires_grad for p in reference.parameters())


def test_a_grpo_run_with_lora_saves_only_lora_and_resumes(tmp_path):
    _, policy, prompts = _models()
    reference, _ = chat.stand_in(CHAT_SMOKE.tiny, seed=1)  # unlike the policy: the KL moves LoRA's weights
    reference.requires_grad_(False)
    pool = verifiable.generate("addition", 20, size=2)
    rl = replace(CHAT_SMOKE.rl, steps=2, checkpoint_every=1, max_tokens=3)
    start = copy.deepcopy(policy)
    run = grpo.run_grpo(
        policy, reference, prompts, pool, rl, checkpoint=tmp_path / "c.pt", watch=pool[0], progress=False
    )
    saved = torch.load(tmp_path / "c.pt", weights_only=False)["model"]
    assert set(saved) == {n for n, p in policy.named_parameters() if p.requires_grad}
    assert any(not torch.equal(a, b) for a, b in zip(policy.parameters(), start.parameters(), strict=True))
    again = grpo.run_grpo(
        start, reference, prompts, pool, rl, checkpoint=tmp_path / "c.pt", watch=pool[0], progress=False
    )
    assert again["curves"] == run["curves"]
    assert all(torch.equal(a, b) for a, b in zip(policy.parameters(), start.parameters(), strict=True))
    before = scores.sample_scores(policy, prompts, pool[:2], 2, max_tokens=3, temperature=0.7, batch=2)
    assert before.correct.shape == (2, 2)


def test_the_cpu_run_is_smollm2_on_two_digit_sums():
    assert CPU.chat.model == chat.SMOLLM2 and CPU.chat.digits == 2
    assert CPU.chat.rl.group >= 8  # GRPO's groups
