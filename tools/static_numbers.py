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
"sections 8.2 and 8.4").

    python tools/static_numbers.py notebooks/0[6-9]_*.ipynb notebooks/1*.ipynb   # counts per chapter
    python tools/static_numbers.py --list notebooks/10_*.ipynb                   # every number, in context
    python tools/static_numbers.py --max 0 notebooks/1[0-4]_*.ipynb              # exit 1 above 0
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

SOURCED = re.compile(r"\{cite[pt]?\}|\]\((?:https?:|\.\./|\.\/)|benchmarks/\w+\.py|<!-- static:")
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


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith("#")]


def unsourced(text: str) -> list[tuple[str, str]]:
    """``[(number, its paragraph)]`` for every number in a paragraph that names no source."""
    found = []
    for paragraph in paragraphs(text):
        if SOURCED.search(paragraph):
            continue
        bare = paragraph
        for pattern in STRIP:
            bare = pattern.sub(" ", bare)
        found += [(m.group(), paragraph) for m in NUMBER.finditer(bare)]
    return found


def count(path: Path) -> list[tuple[int, str, str]]:
    """``[(cell index, number, paragraph)]`` of a notebook's Markdown cells."""
    nb = nbformat.read(path, as_version=4)
    return [
        (i, number, paragraph)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for number, paragraph in unsourced(cell.source)
    ]


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--list", action="store_true", help="print every number with its paragraph")
    parser.add_argument("--max", type=int, help="exit 1 when the total is above this")
    args = parser.parse_args()
    total = 0
    for path in args.notebooks:
        found = count(path)
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
