"""Refresh the numbers that pages quote from the chapters' ``cpu`` runs (``chapters/chNN_*/results.json``).

A quoted number sits between two markers that name its chapter, its key and its format
(``fromscratch.chapters.results.say``), invisible in the rendered page:

    the bag scored <!-- quote 06 bag_accuracy .1 % -->88.0 %<!-- /quote --> on all test reviews

    python tools/quote_results.py            # rewrite every marker in PAGES from the results files
    python tools/quote_results.py --check    # exit 1 where a page disagrees with its results file

``tests/test_quote_results.py`` runs the check, so a chapter re-run in ``cpu`` that moves a number
fails the tests until this tool has refreshed the pages (and the diff shows what moved).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "benchmarks" / "README.md", ROOT / "book" / "instructors.md"]
MARKER = re.compile(
    r"<!-- quote (?P<chapter>\d\d) (?P<key>\w+)(?: (?P<spec>[^>]*?))? -->(?P<text>.*?)<!-- /quote -->"
)


def refresh(text: str, lookup: Callable[[str, str], object] | None = None) -> tuple[str, list[str]]:
    """``text`` with every marker's number rewritten, and what changed (``"06 x: 87.9 % -> 88.0 %"``).

    lookup(chapter, key): the number (default: ``fromscratch.chapters.results.quoted``).
    """
    from fromscratch.chapters.results import quoted, say

    lookup = lookup or quoted
    changed = []

    def one(match: re.Match) -> str:
        now = say(lookup(match["chapter"], match["key"]), match["spec"] or "")
        if now != match["text"]:
            changed.append(f"{match['chapter']} {match['key']}: {match['text']} -> {now}")
        head = match.group(0)[: match.start("text") - match.start()]
        return f"{head}{now}<!-- /quote -->"

    return MARKER.sub(one, text), changed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("pages", nargs="*", type=Path, default=PAGES)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 on any disagreement")
    args = parser.parse_args()
    stale = 0
    for page in args.pages:
        text = page.read_text(encoding="utf-8")
        new, changed = refresh(text)
        count = len(MARKER.findall(text))
        for line in changed:
            print(f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}: {line}")
        stale += len(changed)
        if changed and not args.check:
            page.write_text(new, encoding="utf-8")
        print(f"{page.name}: {count} quoted numbers, {len(changed)} {'stale' if args.check else 'refreshed'}")
    if args.check and stale:
        print("run python tools/quote_results.py to refresh them from the results files")
        sys.exit(1)


if __name__ == "__main__":
    main()
