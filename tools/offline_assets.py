"""Where the book and the slides get their JavaScript without a network: files shipped by pip packages.

Nothing here downloads. Each asset is a file (or folder) inside an installed package listed in
requirements.txt, found with ``importlib`` (without importing the package):

| asset | package | version |
|---|---|---|
| ``mathjax`` (MathJax 3, ``tex-chtml.js``) | ``sphinx-mathjax-offline`` | MathJax 3.2.2 |
| ``require.js`` | ``nbclassic`` | RequireJS 2.3.7 |
| ``jquery.min.js`` | ``nbclassic`` | jQuery 3.7.1 |
| ``d3.v5.min.js`` | ``mpld3`` | d3 5.7.0 (what bertviz asks for) |
| ``revealjs`` | ``sphinx-revealjs`` | reveal.js 5.2.0 |

``rewrite_cdn_urls`` turns the CDN addresses that bertviz, nbconvert and the Colab badge use into
paths to these local copies.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

# name -> (package, path inside the package)
ASSETS = {
    "mathjax": ("sphinx-mathjax-offline", "static/mathjax"),
    "require.js": ("nbclassic", "static/components/requirejs/require.js"),
    "jquery.min.js": ("nbclassic", "static/components/jquery/jquery.min.js"),
    "d3.v5.min.js": ("mpld3", "js/d3.v5.min.js"),
    "revealjs": ("sphinx_revealjs", "_static/revealjs"),
}
# the files served next to every page, under <root>/_static/vendor/ (the book) or <deck>/vendor/ (slides)
VENDOR_FILES = ("require.js", "jquery.min.js", "d3.v5.min.js")
BADGE = Path(__file__).with_name("colab-badge.svg")  # our own drawing of Colab's "Open in Colab" badge

# CDN address -> vendor file it is replaced by (require paths have no ".js": require adds it)
_CDN = [
    (r"https://cdnjs\.cloudflare\.com/ajax/libs/d3/[\d.]+/d3(?:\.min)?", "d3.v5.min"),
    (r"https://cdnjs\.cloudflare\.com/ajax/libs/jquery/[\d.]+/jquery(?:\.min)?", "jquery.min"),
]
# bertviz adds its own <script src=".../require.min.js">; the page has loaded require.js already
_REQUIRE_TAG = re.compile(r'<script[^>]*src="https?://[^"]*require(?:\.min)?\.js"[^>]*>\s*</script>')
_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"


def locate(name: str) -> Path:
    """The local copy of asset ``name`` (a key of ``ASSETS``); FileNotFoundError says what to install."""
    if name not in ASSETS:
        raise ValueError(f"unknown asset {name!r}; known: {sorted(ASSETS)}")
    package, inner = ASSETS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"{name} comes from the package {package!r}, which is not installed: run `make install` "
            "(or pip install -r requirements.lock)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / inner
    if not path.exists():
        raise FileNotFoundError(f"{package} is installed but has no {inner}: reinstall it (make install)")
    return path


def copy_vendor(dest: Path) -> None:
    """Copy require.js, jQuery and d3 into the folder ``dest`` (created if missing)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in VENDOR_FILES:
        shutil.copyfile(locate(name), dest / name)
    shutil.copyfile(BADGE, dest / BADGE.name)


def rewrite_cdn_urls(html: str, vendor: str, *, drop_require_tag: bool = True) -> str:
    """``html`` with bertviz's d3/jQuery CDN paths and the Colab badge pointing at ``vendor`` (a relative URL
    prefix ending in "/", e.g. "../_static/vendor/"); bertviz's own require.js tag is dropped."""
    for pattern, local in _CDN:
        html = re.sub(pattern, vendor + local, html)
    if drop_require_tag:
        html = _REQUIRE_TAG.sub("", html)
    return html.replace(_BADGE_URL, vendor + BADGE.name)


def external_urls(html: str) -> list[str]:
    """The http(s) addresses that ``html`` would load: scripts, stylesheets, images, frames (not links)."""
    tags = re.findall(r"<(?:script|img|iframe|source|link)\b[^>]*>", html, flags=re.IGNORECASE)
    found = []
    for tag in tags:
        if tag.lower().startswith("<link") and not re.search(
            r'rel="?(?:stylesheet|preload|icon|modulepreload)', tag
        ):
            continue
        found += re.findall(r'(?:src|href)="(https?://[^"]+)"', tag)
    found += re.findall(r"""(?:import|require)\s*\(?\s*\[?\s*["'](https?://[^"']+)""", html)
    found += [url for _, url in re.findall(r"""paths\s*:\s*\{[^}]*?(['"])(https?://[^'"]+)\1""", html)]
    found += re.findall(
        r"""@import\s+(?:url\()?\s*["']?(https?://[^"')\s]+)""", html
    )  # stylesheets in <style>
    return found
