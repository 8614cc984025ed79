"""Does a chapter's computed prose read? The shared checks of ``tests/test_prose_chNN.py``.

A chapter's prose functions (``chapters/chNN_<name>/prose.py``) are rendered there with the ``gpu``
profile's sizes and with synthetic results on both sides of every verdict; each text goes through
:func:`assert_reads`, which fails on what a reader would stumble over:

- a singular count with a plural noun, or a plural count with a singular one ("1 seeds", "3 seed."; not
  "256 byte values");
- "0 times faster", "-2 times", "0.0 times": a ratio said in times that is not a positive number;
- ``nan``, ``inf``, ``None``, a tensor's repr: a number that never got computed;
- an unrendered placeholder: ``{`` or ``}`` outside math (``$...$`` keeps TeX's braces);
- two spaces in a row, a space before a comma or full stop, an empty pair of parentheses: the trace of
  an f-string piece that came out empty;
- ``never_together``: pairs of phrases the caller knows contradict each other ("is ahead", "within
  noise" about the same pair), none of which may appear with its partner.

    from prose_checks import assert_reads
    assert_reads(prose.race(...), never_together=[("cheap steps win", "within the seeds' spread")])
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# nouns the course counts; "1 <plural>" and "<n != 1> <singular>" are flagged for these
NOUNS = {
    "seed": "seeds",
    "run": "runs",
    "step": "steps",
    "point": "points",
    "review": "reviews",
    "pass": "passes",
    "head": "heads",
    "block": "blocks",
    "byte": "bytes",
    "minute": "minutes",
    "second": "seconds",
    "layer": "layers",
    "sequence": "sequences",
    "distance": "distances",
    "token": "tokens",
    "epoch": "epochs",
    "image": "images",
    "sentence": "sentences",
    "pair": "pairs",
    "label": "labels",
    "doubling": "doublings",
    "time": "times",
    "word": "words",
    "parameter": "parameters",
}
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
CODE = re.compile(r"`[^`\n]+`")
SINGULAR = re.compile(r"(?<![\w.,])1 (" + "|".join(NOUNS.values()) + r")\b")
PLURAL_COUNT = re.compile(r"(?<![\w.])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?) (" + "|".join(NOUNS) + r")\b")
BAD_TIMES = re.compile(r"(?<![\w.])(-\s*\d[\d.,]*|0(?:\.0+)?) times\b")
UNCOMPUTED = re.compile(r"\b(nan|NaN|inf|None(?! of))\b|tensor\(|np\.float|<fromscratch")


def problems(text: str, never_together: Iterable[tuple[str, str]] = ()) -> list[str]:
    """What a reader would stumble over in ``text`` (empty: it reads)."""
    found = []
    bare = CODE.sub("`code`", MATH.sub("$math$", text))
    flat = re.sub(r"\s*\n\s*", " ", bare)  # a paragraph's line breaks are spaces
    for match in SINGULAR.finditer(flat):
        found.append(f"a singular count with a plural noun: {match.group()!r}")
    for match in PLURAL_COUNT.finditer(flat):
        if match.group(1) != "1" and not re.match(r"'| \w", flat[match.end() :]):  # not "256 byte values"
            found.append(f"a plural count with a singular noun: {match.group()!r}")
    for match in BAD_TIMES.finditer(flat):
        found.append(f"a ratio said in times that is not positive: {match.group()!r}")
    for match in UNCOMPUTED.finditer(flat):
        found.append(f"an uncomputed value: {match.group()!r}")
    if "{" in flat or "}" in flat:
        found.append(f"an unrendered placeholder (a brace outside math): {flat[:120]!r}...")
    for pattern, what in (
        (r"\S {2,}\S", "two spaces in a row"),
        (r" [,.;:](?!\w)", "a space before punctuation"),
        (r"\(\s*\)", "empty parentheses"),
        (r"(?<!\.)\.\.(?!\.)", "a doubled full stop"),
    ):
        for match in re.finditer(pattern, flat):
            found.append(f"{what}: {flat[max(0, match.start() - 30) : match.end() + 30]!r}")
    for one, other in never_together:
        if one in text and other in text:
            found.append(f"a contradiction: {one!r} and {other!r} in the same text")
    return found


def assert_reads(text: str, never_together: Iterable[tuple[str, str]] = ()) -> None:
    """Fail with every problem :func:`problems` finds in ``text``, and the text itself."""
    assert isinstance(text, str) and text.strip(), f"the prose is empty or not a string: {text!r}"
    found = problems(text, never_together)
    assert not found, "the prose does not read:\n- " + "\n- ".join(found) + f"\n\n{text}"
