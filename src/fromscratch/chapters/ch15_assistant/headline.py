"""Chapter 15's record: every number its computed prose reads, flat, for ``results.record`` (chapter 15).

The chapter's ``cpu`` run writes them to ``results.json`` at its end, so that a page that quotes the run
(``benchmarks/README.md``, ``book/instructors.md``) and a reader checking a sentence find the number
itself: 15.3's before/after shares, 15.4's step cost and write-back, 15.5's preferences, and 15.6's arms
with each run's accuracy, the share answered ``positive``, a prompt's mean p(positive) and the
content-free reviews' p(positive).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from fromscratch.chapters.ch15_assistant.assistant_imdb import CONTENT_FREE, Arm
from fromscratch.chapters.ch15_assistant.base_chat import Following
from fromscratch.chapters.ch15_assistant.preference import Preferences
from fromscratch.chapters.ch15_assistant.write_back import Survival
from fromscratch.training.sft import StepCost


def arm_numbers(arms: Sequence[Arm]) -> dict[str, float]:
    """``"<arm> N=<n>"``: its accuracy, and ``... run <i>``, ``... said positive``, ``... p(positive)``,
    ``... content-free p(positive) "<input>"`` beside it."""
    out: dict[str, float] = {}
    for a in arms:
        key = f"{a.name} N={a.n}"
        out[key] = round(a.accuracy, 4)
        if a.correct.size(0) > 1:
            out |= {f"{key} run {i}": round(x, 4) for i, x in enumerate(a.per_run())}
        out[f"{key} said positive"] = round(a.said_positive, 4)
        if a.p_positive is not None:
            out[f"{key} p(positive)"] = round(a.p_positive.mean().item(), 4)
        if a.content_free is not None:
            for text, p in zip(CONTENT_FREE, a.content_free.mean(0).tolist(), strict=True):
                out[f'{key} content-free p(positive) "{text}"'] = round(p, 4)
    return out


def numbers(
    arms: Sequence[Arm],
    *,
    following: tuple[Following, Following],
    losses: tuple[float, float],
    costs: dict[str, StepCost],
    survivals: Sequence[Survival],
    prefs: Preferences,
    sft_prefs: Preferences | None = None,
) -> dict[str, float | int]:
    """Every number of the chapter's prose, by a readable key (``"15.3 after stopped"``, ...):
    ``survivals`` one per block format written back, ``sft_prefs`` LoRA-SFT's beside DPO's ``prefs``."""
    out: dict[str, float | int] = {}
    for when, f in zip(("before", "after"), following, strict=True):
        out |= {f"15.3 {when} {k}": round(v, 4) for k, v in asdict(f).items()}
    out |= {"15.3 loss before": round(losses[0], 4), "15.3 loss after": round(losses[1], 4)}
    for name, k in costs.items():
        out |= {f"15.4 {name} seconds": round(k.seconds, 4), f"15.4 {name} bytes": k.bytes}
        out[f"15.4 {name} gradient and AdamW bytes"] = k.gradient_bytes + k.optimizer_bytes
    for survival in survivals:
        shares = asdict(survival)
        kind = shares.pop("kind")
        out |= {f"15.4 write-back {kind} {k}": round(v, 4) for k, v in shares.items()}
    for who, p in (("DPO", prefs), ("SFT on chosen", sft_prefs)):
        if p is not None:
            out |= _preferences(who, p)
    return out | arm_numbers(arms)


def _preferences(who: str, prefs: Preferences) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    for name in ("reward_accuracy", "policy_accuracy", "reference_accuracy"):
        p = getattr(prefs, name)
        out |= {f"15.5 {who} {name}": round(p.value, 4), f"15.5 {who} {name} n": p.n}
    return out | {
        f"15.5 {who} kl {k}": round(v, 4) for k, v in zip(("mean", "low", "high"), prefs.kl, strict=True)
    }


__all__ = ["arm_numbers", "numbers"]
