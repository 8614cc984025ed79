"""Chapter 17's pipeline: the tabular oracles, the pieces tokeniser, SFT batches, groups of samples, the GRPO
step and its cached run (resumed equal to uninterrupted), and the held-out scores."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch

from fromscratch.chapters.ch17_reasoning import grpo, scores, tabular
from fromscratch.chapters.ch17_reasoning.profile import SMOKE
from fromscratch.chapters.ch17_reasoning.tasks import (
    Pieces,
    prompt_ids,
    response_logprobs,
    sample_groups,
    sft_batches,
)
from fromscratch.data import verifiable
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.special import IGNORE

LOGITS = torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0])
REWARDS = torch.tensor([0.0, 0.0, 1.0, 0.0, 1.0, 0.0])


def test_the_exact_gradient_is_autograds():
    theta = LOGITS.clone().requires_grad_(True)
    (torch.softmax(theta, -1) * REWARDS).sum().backward()
    assert torch.allclose(theta.grad, tabular.exact_gradient(LOGITS, REWARDS))


@pytest.mark.parametrize("name", ["REINFORCE", "fixed baseline", "RLOO"])
def test_unbiased_estimators_average_to_the_exact_gradient(name):
    r = tabular.bias_variance(name, LOGITS, REWARDS, n=4, draws=40_000, seed=1)
    assert r.bias < 3 * r.bias_se + 1e-3


def test_grpo_without_std_is_scaled_by_n_minus_1_over_n():
    for n in (2, 4, 8):
        r = tabular.bias_variance("GRPO, no std", LOGITS, REWARDS, n=n, draws=40_000, seed=n)
        assert r.scale == pytest.approx((n - 1) / n, abs=4 * r.bias_se + 2e-3)


def test_grpo_with_std_keeps_the_direction_for_0_1_rewards():
    r = tabular.bias_variance("GRPO", LOGITS, REWARDS, n=8, draws=40_000, seed=3)
    assert r.cosine > 0.999 and r.scale > 1.2  # biased in size, not in direction


def test_pieces_round_trip_and_refuse_unknown_characters():
    tokenizer = Pieces()
    problem = verifiable.generate("addition", 1, size=3)[0]
    text = verifiable.worked_solution(problem)
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert len(tokenizer.encode(text)) < len(text) / 2
    with pytest.raises(ValueError, match="no piece"):
        tokenizer.encode("x")


def test_sft_labels_are_the_response_only():
    tokenizer = Pieces()
    problems = verifiable.generate("addition", 20, size=3)
    batch = next(sft_batches(tokenizer, problems, 4, seed=0))
    ids, labels = batch["ids"], batch["labels"]
    start = len(prompt_ids(tokenizer, problems[0]))
    assert (labels[:, : start - 1] == IGNORE).all()
    scored = labels != IGNORE
    assert torch.equal(labels[:, :-1][scored[:, :-1]], ids[:, 1:][scored[:, :-1]])
    assert (labels[scored] == tokenizer.stop).sum() == 4  # each row's last label is </answer>


class Oracle(torch.nn.Module):
    """A "model" that writes the worked solution of one problem, then </answer> forever."""

    def __init__(self, tokenizer, problem, wrong=False):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        text = verifiable.worked_solution(problem)
        if wrong:
            text = text.replace(verifiable.answer(problem.target), verifiable.answer(problem.target + 1))
        self.plan = prompt_ids(tokenizer, problem) + tokenizer.encode(text)
        self.vocab = tokenizer.vocab_size

    def forward(self, tokens, cache=None):
        t = tokens.size(1)
        logits = torch.full((len(tokens), t, self.vocab), -30.0)
        for i in range(t):
            nxt = self.plan[min(i + 1, len(self.plan) - 1)]
            logits[:, i, nxt] = 30.0
        return logits + 0 * self.weight


def test_sample_groups_cuts_at_the_answer_and_rewards():
    tokenizer = Pieces()
    problem = verifiable.generate("addition", 1, size=3)[0]
    right = sample_groups(Oracle(tokenizer, problem), tokenizer, [problem], 3, max_tokens=60, temperature=1.0)
    assert right.rewards.tolist() == [[1.0, 1.0, 1.0]]
    assert right.texts[0][0] == verifiable.worked_solution(problem)
    assert right.mask.sum(-1).tolist() == [[len(tokenizer.encode(right.texts[0][0]))] * 3]
    wrong = sample_groups(Oracle(tokenizer, problem, wrong=True), tokenizer, [problem], 2, max_tokens=60)
    assert wrong.rewards.tolist() == [[0.0, 0.0]] and wrong.formatted.tolist() == [[1.0, 1.0]]
    short = sample_groups(Oracle(tokenizer, problem), tokenizer, [problem], 1, max_tokens=10)
    assert short.formatted.tolist() == [[0.0]]  # unfinished: no answer


def test_response_logprobs_match_a_direct_forward():
    torch.manual_seed(0)
    model = Llama(SMOKE.model)
    tokens = torch.randint(5, Pieces().vocab_size, (3, 12))
    logp, entropy = response_logprobs(model, tokens, prompt_len=5)
    full = torch.log_softmax(model(tokens), -1)
    expected = full[:, 4:-1].gather(-1, tokens[:, 5:, None]).squeeze(-1)
    assert torch.allclose(logp, expected, atol=1e-6) and (entropy >= 0).all()


def _setup():
    tokenizer = Pieces()
    pool = verifiable.generate("addition", 50, size=3)
    torch.manual_seed(0)
    policy = Llama(SMOKE.model)
    torch.manual_seed(1)
    reference = Llama(SMOKE.model).eval().requires_grad_(False)
    return tokenizer, pool, policy, reference


def test_grpo_step_moves_the_policy_and_is_deterministic():
    tokenizer, pool, policy, reference = _setup()
    a, b = copy.deepcopy(policy), copy.deepcopy(policy)
    problems = grpo.step_problems(pool, 2, step=0)
    na, _ = grpo.grpo_step(a, reference, grpo.optimizer(a, SMOKE.rl), tokenizer, problems, SMOKE.rl, seed=0)
    nb, _ = grpo.grpo_step(b, reference, grpo.optimizer(b, SMOKE.rl), tokenizer, problems, SMOKE.rl, seed=0)
    assert na == nb and set(na) == set(grpo.CURVES)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))
    assert any(not torch.equal(x, y) for x, y in zip(a.parameters(), policy.parameters(), strict=True))


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path):
    tokenizer, pool, policy, reference = _setup()
    rl = replace(SMOKE.rl, steps=4, checkpoint_every=2, frame_every=2)
    watch = pool[0]
    whole = copy.deepcopy(policy)
    done = grpo.run_grpo(
        whole, reference, tokenizer, pool, rl, checkpoint=tmp_path / "a.pt", watch=watch, progress=False
    )
    half = copy.deepcopy(policy)
    grpo.run_grpo(
        half,
        reference,
        tokenizer,
        pool,
        replace(rl, steps=2),
        checkpoint=tmp_path / "b.pt",
        watch=watch,
        progress=False,
    )
    again = copy.deepcopy(policy)  # a fresh session: the weights come from the checkpoint
    resumed = grpo.run_grpo(
        again, reference, tokenizer, pool, rl, checkpoint=tmp_path / "b.pt", watch=watch, progress=False
    )
    assert resumed["curves"] == done["curves"]
    assert [f["step"] for f in done["frames"]] == [0, 2, 4]
    assert all(torch.equal(x, y) for x, y in zip(whole.parameters(), again.parameters(), strict=True))


def test_pass_at_and_majority():
    correct = np.array([[True, False, False, False], [False, False, False, False], [True, True, True, True]])
    answers = [["5", "6", "6", None], ["1", "2", "3", "4"], ["9", "9", "9", "9"]]
    s = scores.Samples(correct, answers, np.ones_like(correct), np.zeros(correct.shape), ["5", "0", "9"])
    assert s.pass_at(1).tolist() == [0.25, 0.0, 1.0]
    assert s.pass_at(4).tolist() == [1.0, 0.0, 1.0]
    assert s.majority_at(4).tolist() == [0.0, 0.0, 1.0]  # "6" outvotes the right "5"
    assert s.majority_at(1).tolist() == [1.0, 0.0, 1.0]


def test_paired_bootstrap_covers_the_mean_and_cancels_shared_difficulty():
    rng = np.random.default_rng(0)
    difficulty = rng.random(400)
    before, after = difficulty, difficulty + 0.05
    change = scores.paired(before, after)
    assert change.low == pytest.approx(0.05) and change.high == pytest.approx(0.05)
    alone = scores.bootstrap(after)
    assert alone.low < alone.value < alone.high
