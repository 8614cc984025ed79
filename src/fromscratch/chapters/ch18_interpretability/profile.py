"""Chapter 18's run: induction heads forming in a two-layer attention-only transformer (18.2), every head of
real models scored and ablated (18.3), activation patching (18.4), probes and steering (18.5), the toy model
of superposition and sparse autoencoders (18.6).

Every size is written as a difference from ``smoke`` (``CPU = replace(SMOKE, ...)``)::

    model = AttentionOnly(prof.ch18.toy)
    sweep = [toy_loss(...) for sparsity in prof.ch18.sparsities]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.chapters.ch18_interpretability.toy import AttentionOnlyConfig


@dataclass(frozen=True)
class InterpRun:
    """The sizes of chapter 18's experiments."""

    toy: AttentionOnlyConfig  # 18.1-18.2: the attention-only transformer (the same in every profile)
    steps: int  # 18.2: its optimiser steps (AdamW, constant learning rate)
    batch_size: int  # 18.2: sequences per step
    lr: float  # 18.2: the learning rate
    min_period: int  # 18.2: the shortest repeated segment of a training sequence (the longest: context / 2)
    score_every: int  # 18.2: steps between two measurements of the losses and the head scores
    eval_batch: int  # 18.2, 18.3: repeated sequences the scores and losses are averaged over
    large: str  # 18.3-18.4: "SmolLM2-135M-Instruct" (30 x 9 heads), or "stories260K" again in smoke
    period: int  # 18.3: tokens of random text before they repeat, on the real models
    real_batch: int  # 18.3: repeated sequences the real models are scored on
    top_heads: int  # 18.3: the induction heads ablated together
    lens_prompts: int  # 18.3: prompts the logit lens reads
    probe_words: int  # 18.5: each IMDb review cut to this many words, head and tail (chapter 15's too)
    probe_train: int  # 18.5: labelled reviews each layer's probe is fitted on (chapter 15's largest N)
    probe_test: int  # 18.5: balanced test reviews it is scored on (chapter 15's imdb_test)
    probe_decay: float  # 18.5: the probes' and the word reader's weight decay (on standardised features)
    reader_reviews: int  # 18.5: IMDb training reviews the word reader of the steered text is fitted on
    reader_vocab: int  # 18.5: the words it reads (the most frequent in those reviews)
    steer_samples: int  # 18.5: continuations sampled per prompt and steering strength
    steer_tokens: int  # 18.5: tokens of each continuation
    steer_strengths: tuple[float, ...]  # 18.5: the push, in standard deviations of the reviews along it
    sparsities: tuple[
        float, ...
    ]  # 18.6: the toy model's phase diagram, its rows (probability a feature is off)
    importances: tuple[float, ...]  # 18.6: its columns (the weight of the last feature against the first)
    toy_steps: int  # 18.6: Adam steps of each toy model
    sae_steps: int  # 18.6: steps of the SAE on planted features
    sae_inputs: int  # 18.6: planted activations it trains on
    story_tokens: int  # 18.6: tokens of stories260K's residual stream the second SAE trains on
    story_steps: int  # 18.6: that SAE's steps
    story_latents: int  # 18.6: its dictionary's size (stories260K's stream is 64 wide)
    story_k: int  # 18.6: its codes on per token (top-k)


# smoke: a few dozen steps of everything, stories260K standing in for SmolLM2: proves the code runs
SMOKE = InterpRun(
    toy=AttentionOnlyConfig(vocab_size=64, context=64, emb=32, heads=2, depth=2),
    steps=40,
    batch_size=32,
    lr=1e-3,
    min_period=6,
    score_every=20,
    eval_batch=8,
    large="stories260K",
    period=32,
    real_batch=4,
    top_heads=2,
    lens_prompts=2,
    probe_words=24,
    probe_train=16,
    probe_test=16,
    probe_decay=1e-2,
    reader_reviews=64,
    reader_vocab=500,
    steer_samples=2,
    steer_tokens=8,
    steer_strengths=(-8.0, 0.0, 8.0),
    sparsities=(0.0, 0.9),
    importances=(1.0, 0.1),
    toy_steps=100,
    sae_steps=200,
    sae_inputs=4_000,
    story_tokens=2_000,
    story_steps=100,
    story_latents=256,
    story_k=8,
)
# cpu: 3,000 steps of the toy (the phase change comes near step 1,000 on a 2-core machine, about a minute),
# SmolLM2 in our Llama, 96 steered continuations per strength (at 32 the word reader's intervals overlapped),
# a 3 x 3 phase diagram, 40,000 tokens of stories for the second SAE: 2.9 min alone on 2 cores (2026-12-02)
CPU = replace(
    SMOKE,
    steps=3_000,
    score_every=100,
    eval_batch=64,
    large="SmolLM2-135M-Instruct",
    period=48,
    real_batch=16,
    top_heads=3,
    lens_prompts=3,
    probe_words=48,
    probe_train=128,
    probe_test=200,
    reader_reviews=2_000,
    reader_vocab=5_000,
    steer_samples=24,
    steer_tokens=24,
    steer_strengths=(-16.0, -8.0, 0.0, 8.0, 16.0),
    sparsities=(0.0, 0.7, 0.95),
    importances=(1.0, 0.3, 0.1),
    toy_steps=1_000,
    sae_steps=2_000,
    sae_inputs=20_000,
    story_tokens=40_000,
    story_steps=2_000,
)
# gpu (planned, never measured: no GPU was lent to this chapter): a finer phase diagram, a larger SAE
GPU = replace(
    CPU,
    eval_batch=256,
    real_batch=64,
    sparsities=(0.0, 0.5, 0.7, 0.9, 0.95, 0.99),
    importances=(1.0, 0.5, 0.3, 0.1),
    toy_steps=3_000,
    story_tokens=200_000,
    story_steps=10_000,
    story_latents=512,
)
RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}

__all__ = ["CPU", "GPU", "RUNS", "SMOKE", "InterpRun"]
