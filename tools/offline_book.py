"""A Sphinx extension (listed in _config.yml) that makes the built book work without a network.

- MathJax 3 is served from the book (``sphinx-mathjax-offline`` sets ``mathjax_path`` and copies it).
- require.js, jQuery and d3 are copied to ``_static/vendor/`` of the *output* at the end of the build:
  a JavaScript file in the source ``_static/`` would be added to every page by Jupyter Book, and d3
  run as a plain script after require.js raises "Mismatched anonymous define()".
- require.js is added to every page after sphinx-copybutton's clipboard.js (priority 900; loaded
  before it, the copy buttons break).
- Widgets render from their saved state: the widget manager, ``@jupyter-widgets/html-manager``
  vendored in ``tools/vendor/html-manager/``, is copied to ``_static/vendor/@jupyter-widgets/`` of the
  output; ``_config.yml``'s ``nb_ipywidgets_js`` loads its ``embed-amd.js`` (deferred: after require.js)
  on the pages that hold widget state, and a line after require.js on every page maps the widgets'
  require.js names to that folder, where they find their fonts; a shim gives MathJax 3 the
  ``MathJax.Hub.Queue`` of MathJax 2 with which the widgets typeset their labels.
- Every page's HTML is rewritten at the end of the build: bertviz's require paths to d3 and jQuery
  (cdnjs) point at the local copies, bertviz's own require.js tag goes, and the Colab badge image is
  a local file.
- Two console errors of the theme stack go: sphinx-thebe's inline configuration, added twice, declares
  ``const THEBE_JS_URL`` twice (a SyntaxError on every page), and the pydata theme, given no
  ``default_mode``, logs "Got invalid theme mode" on a first visit.
"""

from __future__ import annotations

import re
from pathlib import Path

from offline_assets import MATHJAX2_SHIM, WIDGET_REQUIRE_CONFIG, copy_vendor, copy_widgets, rewrite_cdn_urls
from sphinx.application import Sphinx

VENDOR = "_static/vendor"


def one_of_each_script(html: str) -> str:
    """``html`` with a repeated inline ``<script>`` of its head (same text) kept once."""
    head_end = html.find("</head>")
    if head_end < 0:
        return html
    seen: set[str] = set()

    def first_only(match: re.Match) -> str:
        if match.group(0) in seen:
            return ""
        seen.add(match.group(0))
        return match.group(0)

    return re.sub(r"<script>[^<]*</script>", first_only, html[:head_end]) + html[head_end:]


def rewrite_pages(outdir: Path) -> int:
    """Rewrite the CDN addresses of every HTML page under ``outdir``, drop repeated head scripts;
    return how many pages changed."""
    changed = 0
    for page in outdir.rglob("*.html"):
        depth = len(page.relative_to(outdir).parts) - 1
        html = page.read_text(encoding="utf-8")
        new = one_of_each_script(rewrite_cdn_urls(html, "../" * depth + VENDOR + "/"))
        if new != html:
            page.write_text(new, encoding="utf-8")
            changed += 1
    return changed


def _build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    copy_vendor(outdir / VENDOR)
    copy_widgets(outdir / VENDOR)
    rewrite_pages(outdir)


def _default_mode(app: Sphinx, config) -> None:
    config.html_context.setdefault("default_mode", "auto")  # light or dark as the reader's system says


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx-mathjax-offline")
    app.add_js_file("vendor/require.js", priority=900)
    app.add_js_file(None, body=WIDGET_REQUIRE_CONFIG + "\n" + MATHJAX2_SHIM, priority=901)
    app.connect("build-finished", _build_finished)
    app.connect("config-inited", _default_mode)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
