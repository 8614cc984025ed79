"""Chapter 07's computed sentences: each takes the run's numbers and returns Markdown for ``viz.prose``.

The verdicts come from :mod:`fromscratch.viz.verdicts`; ``tests/test_prose_ch07.py`` renders every
branch with the ``gpu`` profile's sizes.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from fromscratch.viz import verdicts as v

if TYPE_CHECKING:
    import torch

    from fromscratch.chapters import Profile
    from fromscratch.training.history import History


def copying(unmasked_history: History, masked_history: History, quarter: int) -> str:
    """7.2: the training losses (bits per byte, one per step) of the twins without and with the mask;
    did the unmasked one get further than the noise of its last ``quarter`` steps allows?

    unmasked_history, masked_history: the twins' training runs (their ``"loss"`` per step); quarter:
    how many of the last steps to average (a quarter of the run)."""
    unmasked, masked = (h.series("loss")[1] for h in (unmasked_history, masked_history))
    copy_end, causal_end = unmasked[-quarter:], masked[-quarter:]
    sd = (statistics.pstdev(causal_end), statistics.pstdev(copy_end))
    lower = v.compare(statistics.fmean(causal_end), statistics.fmean(copy_end), sd=sd, seeds=quarter)
    if lower.side == "ahead":
        reading = (
            f"{lower.gap:.2f} bits a byte below the masked twin, more than the steps' noise: it "
            "reads part of each answer off its input. Its attention shows how: look for a head that "
            "puts query $i$'s weight on key $i + 1$, the diagonal just above the main one."
        )
    else:
        where = "no lower than" if lower.side == "within noise" else "above"
        reading = (
            f"{where} the masked twin beyond the steps' noise: this run has not found the copying "
            "trick yet. The heatmap below shows whether any head has started to look one step ahead."
        )
    return (
        f"Both start near the 8 bits of a uniform guess (their first steps score {unmasked[0]:.2f} and "
        f"{masked[0]:.2f}) and fall fast while they learn which bytes are common, so the first rows "
        f"average over that drop. Over the last {v.plural(quarter, 'step')} the unmasked model averages "
        f"**{statistics.fmean(copy_end):.2f}** bits per byte and the masked twin "
        f"{statistics.fmean(causal_end):.2f} (one run each): the unmasked one is {reading}"
    )


def validation(train_end: float, val_bpb: float, unigram_bpb: float) -> str:
    """7.5: the run's bits per byte beside the two baselines without a model."""
    if val_bpb < unigram_bpb:
        learned = (
            f"the {unigram_bpb - val_bpb:.2f} bits a byte that the model scores below that, it learned "
            "from the bytes before each one"
        )
    else:
        learned = "the model has not yet learned to beat byte frequencies"
    return (
        "Both curves are in bits per byte, so they can be compared directly: training loss on random "
        f"training stretches (the last tenth of the steps averaged {train_end:.3f}), validation on "
        f"unseen bytes ({val_bpb:.3f}). Beside them, two baselines without a model: a uniform guess "
        f"scores 8 bits, and byte frequencies alone, with no context at all, {unigram_bpb:.3f}; "
        f"{learned}. How far a model gets depends on the profile: the `smoke` one is sized to prove "
        "that the code runs, the `gpu` one is the blog's full size."
    )


def brackets(
    head: int, on_brackets: torch.Tensor, is_bracket: torch.Tensor, shown: int, profile: Profile
) -> str:
    """7.7: does the most bracket-minded head of the last block put more weight on brackets than their
    share of the ``shown`` bytes (judged as ``shown`` draws from that share)?

    head: that head's index; on_brackets: ``(h,)``, each head's share of its weight on bracket keys;
    is_bracket: ``(t,)`` bool, which bytes of the window are brackets; shown: the window's length in
    bytes; profile: the run's profile (``prof``), whose ``smoke`` runs get a caveat."""
    share, bracket_share = on_brackets[head].item(), is_bracket.float().mean().item()
    smoke = profile.name == "smoke"
    where = v.versus_chance(share, bracket_share, shown)
    if where == "above" and bracket_share > 0:
        reading = (
            f"{share / bracket_share:.1f} times their share: a hint that it tracks the markup (one "
            "window, so no more than a hint). Look for a column under `[` that stays lit until the link "
            "closes"
        )
    else:
        reading = (
            "no more than their share beyond the noise of so few bytes: in this run even the last "
            "block's most bracket-minded head does not track the markup"
        )
    small = (
        " A smoke-sized model shows only the beginnings of this; run the `cpu` or `gpu` profile for "
        "clearer patterns."
        if smoke
        else ""
    )
    return (
        f"Everything above the diagonal is empty: the mask at work. In this window of "
        f"{v.plural(shown, 'byte')} head {head} puts {share:.2f} of its weight on brackets, which make "
        f"up {bracket_share:.2f} of the bytes, {reading}. A head that tracked spelling would show a "
        f"diagonal band instead (the previous one or two bytes).{small}"
    )
