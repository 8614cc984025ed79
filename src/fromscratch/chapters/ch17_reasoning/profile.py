"""Chapter 17's run: policy gradients on a tabular policy (17.1), then the course's Llama taught 3-digit
addition by imitation (SFT on worked solutions) and by GRPO, scored on held-out problems; then
SmolLM2-135M-Instruct with LoRA, before and after GRPO on 2-digit sums (17.6).

Every size is written as a difference from ``smoke`` (``CPU = replace(SMOKE, ...)``)::

    train(Llama(prof.ch17.model), sft_batches(...), assistant_loss, prof.ch17.sft)
    run_grpo(policy, reference, tokenizer, pool, prof.ch17.rl, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.chapters.ch17_reasoning.tasks import Pieces
from fromscratch.models.llama import LlamaConfig, swiglu_hidden
from fromscratch.training import TrainConfig

VOCAB = Pieces().vocab_size


@dataclass(frozen=True)
class GrpoRun:
    """The sizes of one GRPO run."""

    steps: int  # optimiser steps of sampling, rewarding and updating
    problems: int  # g: training problems per step
    group: int  # n: samples per problem (the group its advantages are computed in)
    updates: int  # gradient steps on each batch of samples (the first on-policy; the clip acts after)
    lr: float  # AdamW's learning rate, constant
    clip: float  # the ratio's clip (PPO's and GRPO's 0.2)
    beta: float  # the KL penalty's weight, to the SFT model (DeepSeekMath: 0.04)
    scale: bool  # divide the advantages by the group's std (GRPO) or not (Dr. GRPO)
    temperature: float  # the sampling temperature of training
    max_tokens: int  # the longest response sampled (a worked 3-digit addition is 42 to 50 tokens)
    grad_clip: float  # the gradient norm is clipped to this
    frame_every: int  # steps between the samples kept for the interactive figure
    checkpoint_every: int  # steps between checkpoints (a resumed run goes on from the last)
    seed: int  # the draws of problems and samples


@dataclass(frozen=True)
class ChatRun:
    """The sizes of 17.6: a real chat model with LoRA, zero-shot and after GRPO."""

    model: str  # "SmolLM2-135M-Instruct" (the registered GGUF, read as in chapter 15) or "tiny"
    tiny: LlamaConfig  # the stand-in's sizes (its vocabulary: 256 bytes and ChatML's 3 specials)
    digits: int  # digits of each operand
    train_problems: int  # training problems GRPO draws from
    held_out: int  # held-out problems scored before and after
    lora: dict  # add_lora's targets, rank and alpha (chapter 15's: queries and values, r 8, alpha 16)
    rl: GrpoRun  # GRPO on the LoRA weights, KL to the model as read
    eval_samples: int  # samples per held-out problem (pass@k for k up to this)
    eval_batch: int  # problems per call to generate when scoring


@dataclass(frozen=True)
class ReasoningRun:
    """The sizes of chapter 17's experiments."""

    group_sizes: tuple[int, ...]  # 17.1: n, the group sizes whose estimators are compared
    draws: int  # 17.1: groups drawn per size to measure each estimator's bias and variance
    digits: int  # 17.2: digits of each operand (the same in every profile: checked cells print a problem)
    train_problems: int  # 17.2: training problems (SFT and GRPO draw from them)
    held_out: int  # 17.2: held-out problems every score is measured on
    model: LlamaConfig  # 17.3: the policy
    sft: TrainConfig  # 17.3: its imitation: steps, lr, warm-up (kept short: the model is left imperfect)
    batch_size: int  # 17.3: worked solutions per SFT step
    rl: GrpoRun  # 17.4: GRPO
    eval_samples: int  # 17.5: samples per held-out problem (pass@k and majority for k up to this)
    eval_batch: int  # 17.5: problems per call to generate when scoring
    frames: int  # 17.5: snapshots shown by the interactive figure, at most
    chat: ChatRun  # 17.6: SmolLM2-135M-Instruct with LoRA


def _model(emb: int, depth: int, heads: int) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=VOCAB,
        context=80,
        emb=emb,
        heads=heads,
        kv_heads=heads // 2,
        depth=depth,
        hidden=swiglu_hidden(emb),
        rope_theta=10_000.0,
    )


_LORA = {"targets": ("to_queries", "to_values"), "rank": 8, "alpha": 16.0}
# smoke: a 1-block random stand-in over bytes, one GRPO step of 2 samples of 4 tokens
CHAT_SMOKE = ChatRun(
    model="tiny",
    tiny=LlamaConfig(vocab_size=259, context=512, emb=32, heads=4, kv_heads=2, depth=1, hidden=64),
    digits=2,
    train_problems=20,
    held_out=2,
    lora=_LORA,
    rl=GrpoRun(
        steps=1,
        problems=1,
        group=2,
        updates=2,
        lr=1e-3,  # LoRA's (chapter 15's): its B starts at zero and moves by about lr a step
        clip=0.2,
        beta=0.04,
        scale=True,
        temperature=0.7,
        max_tokens=4,
        grad_clip=1.0,
        frame_every=1,
        checkpoint_every=1,
        seed=0,
    ),
    eval_samples=2,
    eval_batch=2,
)
# smoke: a tiny Llama, a few steps of each: proves the code runs (seconds)
SMOKE = ReasoningRun(
    group_sizes=(2, 4, 8),
    draws=2_000,
    digits=3,
    train_problems=400,
    held_out=16,
    model=_model(emb=32, depth=1, heads=4),
    sft=TrainConfig(steps=20, lr=2e-3, warmup_steps=2, decay=False, progress=False),
    batch_size=16,
    rl=GrpoRun(
        steps=3,
        problems=2,
        group=8,
        updates=2,
        lr=1e-4,
        clip=0.2,
        beta=0.04,
        scale=True,
        temperature=1.0,
        max_tokens=56,
        grad_clip=1.0,
        frame_every=1,
        checkpoint_every=2,
        seed=0,
    ),
    eval_samples=8,
    eval_batch=16,
    frames=4,
    chat=CHAT_SMOKE,
)
# cpu: a 2-block Llama (emb 64) imitates 500 steps of worked additions, stopped while it is right on about a
# third of the held-out problems (tuned on a shared 2-core machine); then 300 GRPO steps of 8 problems x 8
# samples at lr 1e-4 (3e-4 wrecked a more confident SFT model within ten steps: Adam moves every weight by
# about lr per step, whatever the size of the gradient)
CPU = replace(
    SMOKE,
    group_sizes=(2, 4, 8, 16, 32, 64),
    draws=20_000,
    train_problems=20_000,
    held_out=300,
    model=_model(emb=64, depth=2, heads=4),
    sft=TrainConfig(steps=500, lr=2e-3, warmup_steps=40, decay=False),
    batch_size=32,
    rl=replace(SMOKE.rl, steps=300, problems=8, frame_every=30, checkpoint_every=30),
    eval_samples=16,
    eval_batch=32,
    frames=11,
    # SmolLM2 on 2 shared cores: 24 s of CPU (one thread) for 16 rows of 24 tokens after its 110-token
    # prompt, measured; 6 steps of one problem x 8 samples, 40 held-out problems x 4 samples before and
    # after (planned at about 10 minutes; this section's cpu run is not yet executed)
    chat=replace(
        CHAT_SMOKE,
        model="SmolLM2-135M-Instruct",
        train_problems=2_000,
        held_out=40,
        rl=replace(
            CHAT_SMOKE.rl, steps=6, problems=1, group=8, max_tokens=24, frame_every=6, checkpoint_every=2
        ),
        eval_samples=4,
        eval_batch=10,
    ),
)
# gpu (planned, never measured: no GPU was lent to this chapter): 1,000 held-out problems, 32 samples each,
# 600 steps of 32 problems
GPU = replace(
    CPU,
    held_out=1_000,
    rl=replace(CPU.rl, steps=600, problems=32, frame_every=60, checkpoint_every=60),
    eval_samples=32,
    eval_batch=128,
    chat=replace(
        CPU.chat,
        held_out=500,
        rl=replace(CPU.chat.rl, steps=200, problems=16, group=16, frame_every=20, checkpoint_every=20),
        eval_samples=16,
        eval_batch=125,
    ),
)
RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["CHAT_SMOKE", "CPU", "GPU", "RUNS", "SMOKE", "ChatRun", "GrpoRun", "ReasoningRun"]
