"""The chapters' heavy cells that are not training, for ``gpu_check.py``: each once, at its profile's size."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from fromscratch.profiles import Profile, get_profile


@dataclass(frozen=True)
class Cell:
    """One heavy cell: ``work(prof, device)`` returns at least ``seconds_at_gpu_size`` and ``summary``."""

    chapter: str
    name: str
    work: Callable[[Profile, torch.device], dict[str, Any]]

    def measure(self, profile: str, device: torch.device) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result = self.work(get_profile(profile), device)
        except Exception as error:
            traceback.print_exc()
            result = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}
        result.update(chapter=self.chapter, cell=self.name, wall_seconds=time.perf_counter() - started)
        return result


CELLS: list[Cell] = []


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _seconds(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds of one call of ``fn``, the device synchronised (the caller warms up first)."""
    _sync(device)
    started = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - started


@torch.no_grad()
def minilm_embeddings(prof: Profile, device: torch.device) -> dict[str, Any]:
    """10.6: MiniLM's mean vectors of the zero-shot and probe reviews (random weights of its shape)."""
    from fromscratch.models.bert import BertConfig, BertEncoder

    run = prof.modern
    with torch.device(device):  # all-MiniLM-L6-v2's shape, as load_bert reads it from its config.json
        encoder = BertEncoder(BertConfig(vocab_size=30_522, emb=384, heads=12, depth=6, max_len=512)).eval()
    n = (run.probe_test or 25_000) + (run.probe_train or 25_000) + (run.probe_test or 25_000)
    ids = torch.randint(1_000, 30_522, (32, run.probe_max_len), device=device)
    mask = torch.ones_like(ids, dtype=torch.bool)
    encoder(ids, mask)  # warm-up
    batches = 5
    one = _seconds(lambda: [encoder(ids, mask).mean(1).cpu() for _ in range(batches)], device) / batches
    total = one * n / 32
    return {
        "seconds_at_gpu_size": total,
        "summary": f"{n:,} reviews x {run.probe_max_len}: {total:.1f} s (fp32)",
    }


@torch.no_grad()
def kv_cache_timing(prof: Profile, device: torch.device) -> dict[str, Any]:
    """11.3: generation with and without the KV cache at every prompt length (once each, then scaled)."""
    from fromscratch.generate import generate_tokens
    from fromscratch.models import Generator

    size = prof.long_context
    with torch.device(device):
        model = Generator(size.model, context=max(size.kv_prompts) + size.kv_new).eval()
    total, parts = 0.0, []
    for n in size.kv_prompts:
        tokens = torch.randint(0, 256, (1, n))
        for use_cache in (True, False):
            call = partial(
                generate_tokens,
                model,
                tokens,
                size.kv_new,
                context=model.context,
                temperature=0,
                use_cache=use_cache,
            )
            if n == size.kv_prompts[0]:
                call()  # warm-up
            seconds = _seconds(call, device)
            total += seconds * (size.kv_repeats + 1)
            parts.append(f"{n}{'+cache' if use_cache else ''} {1000 * seconds / size.kv_new:.2f} ms/token")
    return {"seconds_at_gpu_size": total, "summary": f"{total:.1f} s; " + ", ".join(parts)}


@torch.no_grad()
def gqa_decoding(prof: Profile, device: torch.device) -> dict[str, Any]:
    """14.2: prefill a batch of prompts and decode, for every key/value head count (once each, scaled)."""
    from fromscratch.generate import generate_tokens
    from fromscratch.models import Llama

    size, config = prof.decoders, prof.decoders.gqa
    prompt = torch.randint(0, config.vocab_size, (size.gqa_batch, size.gqa_prompt))
    total, parts = 0.0, []
    for kv_heads in sorted(size.gqa_kv_heads):
        with torch.device(device):
            model = Llama(config, kv_heads=kv_heads).eval()
        call = lambda model=model: generate_tokens(  # noqa: E731
            model, prompt, size.gqa_new, context=config.context, temperature=0
        )
        call()  # warm-up
        seconds = _seconds(call, device)
        total += seconds * (size.gqa_repeats + 2)  # the prefill of the cache-size cell, the warm-up, repeats
        parts.append(f"kv {kv_heads}: {seconds:.2f} s")
        del model
    return {"seconds_at_gpu_size": total, "summary": f"{total:.1f} s; " + ", ".join(parts)}


@torch.no_grad()
def translation_decoding(prof: Profile, device: torch.device) -> dict[str, Any]:
    """9.6: greedy (both GRUs, the transformer) and beam-5 (the transformer) over the 1,000 test pairs."""
    from fromscratch.generate import beam_search
    from fromscratch.models import EncoderDecoder, RNNSeq2Seq

    size = prof.translation
    batches = -(-(size.test_pairs or 1_000) // 64)
    src = torch.randint(5, size.vocab_size, (64, 16), device=device)  # ~16 BPE tokens per sentence
    total, parts = 0.0, []
    with torch.device(device):
        models = {"gru": RNNSeq2Seq(size.rnn).eval(), "gru+attention": RNNSeq2Seq(size.rnn_attention).eval()}
        models["transformer"] = EncoderDecoder(size.model).eval()
    for name, beam in (("gru", 1), ("gru+attention", 1), ("transformer", 1), ("transformer", size.beam_size)):
        call = lambda m=models[name], beam=beam: beam_search(m, src, src != 0, beam_size=beam)  # noqa: E731
        call()  # warm-up
        seconds = _seconds(call, device)  # random weights never stop early: an upper bound
        total += seconds * batches
        parts.append(f"{name} beam {beam}: {seconds * batches:.1f} s")
    return {"seconds_at_gpu_size": total, "summary": f"{total:.1f} s; " + ", ".join(parts)}


@torch.no_grad()
def sampling(prof: Profile, device: torch.device) -> dict[str, Any]:
    """7.7: the six samples of ``sample_bytes`` from the generator (one timed, scaled)."""
    from fromscratch.generate import generate_tokens
    from fromscratch.models import Generator

    size = prof.enwik8
    with torch.device(device):
        model = Generator(size.model).eval()
    seed = torch.randint(0, 256, (1, size.model.context))
    call = partial(
        generate_tokens, model, seed, size.sample_bytes, context=size.model.context, temperature=1.0
    )
    generate_tokens(model, seed, 8, context=size.model.context)  # warm-up
    seconds = _seconds(call, device)
    return {
        "seconds_at_gpu_size": 6 * seconds,
        "summary": f"6 x {size.sample_bytes} bytes: {6 * seconds:.1f} s",
    }


def step_times(prof: Profile, device: torch.device) -> dict[str, Any]:
    """8.1: one training step of each model at the longest length (the table times every length)."""
    from fromscratch.models import SequenceClassifier
    from fromscratch.recipes.sequence_compare import random_batch, step_seconds

    run = prof.sequence
    t = max(run.timing_lengths)
    timed = run.configs(vocab_size=run.timing_vocab, max_len=t)
    total, parts = 0.0, []
    for name in (n for n in timed if n != "bag"):
        with torch.device(device):
            model = SequenceClassifier(timed[name])
        seconds = step_seconds(
            model, random_batch(run.timing_batch, t, run.timing_vocab), repeats=1, device=device
        )
        total += (
            2 * seconds * (run.timing_repeats + 1)
        )  # every shorter length together: at most as much again
        parts.append(f"{name} {1000 * seconds:.0f} ms")
    return {"seconds_at_gpu_size": total, "summary": f"{total:.1f} s; at t = {t}: " + ", ".join(parts)}


CELLS += [
    Cell("07", "7.7 sampling", sampling),
    Cell("08", "8.1 step times", step_times),
    Cell("09", "9.6 test decoding", translation_decoding),
    Cell("10", "10.6 MiniLM embeddings", minilm_embeddings),
    Cell("11", "11.3 KV-cache timing", kv_cache_timing),
    Cell("14", "14.2 GQA decoding", gqa_decoding),
]
