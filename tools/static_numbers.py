"""Numbers typed into a chapter's prose that name no source: the check that keeps lessons from drifting.

A number a chapter states about its own run must come from that run: a code cell ending in
``viz.prose(f"...")`` (tagged ``remove-input``) writes the sentence from the values the run computed, so
the book, a learner's notebook and the figure above always agree, on any machine and in any profile.
A number from elsewhere (a paper, a data sheet, a benchmark's reference run) may stay in Markdown when
its paragraph names the source: a citation (``{cite}``), a link, or the benchmark script that prints it
(``benchmarks/...``). A paragraph may also carry ``<!-- static: why -->`` for a number that is neither
(a definition, a worked example by hand).

What counts as a number: digits in a Markdown cell's text, outside math (``$...$``), inline code and
code blocks, links' addresses, headings, and chapter or section references ("chapter 07", "§10.4",
"sections 8.2 and 8.4"). ``--strict`` also counts a value a formula sets a symbol to when it reads as
measured (``$t = 8{,}192$``, ``$7 \\times 7$``; not ``$T = 1$``) and numbers in words before what a run
counts ("four times as long", "a few hundred steps"). A paragraph that says where the number is shown
("the table above", "the lines above") names its source.

    python tools/static_numbers.py notebooks/0[6-9]_*.ipynb notebooks/1*.ipynb   # counts per chapter
    python tools/static_numbers.py --list notebooks/10_*.ipynb                   # every number, in context
    python tools/static_numbers.py --max 0 notebooks/1[0-4]_*.ipynb              # exit 1 above 0
    python tools/static_numbers.py --strict --list notebooks/0[6-8]_*.ipynb      # math and words too
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

SOURCED = re.compile(
    r"\{cite[pt]?\}|\]\((?:https?:|\.\./|\.\/)|benchmarks/\w+\.py|<!-- static:"
    r"|\b(?:the|this) (?:table|lines?|output|cell) (?:above|below)\b"  # the number is printed there
)
STRIP = [
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"\$[^$\n]+\$"),  # inline math
    re.compile(r"`[^`\n]+`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # a link's address (its text stays)
    re.compile(r"\{[a-z]+\}`[^`]*`"),  # roles: {cite}`x`, {doc}`y`
    re.compile(r"<!--.*?-->", re.S),  # comments
    re.compile(
        r"\b(?:[Cc]hapters?|[Ss]ections?|§|[Ee]xercises?|[Ff]igures?)\s*"
        r"\d+(?:\.\d+)?(?:\s*(?:,|and|or|–|-|to)\s*\d+(?:\.\d+)?)*"
    ),  # references to chapters and sections
    re.compile(r"\(\d+\.\d+\)"),  # "(10.4)": a section, as speaker notes name theirs
]
NUMBER = re.compile(r"(?<![\w.\-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")  # not GPT-2, L6-v2
# inside inline math, a literal a sentence sets a symbol to: "$t = 8{,}192$", "$7 \times 7$", "$d \le 12$"
MATH_VALUE = re.compile(r"(=|\\approx|\\times|\\le|\\ge|<|>)\s*(\d[\d{},.]*)(?![\w^_])")
# a number in words before what a run counts: "four times as long", "a few hundred steps"
WORDS = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundreds?"
    r"|thousands?|twice|thrice|half)\s+(times|steps|seeds|runs|minutes|seconds|points|passes|hours|epochs"
    r"|batches|as (?:long|fast|slow|large|many|much))\b",
    re.I,
)
INLINE_MATH = re.compile(r"\$([^$\n]+)\$")
BARE = re.compile(r"\s*\d[\d{},.]*\s*")  # a formula that is only a number: "$0.43$"


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith("#")]


def _measured(operator: str, value: str) -> bool:
    """A value in math that reads as measured, not defined: with decimals or thousands (``$0.43$``,
    ``$8{,}192$``), or a size given as a product (``$7 \\times 7$``); not ``$V = 256$`` or ``$T = 1$``."""
    return operator == "\\times" or "." in value.rstrip(".") or "{,}" in value


def unsourced(text: str, strict: bool = False) -> list[tuple[str, str]]:
    """``[(number, its paragraph)]`` for every number in a paragraph that names no source.

    strict: also numbers inside inline math that a sentence sets a symbol to and that read as measured
    (``$t = 8{,}192$``, ``$0.43$``, ``$7 \\times 7$``; not ``$T = 1$`` or ``$V = 256$``), and numbers
    in words before what a run counts (``four times as long``, ``a few hundred steps``)."""
    found = []
    for paragraph in paragraphs(text):
        if SOURCED.search(paragraph):
            continue
        bare = paragraph
        for pattern in STRIP:
            bare = pattern.sub(" ", bare)
        found += [(m.group(), paragraph) for m in NUMBER.finditer(bare)]
        if strict:
            spans = [m.group(1) for m in INLINE_MATH.finditer(STRIP[0].sub(" ", paragraph))]
            in_math = " ".join(f"= {x}" if BARE.fullmatch(x) else x for x in spans)  # "$0.43$": "= 0.43"
            values = [m.groups() for m in MATH_VALUE.finditer(in_math)]
            found += [(f"${value}$", paragraph) for op, value in values if _measured(op, value)]
            found += [(m.group(), paragraph) for m in WORDS.finditer(bare)]
    return found


def count(path: Path, strict: bool = False) -> list[tuple[int, str, str]]:
    """``[(cell index, number, paragraph)]`` of a notebook's Markdown cells (strict: see ``unsourced``).
    The chapter's own section and exercise numbers (``15.6`` in ``15_assistant.ipynb``) are references,
    not numbers."""
    nb = nbformat.read(path, as_version=4)
    chapter = re.match(r"(\d+)_", path.name)
    section = re.compile(rf"{int(chapter[1])}\.\d+" if chapter else r"(?!)")
    return [
        (i, number, paragraph)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for number, paragraph in unsourced(cell.source, strict)
        if not section.fullmatch(number)
    ]


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--list", action="store_true", help="print every number with its paragraph")
    parser.add_argument("--max", type=int, help="exit 1 when the total is above this")
    parser.add_argument("--strict", action="store_true", help="also numbers in math and in words")
    args = parser.parse_args()
    total = 0
    for path in args.notebooks:
        found = count(path, args.strict)
        total += len(found)
        print(f"{path.name}: {len(found)} static numbers without a source")
        for index, number, paragraph in found if args.list else []:
            where = paragraph.replace("\n", " ")
            at = where.find(number)
            print(f"  cell {index}: {number!r}: ...{where[max(at - 60, 0) : at + 40]}...")
    print(f"static numbers without a source: {total}")
    if args.max is not None and total > args.max:
        print(f"more than {args.max}: make them from the run (viz.prose) or name their source")
        sys.exit(1)


if __name__ == "__main__":
    main()
