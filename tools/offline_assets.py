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

One asset has no pip package: the Jupyter widget manager that renders the chapters' saved widget state,
``@jupyter-widgets/html-manager`` from the npm registry, pinned (``WIDGET_PACKAGE``, ``WIDGET_INTEGRITY``)
and vendored with its licences in ``tools/vendor/html-manager/`` (its README says what each file is).
``copy_widgets`` lays it out in a built book; ``refresh_widgets`` (``--refresh-widgets``, needs ``npm``)
fetches the pinned version again and checks it.

``rewrite_cdn_urls`` turns the CDN addresses that bertviz, nbconvert and the Colab badge use into
paths to these local copies.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
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

# The widget manager (npm), vendored: see tools/vendor/html-manager/README.md
WIDGETS = Path(__file__).with_name("vendor") / "html-manager"
WIDGET_PACKAGE = "@jupyter-widgets/html-manager@1.0.15"
WIDGET_INTEGRITY = (
    "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA=="
)
WIDGET_FILES = {  # file -> sha256; the first four come from the package's dist/
    "embed-amd.js": "ca87dff57c70ffb2658794fde0eab0e27e5f5472a1f5df7ab2b08e1039fc4b72",
    "1551f4f60c37af51121f.woff2": "9834b82ad26e2a37583d22676a12dd2eb0fe7c80356a2114d0db1aa8b3899537",
    "7a3337626410ca2f4071.woff2": "e42a88444448ac3d60549cc7c1ff2c8a9cac721034c073d80a14a44e79730cca",
    "d878b0a6a1144760244f.woff2": "8ea8791754915a898a3100e63e32978a6d1763be6df8e73a39d3a90d691cdeef",
    "THIRD-PARTY-NOTICES.txt": "aed2008aae8123157c4ae564883166b1af7bab928d504a1fa7de1f67aec11268",
    "LICENSE": "e5ac2be30b2bcefe330ee9e5ad7fe5b0d1156fecb3555fcaaa908a8d29f9fded",
    "LICENSE-fontawesome.txt": "e779748dfe75e84f974df3c7bc07f842011a100159158b0f1f49b2f2a5a515cb",
}
FROM_DIST = {"THIRD-PARTY-NOTICES.txt": "embed.js.LICENSE.txt"}  # renamed on the way in
WIDGET_DIR = "@jupyter-widgets/html-manager/dist"  # where the manager lies, under a vendor folder
# Run on every page after require.js: the widget modules' require.js names ("@jupyter-widgets/...") map to
# the vendored folder, which is where they look for their fonts (webpack derives its public path from the
# module's address). Sphinx >= 7.2 writes the way to the book's root on <html> as data-content_root.
WIDGET_REQUIRE_CONFIG = (
    'require.config({paths: {"@jupyter-widgets": new URL("_static/vendor/@jupyter-widgets", '
    "new URL(document.documentElement.dataset.content_root || './', location.href)).href}});"
)
# The widgets typeset their labels with MathJax 2's `MathJax.Hub.Queue` whenever a `MathJax` exists; the
# book runs MathJax 3, which has no `Hub` (a TypeError on every page with a labelled widget). Every object
# assigned to `window.MathJax` (Sphinx's configuration, then MathJax 3 itself) gets a `Hub` whose `Queue`
# typesets with MathJax 3.
MATHJAX2_SHIM = """(() => {
  const Hub = {Queue: (job) => {
    const mj = window.MathJax, element = Array.isArray(job) ? job[2] : null;
    if (element && mj && mj.typesetPromise) mj.typesetPromise([element]).catch(() => {});
  }};
  const attach = (mj) => { if (mj && typeof mj === "object" && !mj.Hub) mj.Hub = Hub; return mj; };
  let current = attach(window.MathJax);
  try {
    Object.defineProperty(window, "MathJax", {
      configurable: true, get: () => current, set: (mj) => { current = attach(mj); },
    });
  } catch (error) {}
})();"""

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


def check_widgets(folder: Path = WIDGETS) -> None:
    """Raise ValueError naming every vendored widget file that is missing or differs from its pin."""
    wrong = []
    for name, digest in WIDGET_FILES.items():
        path = folder / name
        if not path.is_file():
            wrong.append(f"{name} is missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            wrong.append(f"{name} differs from its sha256 in WIDGET_FILES")
    if wrong:
        raise ValueError(
            f"{folder}: {'; '.join(wrong)}. "
            "Run `python tools/offline_assets.py --refresh-widgets` (needs npm)."
        )


def copy_widgets(vendor: Path) -> Path:
    """Lay the widget manager out under ``vendor`` (a book's ``_static/vendor``): ``WIDGET_DIR`` holds
    ``embed-amd.js``, its fonts and licences; the fonts go to ``@jupyter-widgets/`` too, where the
    widgets' own modules look for them. Returns the path of ``embed-amd.js``."""
    check_widgets()
    dist = vendor / WIDGET_DIR
    dist.mkdir(parents=True, exist_ok=True)
    for name in WIDGET_FILES:
        shutil.copyfile(WIDGETS / name, dist / name)
        if name.endswith(".woff2"):
            shutil.copyfile(WIDGETS / name, dist.parents[1] / name)  # vendor/@jupyter-widgets/
    return dist / "embed-amd.js"


def refresh_widgets(folder: Path = WIDGETS) -> dict[str, str]:
    """Fetch ``WIDGET_PACKAGE`` with ``npm pack``, check its integrity, copy its files into ``folder``;
    return the sha256 of each (for ``WIDGET_FILES``). The licences not in the package stay as they are."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["npm", "pack", WIDGET_PACKAGE], cwd=tmp, capture_output=True, text=True, check=True
        )
        tarball = Path(tmp) / done.stdout.strip().splitlines()[-1]
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != WIDGET_INTEGRITY:
            raise ValueError(
                f"{tarball.name}: integrity {digest}, expected WIDGET_INTEGRITY {WIDGET_INTEGRITY}"
            )
        with tarfile.open(tarball) as archive:
            for name in WIDGET_FILES:
                inner = f"package/dist/{FROM_DIST.get(name, name)}"
                if inner in archive.getnames():
                    (folder / name).write_bytes(archive.extractfile(inner).read())
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in WIDGET_FILES}


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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Offline assets of the book and the decks.")
    parser.add_argument("--refresh-widgets", action="store_true", help=f"fetch {WIDGET_PACKAGE} again (npm)")
    if parser.parse_args().refresh_widgets:
        for name, digest in refresh_widgets().items():
            print(f'    "{name}": "{digest}",')
    sys.exit(0)
