"""Chapter 14's run: from a GPT-2-style decoder to a Llama-style one, change by change (enwik8's prefix),
grouped-query attention's cache, stories260K, and the Hugging Face oracle.

The ablation ladder (14.1) is a tuple of ``(name, LlamaConfig)``: the same sizes, each rung changing one
field of the one before, and every rung trained with the same :class:`~fromscratch.training.TrainConfig`
(the same number of steps, so each sees the same bytes; a cosine schedule), once per seed::

    for seed in range(prof.ch14.seeds):
        for name, config in prof.ch14.ladder:
            train(Llama(config), batches, next_byte_loss, prof.ch14.train)

What a step of each rung costs is measured apart, in a timing pass (``timing_repeats`` steps, the median,
one thread), never read off the training runs, whose clock follows whatever else the machine is doing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models.llama import LlamaConfig, swiglu_hidden
from fromscratch.training import TrainConfig

Ladder = tuple[tuple[str, LlamaConfig], ...]  # (name, config) per rung of 14.1's ablation


@dataclass(frozen=True)
class DecodersRun:
    """The sizes of chapter 14's experiments."""

    data_bytes: int  # first bytes of enwik8 read: the 1,000,000-byte prefix, cut 90/5/5 (not standard)
    ladder: Ladder  # 14.1: GPT-2 style first, then one change per rung
    train: TrainConfig  # 14.1: every rung's training: the same steps, peak lr, warm-up, cosine decay
    seeds: int  # 14.1: runs of the whole ladder, each with its own initial draw and order of batches
    batch_size: int  # 14.1: sequences of `context` bytes per step
    eval_bytes: int  # 14.1: validation bytes scored for each rung's bits per byte
    timing_repeats: int  # 14.1: timed training steps per rung and per part (the median counts, one thread)
    gqa: LlamaConfig  # 14.2: the (untrained) decoder whose cache and decoding speed are measured
    gqa_kv_heads: tuple[int, ...]  # 14.2: the key/value head counts tried (1 = multi-query, h = multi-head)
    gqa_batch: int  # 14.2: sequences decoded side by side
    gqa_prompt: int  # 14.2: prompt tokens read into the cache first (the prefill, timed apart)
    gqa_new: int  # 14.2: tokens decoded one at a time with the cache (timed: these steps only)
    gqa_repeats: int  # 14.2: timed runs per setting, each from a copy of the filled cache (the median counts)
    sample_tokens: int  # 14.3: tokens stories260K samples with temperature and top-p
    wrong_eps: tuple[float, ...]  # 14.3: RMSNorm epsilons tried instead of llama2.c's 1e-5 (the greedy story)
    oracle: LlamaConfig  # 14.4: a random grouped-query Llama built by transformers and by us
    hub_tokens: int  # 14.4: tokens SmolLM2-135M generates (only where the Hugging Face Hub answers)


def ladder(emb: int, heads: int, depth: int, context: int, kv_heads: int) -> Ladder:
    """The six rungs of 14.1 at one size: GPT-2 style, + RMSNorm, + SwiGLU (as many weights as the MLP),
    + RoPE, + GQA (``kv_heads``), then no biases: a Llama. Byte-level (V = 256), tied output, no dropout."""
    gpt2 = LlamaConfig(
        vocab_size=256,
        context=context,
        emb=emb,
        heads=heads,
        kv_heads=heads,
        depth=depth,
        hidden=4 * emb,
        rope_theta=10_000.0,
        norm_kind="layer",
        feedforward="gelu_tanh",
        positions="learned",
        bias=True,
    )
    rms = replace(gpt2, norm_kind="rms")
    swiglu = replace(rms, feedforward="swiglu", hidden=swiglu_hidden(emb))  # 3 · e · 8e/3 = 8e² weights
    rope = replace(swiglu, positions="rope")
    gqa = replace(rope, kv_heads=kv_heads)
    llama = replace(gqa, bias=False)
    return (
        ("GPT-2 style", gpt2),
        ("+ RMSNorm", rms),
        ("+ SwiGLU", swiglu),
        ("+ RoPE", rope),
        (f"+ GQA ({heads}/{kv_heads})", gqa),
        ("no biases (Llama)", llama),
    )


# smoke: tiny models for a few steps each: proves the code runs
SMOKE = DecodersRun(
    data_bytes=1_000_000,
    ladder=ladder(emb=48, heads=4, depth=2, context=64, kv_heads=2),
    train=TrainConfig(steps=6, lr=3e-3, warmup_steps=2, schedule="cosine"),
    seeds=2,
    batch_size=8,
    eval_bytes=2_000,
    timing_repeats=3,
    # a byte-level Llama, as many key/value heads as query heads (gqa_kv_heads sets them), SwiGLU
    gqa=LlamaConfig(
        vocab_size=256, context=128, emb=64, heads=8, kv_heads=8, depth=2, hidden=swiglu_hidden(64)
    ),
    gqa_kv_heads=(1, 2, 4, 8),
    gqa_batch=2,
    gqa_prompt=32,
    gqa_new=8,
    gqa_repeats=1,
    sample_tokens=40,
    wrong_eps=(1e-2,),
    # the oracle, the same in every profile: 8 query heads sharing 2 key/value heads, a RoPE base of
    # 500,000 (Llama 3's), untied output
    oracle=LlamaConfig(
        vocab_size=128,
        context=64,
        emb=64,
        heads=8,
        kv_heads=2,
        depth=2,
        hidden=172,
        rope_theta=500_000.0,
        norm_eps=1e-5,
        tied=False,
    ),
    hub_tokens=20,
)
# cpu: six rungs of 400 steps, three seeds, on 2 cores (about 10 of the chapter's 15 minutes)
CPU = replace(
    SMOKE,
    ladder=ladder(emb=96, heads=8, depth=3, context=128, kv_heads=2),
    train=replace(SMOKE.train, steps=400, lr=2e-3, warmup_steps=40),
    seeds=3,
    batch_size=16,
    eval_bytes=50_000,
    timing_repeats=15,
    gqa=replace(SMOKE.gqa, context=1_024, emb=256, depth=4, hidden=swiglu_hidden(256)),
    gqa_batch=8,
    gqa_prompt=512,
    gqa_new=32,
    gqa_repeats=5,
    sample_tokens=200,
    wrong_eps=(1e-6, 1e-4, 1e-3, 1e-2),
    hub_tokens=40,
)
# gpu: a T4 (15 GB): six rungs of 600 steps, three seeds, at GPT-2-small-like width, batch 64 x 256
# bytes (its minutes on each card: book/running.md's plan, benchmarks/gpu/report.py)
GPU = replace(
    CPU,
    ladder=ladder(emb=384, heads=8, depth=6, context=256, kv_heads=2),
    train=replace(CPU.train, steps=600, lr=1e-3, warmup_steps=60),
    batch_size=64,
    eval_bytes=200_000,
    timing_repeats=20,
    gqa=replace(CPU.gqa, context=4_096, emb=768, heads=12, kv_heads=12, depth=12, hidden=swiglu_hidden(768)),
    gqa_kv_heads=(1, 2, 3, 4, 6, 12),
    gqa_batch=16,
    gqa_prompt=2_048,
    gqa_new=64,
    gqa_repeats=3,
    sample_tokens=400,
    hub_tokens=60,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
