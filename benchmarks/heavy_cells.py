"""The chapters' heavy cells that are not ``train`` calls, as units of work: timed by the GPU check, counted
by the GPU plan.

A cell is a list of :class:`Part` s. A part is one small unit of the cell's work, built at the profile's
sizes on a device (a model of the chapter's shape, random weights and tokens: the cost does not depend on
the values), and how many such units the cell runs. ``gpu_check.py`` times a unit on the GPU and
multiplies; ``gpu_plan.py`` counts a unit on the CPU (``step_counts.counted``) and prices it on each card.
Each part says which cell it stands for (``notebooks/NN`` cell numbers as of 2026-11-26).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from fromscratch.chapters import Profile


@dataclass(frozen=True)
class Part:
    """``unit()`` does one unit of a cell's work on the device it was built for; the cell runs ``units``."""

    name: str
    unit: Callable[[], object]
    units: float
    precision: str = "fp32"  # the cells below run outside `train`: no autocast


@dataclass(frozen=True)
class Cell:
    chapter: str
    name: str
    parts: Callable[[Profile, torch.device], list[Part]]


def _on(device: torch.device, build: Callable[[], torch.nn.Module]) -> torch.nn.Module:
    with torch.device(device):
        return build().eval()


def _forward(model, *inputs, **kwargs) -> Callable[[], object]:
    return partial(torch.no_grad()(model), *inputs, **kwargs)


def _cached_step(
    model, tokens: torch.Tensor, past: int, kv_heads: int, head_width: int
) -> Callable[[], object]:
    """One cached step of ``tokens`` (b, 1) after ``past`` positions: a cache filled with random keys and
    values of the right shape (what the prefill would leave), put back as it was before every call."""
    from fromscratch.attention import KVCache

    b, device = tokens.size(0), tokens.device
    cache = model.new_cache()
    shape = (b, kv_heads, past, head_width)
    filled = [(torch.randn(shape, device=device), torch.randn(shape, device=device)) for _ in cache]

    def step() -> object:
        for layer, (k, v) in zip(cache, filled, strict=True):
            layer.keys, layer.values = k, v  # each call appends one position: start again from `past`
        with torch.no_grad():
            return model(tokens, cache=cache)

    assert all(isinstance(layer, KVCache) for layer in cache)
    return step


def generator_eval(prof: Profile, device: torch.device) -> list[Part]:
    """07 c42 (inside train): bits per byte on eval_bytes every eval_every steps; 07 c51-c55: 6 samples."""
    from fromscratch.models import Generator

    size = prof.enwik8
    model = _on(device, lambda: Generator(size.model))
    t = size.model.context
    batch = torch.randint(0, 256, (size.batch_size, t), device=device)
    one = torch.randint(0, 256, (1, t), device=device)
    windows = size.eval_bytes // (t // 2)  # stride t/2: every byte scored once with at least t/2 context
    evaluations = (size.train.steps or 0) // (size.train.eval_every or 10**9) + 1
    return [
        Part("bits per byte", _forward(model, batch), evaluations * windows / size.batch_size),
        Part("6 samples, one byte a step", _forward(model, one), 6 * size.sample_bytes),
    ]


def minilm_embeddings(prof: Profile, device: torch.device) -> list[Part]:
    """10 c42, c45: MiniLM's mean vectors of the zero-shot and the probe reviews (batches of 32)."""
    from fromscratch.models.bert import BertConfig, BertEncoder

    run = prof.modern  # all-MiniLM-L6-v2's shape, as load_bert reads it from its config.json
    encoder = _on(device, lambda: BertEncoder(BertConfig(vocab_size=30_522, emb=384, heads=12, depth=6)))
    ids = torch.randint(1_000, 30_522, (32, run.probe_max_len), device=device)
    mask = torch.ones_like(ids, dtype=torch.bool)
    reviews = (run.probe_test or 25_000) * 2 + (run.probe_train or 25_000)
    return [Part("a batch of 32 reviews", _forward(encoder, ids, mask), reviews / 32)]


def kv_cache(prof: Profile, device: torch.device) -> list[Part]:
    """11 c9: greedy generation of kv_new bytes per prompt length, with and without the KV cache."""
    from fromscratch.models import LongContextGenerator

    size = prof.long_context
    model = _on(device, lambda: LongContextGenerator(size.model, context=max(size.kv_prompts) + size.kv_new))
    calls = size.kv_repeats + 1  # time_call: one warm-up, then the repeats
    heads, width = size.model.heads, size.model.emb // size.model.heads
    token = torch.randint(0, 256, (1, 1), device=device)
    parts = []
    for n in size.kv_prompts:
        prompt = torch.randint(0, 256, (1, n), device=device)
        parts.append(
            Part(f"t = {n}, no cache: the whole prefix", _forward(model, prompt), calls * size.kv_new)
        )
        parts.append(Part(f"t = {n}, cache: the prefill", _forward(model, prompt), calls))
        step = _cached_step(model, token, n, heads, width)
        parts.append(Part(f"t = {n}, cache: one token", step, calls * size.kv_new))
    return parts


def gqa_decoding(prof: Profile, device: torch.device) -> list[Part]:
    """14 c20: for each key/value head count, a prefill of the batch's prompts and gqa_new cached steps."""
    from fromscratch.models import Llama

    size, config = prof.decoders, prof.decoders.gqa
    calls = size.gqa_repeats + 2  # the cache-size prefill, time_call's warm-up, the repeats
    parts = []
    for kv_heads in sorted(size.gqa_kv_heads):
        model = _on(device, lambda kv_heads=kv_heads: Llama(config, kv_heads=kv_heads))
        one = torch.randint(0, config.vocab_size, (1, size.gqa_prompt), device=device)
        parts.append(
            Part(f"kv {kv_heads}: prefill, per prompt", _forward(model, one), calls * size.gqa_batch)
        )
        token = torch.randint(0, config.vocab_size, (size.gqa_batch, 1), device=device)
        step = _cached_step(model, token, size.gqa_prompt, kv_heads, config.emb // config.heads)
        parts.append(Part(f"kv {kv_heads}: a cached token for the batch", step, calls * size.gqa_new))
    return parts


def translation_decoding(prof: Profile, device: torch.device) -> list[Part]:
    """09 c23, c37: greedy (both GRUs, the transformer) and beam 5 (the transformer) over the test pairs,
    in batches of 64; the in-train greedy BLEU on val_pairs every eval_every steps (three runs)."""
    from fromscratch.generate import beam_search
    from fromscratch.models import EncoderDecoder, RNNSeq2Seq

    size = prof.translation
    src = torch.randint(5, size.vocab_size, (64, 16), device=device)  # ~16 BPE tokens per sentence
    batches = -(-(size.test_pairs or 1_000) // 64)
    # evaluations while training: a budget in minutes buys about 10 steps a second on a T4 (the time model's
    # GRU runs: 10,300 and 6,100 steps in 8 minutes, book/running.md)
    runs = (size.rnn_train, size.rnn_train, size.train)
    evaluations = sum((t.steps or 600 * t.minutes) / (t.eval_every or 10**9) for t in runs)
    in_train = evaluations * -(-size.val_pairs // 64)
    parts = []
    for name, build in (
        ("GRU", lambda: RNNSeq2Seq(size.rnn)),
        ("GRU + attention", lambda: RNNSeq2Seq(size.rnn_attention)),
        ("transformer", lambda: EncoderDecoder(size.model)),
    ):
        model = _on(device, build)
        decode = torch.no_grad()(partial(beam_search, model, src, src != 0, beam_size=1))
        parts.append(Part(f"{name}: greedy, a batch of 64", decode, batches + in_train / 3))
    beam = torch.no_grad()(partial(beam_search, model, src, src != 0, beam_size=size.beam_size))
    parts.append(Part(f"transformer: beam {size.beam_size}, a batch of 64", beam, batches))
    return parts


def imdb_test(prof: Profile, device: torch.device) -> list[Part]:
    """06 c28, c44 and 08 c34: test accuracy over the 25,000 test reviews (batches 4x the training one)."""
    from fromscratch.models import Classifier

    size = prof.imdb
    b, t = 4 * size.batch_size, size.model.max_len
    tokens = torch.randint(3, size.model.vocab_size, (b, t), device=device)
    mask = torch.ones_like(tokens, dtype=torch.bool)
    model = _on(device, lambda: Classifier(size.model))
    reviews = size.test_reviews or 25_000
    return [Part("06: a test batch, 3 models", _forward(model, tokens, padding_mask=mask), 3 * reviews / b)]


CELLS = [
    Cell("07", "7.5-7.7 evaluation and sampling", generator_eval),
    Cell("06", "6.5 test accuracy", imdb_test),
    Cell("09", "9.6 decoding (test BLEU, in-train BLEU)", translation_decoding),
    Cell("10", "10.6 MiniLM embeddings", minilm_embeddings),
    Cell("11", "11.3 KV-cache timing", kv_cache),
    Cell("14", "14.2 GQA decoding", gqa_decoding),
]
