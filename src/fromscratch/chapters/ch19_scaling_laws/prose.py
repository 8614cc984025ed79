"""Chapter 19's computed sentences: each takes the run's numbers and returns the text the chapter prints
(``viz.prose``), its verdicts decided here by tested rules, never typed into the notebook.

Every function is rendered in ``tests/test_prose_ch19.py`` with the ``gpu`` profile's sizes and results on
both sides of each verdict. A sweep smaller than :data:`MIN_BUDGETS` budgets of :data:`MIN_SIZES` sizes
(the ``smoke`` profile's) fits curves through too few points to mean anything, and every sentence about a
fit says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fromscratch.chapters.ch19_scaling_laws.profile import ScalingRun
from fromscratch.chapters.ch19_scaling_laws.sweep import Prediction
from fromscratch.metrics.scaling import IsoflopMinimum, LawBootstrap, PowerLaw
from fromscratch.viz import verdicts as v

MIN_BUDGETS = 4  # budgets a sweep needs before its exponents are read (Chinchilla's approach 2 had 9)
MIN_SIZES = 5  # sizes per budget before a parabola's minimum is read
CHINCHILLA = {"a": 0.50, "b": 0.50, "alpha": 0.34, "beta": 0.28}  # Hoffmann et al.: a, b Table 2, α, β eq. 10
KAPLAN = {"a": 0.73, "b": 0.27}  # Kaplan et al. (2020), as Hoffmann et al.'s Table 2 quotes them


def meaningful(size: ScalingRun) -> bool:
    """Whether the sweep of ``size`` (its budgets x sizes per budget) is large enough to read its fits."""
    return len(size.budgets) >= MIN_BUDGETS and size.per_budget >= MIN_SIZES


def caveat(size: ScalingRun) -> str:
    """The warning every fit's sentence carries on a sweep too small to fit (empty otherwise)."""
    if meaningful(size):
        return ""
    budgets, per_budget = len(size.budgets), size.per_budget
    return (
        f" This sweep has {v.plural(budgets, 'budget')} of {v.plural(per_budget, 'size')} and runs of a few "
        "dozen steps: the fits below go through too few points, too briefly trained, to mean anything. They "
        "show that the code runs; the `cpu` profile's sweep is the one to read."
    )


def _span(interval: tuple[float, float], digits: int = 2) -> str:
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def embeddings(widths: Sequence[int], total: Sequence[int], non_embedding: Sequence[int]) -> str:
    """19.1: the embedding's share of the parameters at the smallest and the largest width."""
    share = [1 - n / t for n, t in zip(non_embedding, total, strict=True)]
    return (
        f"At width {widths[0]} the byte embedding (256 rows, tied to the output layer) is "
        f"{100 * share[0]:.0f} % of the model's {total[0]:,} parameters; at width {widths[-1]} it is "
        f"{100 * share[-1]:.0f} % of {total[-1]:,}. Counted without it, the small models shrink far more "
        "than the large ones, so the same runs spread over a wider range of N, and a slope fitted against N "
        "changes with the choice."
    )


def lr_choice(losses: Sequence[float], size: ScalingRun) -> str:
    """19.2: which of ``size.lrs`` the small sweep chose (``losses``, one each), and whether it lies at the
    edge of the range tried."""
    lrs, width, budget = size.lrs, size.lr_width, size.lr_budget
    best = min(range(len(lrs)), key=lambda i: losses[i])
    tried = v.join_words([f"{lr:g} ({loss:.3f})" for lr, loss in zip(lrs, losses, strict=True)])
    edge = best in (0, len(lrs) - 1)
    where = (
        "at the edge of the range tried, so a wider search might find a better one"
        if edge
        else "inside the range tried, with worse losses on both sides"
    )
    return (
        f"At width {width} and C = {budget:.2g} FLOPs, the learning rates {tried} (held-out bits per "
        f"byte) put {lrs[best]:g} first, {where}. Every run of the sweep uses it: one learning rate for "
        "every size, which favours the sizes near this one (smaller models usually take a larger rate, "
        "larger ones a smaller)."
    )


def isoflop(minima: Mapping[float, IsoflopMinimum], size: ScalingRun) -> str:
    """19.2: how many IsoFLOP curves have their minimum inside the sizes measured."""
    inside = [c for c, m in minima.items() if m.bracketed]
    outside = [f"{c:.2g}" for c, m in minima.items() if not m.bracketed]
    text = (
        f"Of the {v.plural(len(minima), 'budget')}, {len(inside)} "
        f"{'has its' if len(inside) == 1 else 'have their'} minimum between the smallest and the "
        "largest size trained"
    )
    if outside:
        text += (
            f"; at C = {v.join_words(outside)} it lies outside them, and the best run measured stands in "
            "for it (an extrapolation would be worse): a bound, and the sweep should reach further on "
            "that side"
        )
    else:
        text += ": every optimum is measured, not extrapolated"
    return text + "." + caveat(size)


def _against(law: PowerLaw, reference: float) -> str:
    low, high = law.exponent_interval
    if low <= reference <= high:
        return "inside the interval"
    return "above the interval" if reference > high else "below the interval"


def exponents(n_law: PowerLaw, d_law: PowerLaw, n_law_kaplan: PowerLaw, size: ScalingRun) -> str:
    """19.3: the fitted exponents of ``N_opt ∝ C^a`` and ``D_opt ∝ C^b`` beside Chinchilla's and Kaplan's,
    and ``a`` again with ``N`` counted without the embedding."""
    level = f"{100 * n_law.level:.0f} %"
    total = n_law.exponent + d_law.exponent
    text = (
        f"N_opt ∝ C^a with a = {n_law.exponent:.2f} {_span(n_law.exponent_interval)} and D_opt ∝ C^b with "
        f"b = {d_law.exponent:.2f} {_span(d_law.exponent_interval)} ({level} bootstrap intervals over the "
        f"{v.plural(len(size.budgets), 'budget')}). Chinchilla's a = {CHINCHILLA['a']:.2f} is "
        f"{_against(n_law, CHINCHILLA['a'])} of a, Kaplan's a = {KAPLAN['a']:.2f} "
        f"{_against(n_law, KAPLAN['a'])}. Counted without the embedding (Kaplan's N), the same runs give "
        f"a = {n_law_kaplan.exponent:.2f} {_span(n_law_kaplan.exponent_interval)}. Since every run spends "
        f"its budget, N · D is about proportional to C, so a + b should be near 1: {total:.2f} here"
        + (
            "."
            if abs(total - 1) <= 0.1
            else ", off by more than a tenth: the two minima are found by separate parabolas, each as "
            "noisy as its interval says, and attention's FLOPs, which N · D does not count, are a larger "
            "share of the small models' budget."
        )
    )
    return text + caveat(size)


def law(boot: LawBootstrap, size: ScalingRun) -> str:
    """19.3: the parametric law's five numbers with their intervals, and the exponent of N_opt it implies."""
    f, i = boot.law, boot.intervals()
    implied = f.beta / (f.alpha + f.beta)
    text = (
        f"L(N, D) = E + A / N^α + B / D^β fitted to every run gives E = {f.E:.2f} {_span(i['E'])} bits per "
        f"byte, α = {f.alpha:.2f} {_span(i['alpha'])} and β = {f.beta:.2f} {_span(i['beta'])} "
        f"({len(boot.draws)} bootstrap refits over the runs, {100 * boot.level:.0f} % intervals). "
        f"Chinchilla's fit had α = {CHINCHILLA['alpha']:.2f} and β = {CHINCHILLA['beta']:.2f}. The law's "
        f"own optimum grows as N_opt ∝ C^{implied:.2f} (β / (α + β)), beside the IsoFLOP minima's direct "
        "fit above."
    )
    return text + caveat(size)


def prediction(p: Prediction) -> str:
    """19.4, before the run: what the fits predict for a budget ``p.ratio`` times the sweep's largest."""
    return (
        f"At C = {p.budget:.2g} FLOPs, {p.ratio:g} times the sweep's largest budget, the IsoFLOP minima's "
        f"power law puts the optimum at N = {p.n_opt:,.0f}. The nearest model is width {p.width}, "
        f"N = {p.N:,}, trained on D = {p.D:,} bytes. For that run the law predicts {p.value:.3f} bits per "
        f"byte {_span((p.low, p.high), 3)}; the straight line through the minima's losses (in log-log) "
        f"predicts {p.line:.3f}."
    )


def verification(p: Prediction, measured: float, size: ScalingRun) -> str:
    """19.4, after the run: the measured loss beside the prediction."""
    if p.low <= measured <= p.high:
        where = "inside the predicted interval"
    else:
        where = "above the predicted interval" if measured > p.high else "below the predicted interval"
    return (
        f"The run measured {measured:.3f} bits per byte against the {p.value:.3f} predicted: "
        f"{measured - p.value:+.3f}, {where} {_span((p.low, p.high), 3)}. The interval holds only the "
        "bootstrap over the sweep's runs; the noise of a second seed and of the held-out sample is not in "
        f"it, and this is {v.seeds_said(1)}." + caveat(size)
    )


def runs(size: ScalingRun) -> int:
    """The runs the chapter trains: the learning rates, the sweep and the verification run."""
    return len(size.lrs) + len(size.budgets) * size.per_budget + 1


def summary(n_law: PowerLaw, p: Prediction, measured: float, seconds: float, size: ScalingRun) -> str:
    """The summary's computed line (``seconds``: of training, every run together)."""
    return (
        f"In this run ({v.plural(runs(size), 'run')} and {seconds / 60:.1f} minutes of training on this "
        f"machine, {v.seeds_said(1)} each), N_opt grew as C^{n_law.exponent:.2f}, and a run at "
        f"{p.ratio:g} times the sweep's largest budget measured {measured:.3f} bits per byte where the law "
        f"predicted {p.value:.3f}." + caveat(size)
    )
