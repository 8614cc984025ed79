"""Build one reveal.js deck per chapter, fully offline: ``make slides`` →
``_build/slides/NN_name.slides.html``.

The decks come from the chapters' notebooks and their slideshow metadata (``jupyter nbconvert --to
slides``), with what a lecture needs and nothing a CDN has to serve:

- reveal.js, MathJax 3, require.js, jQuery and d3 are copied from installed packages into
  ``<out>/vendor/`` (see ``offline_assets.py``); the template (``tools/slides_template``) loads them
  from there, configures MathJax 3 and drops nbconvert's mermaid import;
- bertviz views point at the local d3 and jQuery; widgets keep their text fallback;
- speaker notes (cells with ``slide_type: notes``) open with the **s** key; a MyST dropdown admonition
  around them (how the book shows them, collapsed) is unwrapped;
- exercise solutions (cells tagged ``solution``) are left out; long training cells (tagged
  ``slides-output-only``, or calling ``train(``/``train_*(``/``.fit(``) show their results, not their code;
  cells tagged ``remove-cell`` are left out, ``remove-input``/``hide-input`` show their output only;
  progress bars and warnings (stderr) are dropped.

Outputs: with ``--cache`` the executed notebooks of a book build (its jupyter-cache folder) give the decks
their figures (``make book`` fills ``_build/.jupyter_cache``); ``--execute`` runs a chapter that is not in
the cache, in the current profile; otherwise a deck shows the committed outputs only.

    python tools/slides.py                                   # every chapter of _toc.yml
    python tools/slides.py --cache _build/.jupyter_cache notebooks/04_multi_head_attention.ipynb
"""

from __future__ import annotations

import argparse
import copy
import functools
import re
import shutil
import sys
from pathlib import Path

import nbformat
import yaml
from nbconvert import SlidesExporter
from offline_assets import copy_vendor, locate, rewrite_cdn_urls
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).with_name("slides_template")
VENDOR = "vendor"  # the deck's assets, next to the decks
OUTPUT_ONLY_TAGS = {"slides-output-only", "remove-input", "hide-input"}
TRAINING_CALL = re.compile(r"(?<![\w.])(?:\w+\.)*(?:train(?:_\w+)?|fit)\(")
WIDGET = "application/vnd.jupyter.widget-view+json"
# the MyST fence of a dropdown admonition around speaker notes (the book shows them collapsed)
NOTES_FENCE = re.compile(r"^(?::{3,}\s*(?:\{admonition\}.*)?|:class:.*)$", re.MULTILINE)


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in the order of ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    return [root / f"{f}.ipynb" for f in files if f.startswith("notebooks/")]


def executed(nb, cache: Path | None):
    """``nb`` with the outputs the book build cached for it, or ``None`` when the cache does not hold it."""
    if cache is None or not cache.is_dir():
        return None
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(str(cache)).merge_match_into_notebook(nb)
    except KeyError:  # the code changed since the book was built
        return None
    return merged


def execute(nb, path: Path) -> None:
    """Run ``nb`` in place in the current profile ($FROMSCRATCH_PROFILE), from the notebook's folder."""
    from nbclient import NotebookClient

    print(f"running {path.name} (not in the book's cache)", flush=True)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()


def for_slides(nb):
    """A copy of ``nb`` as a deck shows it: no solutions, training cells as results, no stderr, no widgets."""
    nb = copy.deepcopy(nb)
    kept = []
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if "solution" in tags or "remove-cell" in tags:
            continue
        if cell.metadata.get("slideshow", {}).get("slide_type") == "notes":
            cell.source = NOTES_FENCE.sub("", cell.source).strip()  # the book's dropdown, plain in the notes
        if cell.cell_type == "code":
            if tags & OUTPUT_ONLY_TAGS or TRAINING_CALL.search(cell.source):
                cell.metadata.setdefault("tags", []).append("slides-remove-input")
            outputs = []
            for out in cell.get("outputs", []):
                if out.output_type == "stream" and out.name == "stderr":
                    continue
                if "data" in out and WIDGET in out.data:
                    out.data = {k: v for k, v in out.data.items() if k == "text/plain"}
                    if not out.data:
                        continue
                outputs.append(out)
            cell.outputs = outputs
        kept.append(cell)
    nb.cells = kept
    nb.metadata.pop("widgets", None)
    return nb


def exporter() -> SlidesExporter:
    """nbconvert's slides exporter, pointed at the local assets of ``<out>/vendor/`` and our template."""
    c = Config()
    c.SlidesExporter.reveal_url_prefix = f"{VENDOR}/revealjs"  # relative: the notes plugin needs it so
    c.SlidesExporter.reveal_number = "c/t"
    c.SlidesExporter.reveal_theme = "white"  # nbconvert's default, "simple", loads Lato from Google Fonts
    c.SlidesExporter.reveal_scroll = True
    c.HTMLExporter.require_js_url = f"{VENDOR}/require.js"
    c.HTMLExporter.jquery_url = f"{VENDOR}/jquery.min.js"
    c.HTMLExporter.mathjax_url = f"{VENDOR}/mathjax/tex-chtml.js"
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"slides-remove-input"}
    c.SlidesExporter.extra_template_paths = [str(TEMPLATES)]
    c.SlidesExporter.template_file = "offline.html.j2"
    return SlidesExporter(config=c)


@functools.cache
def _exporter() -> SlidesExporter:
    return exporter()  # one for every deck: setting up the templates takes a while


def build_deck(path: Path, out: Path, *, cache: Path | None = None, run: bool = False) -> Path:
    """Write the deck of the notebook ``path`` to ``out/<name>.slides.html``; return its path."""
    nb = nbformat.read(path, as_version=4)
    merged = executed(nb, cache)
    if merged is not None:
        nb = merged
    elif run:
        execute(nb, path)
    html, _ = _exporter().from_notebook_node(for_slides(nb), resources={"metadata": {"name": path.stem}})
    deck = out / f"{path.stem}.slides.html"
    deck.write_text(rewrite_cdn_urls(html, f"{VENDOR}/"), encoding="utf-8")
    return deck


def copy_assets(out: Path) -> None:
    """Copy reveal.js, MathJax 3, require.js, jQuery and d3 into ``out/vendor/`` (once)."""
    vendor = out / VENDOR
    copy_vendor(vendor)
    for name in ("revealjs", "mathjax"):
        if not (vendor / name).is_dir():
            shutil.copytree(locate(name), vendor / name)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter of _toc.yml")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "slides")
    parser.add_argument(
        "--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache", help="a book's jupyter-cache"
    )
    parser.add_argument("--execute", action="store_true", help="run chapters the cache does not hold")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    copy_assets(args.out)
    for path in args.notebooks or chapters():
        deck = build_deck(path, args.out, cache=args.cache, run=args.execute)
        print(f"wrote {deck}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
