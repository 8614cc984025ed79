"""From a base language model to one that answers in ChatML: SFT of stories260K (chapter 15).

llama2.c's stories260K (chapter 14) is a *base* model: it continues children's stories and has never seen a
conversation; its 512-token vocabulary has no ``<|im_start|>`` or ``<|im_end|>``. The recipe that made
SmolLM2-Instruct from SmolLM2, at toy scale:

1. **new tokens**: :class:`ChatPieces` gives the tokeniser ChatML's two special tokens (ids 512 and 513) and
   :func:`with_chat_tokens` gives the model two more embedding rows (the mean of the others);
2. **data**: :func:`story_requests` writes requests ("Write a short story about Tom and a kite.") and
   answers that start with the request's name and thing and go on in the base model's own words (sampled
   from it), so what SFT teaches is the *format*: where a reply starts, what it answers, where it stops;
3. **SFT** of every weight with the assistant-only loss (:func:`~fromscratch.training.sft.assistant_loss`),
   as SmolLM2-Instruct was made (full fine-tuning, not LoRA);
4. :func:`follows`: on requests whose (name, thing) pair was never trained on, does a reply end its turn
   with ``<|im_end|>``, and does it name the person and the thing asked for? Every trained answer opens
   with the same sentence, so naming both measures copying two slots into a learned opening; a
   :data:`FREE_FORM` request (:func:`answers`) shows what the model does outside that template.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from fromscratch.chapters.ch15_assistant.assistant import prompt_ids
from fromscratch.data.instructions import Example
from fromscratch.generate import generate
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.chat import IM_END, IM_START
from fromscratch.tokenizers.sentencepiece import SentencePieceBPE
from fromscratch.training.sft import assistant_loss
from fromscratch.utils import evaluating

NAMES = ("Lily", "Tom", "Ben", "Sue", "Max", "Mia", "Sam", "Anna", "Tim", "Lucy", "Jack", "Zoe")
THINGS = ("ball", "dog", "cat", "kite", "car", "doll", "boat", "cake", "hat", "bird", "tree", "box")
KINDS = {"Lily": "girl", "Sue": "girl", "Mia": "girl", "Anna": "girl", "Lucy": "girl", "Zoe": "girl"}


class ChatPieces:
    """A sentencepiece tokeniser (``SentencePieceBPE``) plus ChatML's special tokens after its last id, with
    the ``special``/``encode(text, allowed_special=...)``/``decode`` that ``encode_chat`` and ``ChatBatches``
    need. Each piece of text between special tokens is encoded without BOS."""

    def __init__(self, pieces: SentencePieceBPE) -> None:
        self.pieces = pieces
        self.special = {IM_START: len(pieces), IM_END: len(pieces) + 1}
        self._split = re.compile("(" + "|".join(map(re.escape, self.special)) + ")")

    def __len__(self) -> int:
        return len(self.pieces) + len(self.special)

    def encode(self, text: str, *, allowed_special=()) -> list[int]:
        """Ids of ``text``; with ``allowed_special="all"``, ChatML's special tokens one id each."""
        parts = self._split.split(text) if allowed_special else [text]
        ids: list[int] = []
        for part in parts:
            ids += [self.special[part]] if part in self.special else self.pieces.encode(part, bos=False)
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, special tokens written out."""
        names = {i: text for text, i in self.special.items()}
        out, run = [], []
        for i in [int(i) for i in ids] + [-1]:
            if i in names or i == -1:
                out.append(self.pieces.decode(run))
                run = []
                out.append(names.get(i, ""))
            else:
                run.append(i)
        return "".join(out)


def with_chat_tokens(model: Llama, new: int = 2) -> Llama:
    """A copy of ``model`` with ``new`` more token ids, their embedding rows (and, tied, output rows) the mean
    of the existing ones: the base model's own predictions are unchanged, the new tokens neutral."""
    c = model.config
    bigger = Llama(replace(c, vocab_size=c.vocab_size + new))
    state = model.state_dict()
    rows = state["token_embedding.weight"]  # (V, e)
    state["token_embedding.weight"] = torch.cat([rows, rows.mean(0, keepdim=True).expand(new, -1)])
    if c.tied:
        state["to_logits.weight"] = state["token_embedding.weight"]
    else:
        state["to_logits.weight"] = torch.cat([state["to_logits.weight"], rows.new_zeros(new, c.emb)])
    bigger.load_state_dict(state)
    return bigger.to(rows.device).eval()


def request(name: str, thing: str) -> str:
    return f"Write a short story about {name} and a {thing}."


# a request outside the trained template: no name, no thing, another wording (nothing to copy)
FREE_FORM = "Tell me what happens on a rainy day at the park."


def held_out_pairs() -> list[tuple[str, str]]:
    """The (name, thing) pairs never trained on: every name and every thing appears in training, with
    other partners (one pair in six: ``(i + j) % 6 == 0``)."""
    return [(n, t) for i, n in enumerate(NAMES) for j, t in enumerate(THINGS) if (i + j) % 6 == 0]


def training_pairs(n: int, *, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (name, thing) pairs drawn (seeded, with repeats) from those not held out."""
    held = set(held_out_pairs())
    pairs = [(a, b) for a in NAMES for b in THINGS if (a, b) not in held]
    rng = torch.Generator().manual_seed(seed)
    return [pairs[int(i)] for i in torch.randint(len(pairs), (n,), generator=rng)]


def _continue(model: Llama, prompts: Sequence[list[int]], **options) -> list[list[int]]:
    """Each prompt's continuation by ``generate`` (``options``), prompts of one length in one batch."""
    out: list[list[int]] = [[] for _ in prompts]
    by_length: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_length.setdefault(len(p), []).append(i)
    for length, rows in by_length.items():
        new = generate(model, torch.tensor([prompts[i] for i in rows]), **options)[:, length:]  # (b, n)
        for i, row in zip(rows, new.tolist(), strict=True):
            out[i] = row
    return out


def story_requests(
    base: Llama, pieces: SentencePieceBPE, pairs: Sequence[tuple[str, str]], *, tokens: int, seed: int = 0
) -> list[Example]:
    """One request/answer conversation per (name, thing) pair: the answer opens with the pair and goes on
    with ``tokens`` tokens sampled from ``base`` (temperature 0.8, seeded), cut after its last full stop."""
    openings = [
        f"Once upon a time, there was a {KINDS.get(name, 'boy')} named {name}. {name} had a {thing}."
        for name, thing in pairs
    ]
    prompts = [pieces.encode(text) for text in openings]  # BOS first
    more = _continue(base, prompts, steps=tokens, temperature=0.8, seed=seed)
    out = []
    for (name, thing), prompt, new in zip(pairs, prompts, more, strict=True):
        story = pieces.decode(prompt + new)
        user = {"role": "user", "content": request(name, thing)}
        out.append(Example("story", (user, {"role": "assistant", "content": story[: story.rfind(".") + 1]})))
    return out


def replies(
    model: Llama, tokenizer: ChatPieces, pairs: Sequence[tuple[str, str]], *, max_new: int
) -> list[tuple[str, bool]]:
    """Greedy replies to the requests of ``pairs``: ``(text, ended with <|im_end|>)`` each."""
    return answers(model, tokenizer, [request(*pair) for pair in pairs], max_new=max_new)


def answers(
    model: Llama, tokenizer: ChatPieces, requests: Sequence[str], *, max_new: int
) -> list[tuple[str, bool]]:
    """Greedy replies to any ``requests`` (a user turn each): ``(text, ended with <|im_end|>)`` each."""
    end = tokenizer.special[IM_END]
    prompts = [
        prompt_ids(tokenizer, [{"role": "user", "content": text}], default_system=None) for text in requests
    ]
    out = []
    for new in _continue(model, prompts, steps=max_new, temperature=0.0, stop=(end,)):
        stopped = end in new
        new = new[: new.index(end)] if stopped else new
        out.append((tokenizer.decode(new).strip(), stopped))
    return out


@torch.no_grad()
def held_out_loss(model: Llama, batches) -> float:
    """The assistant-only loss (nats a token) of ``model`` over every batch of ``batches``, averaged."""
    device = next(model.parameters()).device
    with evaluating(model):
        losses = [float(assistant_loss(model, {k: v.to(device) for k, v in b.items()})) for b in batches]
    return sum(losses) / len(losses)


@dataclass(frozen=True)
class Following:
    """What replies to held-out requests did: shares of ``n`` replies."""

    n: int
    stopped: float  # ended the turn with <|im_end|> within the token budget
    named: float  # wrote the requested name
    thing: float  # wrote the requested thing
    both: float  # both the name and the thing


def follows(replies: Sequence[tuple[str, bool]], pairs: Sequence[tuple[str, str]]) -> Following:
    """Score ``replies`` (text, whether it ended with ``<|im_end|>``) against the requested ``pairs``."""
    named = [name in text for (text, _), (name, _) in zip(replies, pairs, strict=True)]
    thing = [re.search(rf"\b{t}", text) is not None for (text, _), (_, t) in zip(replies, pairs, strict=True)]
    stopped = [s for _, s in replies]
    both = [a and b for a, b in zip(named, thing, strict=True)]
    n = len(replies)
    return Following(n, sum(stopped) / n, sum(named) / n, sum(thing) / n, sum(both) / n)


__all__ = [
    "FREE_FORM",
    "KINDS",
    "NAMES",
    "THINGS",
    "ChatPieces",
    "Following",
    "answers",
    "follows",
    "held_out_loss",
    "held_out_pairs",
    "replies",
    "training_pairs",
    "request",
    "story_requests",
    "with_chat_tokens",
]
