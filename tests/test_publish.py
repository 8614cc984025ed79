"""The course's addresses and the published book.

One place names the addresses, pyproject.toml's ``[project.urls]``: the repository (``Repository``) and
the book on GitHub Pages (``Documentation``). Every chapter's Colab badge and install cell is written from
it (``tools/nbclean.py``), and _config.yml's launch buttons, README.md, book/running.md and the workflow
must agree with it. Nobody has seen the book published yet, so no page may say it is. The workflow that
builds and deploys the book must never restore the outputs of other code.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbclean
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URLS = nbclean.course_urls()
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REFRESH = "run `python tools/nbclean.py --urls notebooks/*.ipynb` (it writes them from pyproject.toml)"
CODE_HASH = "hashFiles('src/**', 'pyproject.toml', 'requirements.lock')"
HASH = "${{ steps.code.outputs.hash }}"  # the code hash, taken once by the workflow's step `code`
JUPYTER_CACHE = "_build/.jupyter_cache"
CHECKPOINTS = "~/.cache/fromscratch/checkpoints"
# addresses a page may give for the course: GitHub repositories, GitHub Pages sites, notebooks in Colab
ADDRESS = re.compile(
    r"https://(?:github\.com/[\w.-]+/[\w.-]+|[\w-]+\.github\.io/[\w.-]*|colab\.research\.google\.com/github/"
    r"[\w.-]+/[\w.-]+)[^\s)>\]`\"'|]*"
)
CLAIM = re.compile(r"\b(?:book|it|site)\s+is\s+(?:now\s+)?(?:published|online|live)\b", re.IGNORECASE)


def pages_url(repository: str) -> str:
    """GitHub Pages' address of a project repository: ``https://<owner>.github.io/<name>/``."""
    owner, name = repository.removeprefix("https://github.com/").strip("/").split("/")
    return f"https://{owner}.github.io/{name}/"


def test_the_book_is_addressed_on_the_pages_of_the_repository():
    assert URLS.documentation == pages_url(URLS.repository), (
        f"pyproject.toml [project.urls]: Documentation must be GitHub Pages' address of Repository, "
        f"{pages_url(URLS.repository)}"
    )


def test_launch_buttons_open_the_chapters_in_the_repository():
    repository = CONFIG["repository"]
    assert repository["url"] == URLS.repository, (
        f"_config.yml repository.url is {repository['url']}; pyproject.toml's Repository is {URLS.repository}"
    )
    assert repository["branch"] == nbclean.BRANCH, "the rocket and the badges must open the same branch"
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_chapter_has_the_badge_and_install_cell_of_pyproject(path):
    problems = nbclean.course_problems(nbformat.read(path, as_version=4), path.name, URLS)
    assert not problems, f"{path.name}: {problems}; {REFRESH}"


def stray_addresses(text: str) -> list[str]:
    """The addresses in ``text`` that look like the course's but are not pyproject.toml's: another Pages
    site or Colab notebook, or a repository of the course's owner or name elsewhere."""
    owner, name = URLS.slug.split("/")
    stray = []
    for address in ADDRESS.findall(text):
        if address.startswith((URLS.repository, URLS.documentation)):
            continue
        if "colab.research.google.com/github/" in address:
            if not address.startswith(f"https://colab.research.google.com/github/{URLS.slug}/"):
                stray.append(address)
        elif ".github.io" in address or re.search(rf"github\.com/(?:{owner}/|[\w.-]+/{name}\b)", address):
            stray.append(address)
    return stray


@pytest.mark.parametrize(
    "name", ["README.md", "book/running.md", "_config.yml", ".github/workflows/book.yml"]
)
def test_pages_give_only_the_course_addresses(name):
    stray = stray_addresses((ROOT / name).read_text())
    assert not stray, (
        f"{name} gives {stray}, where pyproject.toml's [project.urls] says {URLS.repository} and "
        f"{URLS.documentation}"
    )


def test_readme_says_where_the_book_will_be_and_claims_no_publication():
    readme = (ROOT / "README.md").read_text()
    for url in (URLS.documentation, URLS.repository):
        assert url in readme, f"README.md should name {url} (pyproject.toml's [project.urls])"
    assert URLS.documentation in WORKFLOW.read_text()
    # Nobody has seen the site yet. Once the maintainers' checklist (book/running.md) has been done and the
    # site checked, drop this guard and say so.
    for name in ("README.md", "book/running.md"):
        claims = CLAIM.findall((ROOT / name).read_text())
        assert not claims, f"{name} says {claims}: nobody has seen the book published; say where it will be"


def steps() -> list[dict]:
    """The steps of the workflow's job ``build``."""
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]


def test_the_workflow_builds_in_the_cpu_profile_and_deploys():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["jobs"]["build"]["env"]["FROMSCRATCH_PROFILE"] == "cpu"
    assert CONFIG["execute"]["execute_notebooks"] == "cache"  # so a cached chapter does not run again
    runs = "\n".join(s.get("run", "") for s in steps())
    assert "make book" in runs and "--out _build/html/slides" in runs  # the decks beside the book
    assert any("deploy-pages" in str(s.get("uses")) for s in workflow["jobs"]["deploy"]["steps"])


def test_the_executed_chapters_are_cached_only_for_the_code_that_ran_them():
    build = steps()
    code = next((i for i, s in enumerate(build) if s.get("id") == "code"), None)
    assert code is not None and CODE_HASH in build[code]["run"], f"a step `code` must output {CODE_HASH}"
    first_install = next(
        i for i, s in enumerate(build) if "make" in s.get("run", "") or "pip" in s.get("run", "")
    )
    assert code < first_install, "hash the code before installing and building write into src/"
    cached = [s for s in build if str(s.get("uses", "")).startswith("actions/cache/")]
    assert {s["uses"].split("@")[0] for s in cached} == {"actions/cache/restore", "actions/cache/save"}
    chapters = [s for s in cached if JUPYTER_CACHE in s["with"]["path"].split()]
    data = [s for s in cached if s not in chapters]
    assert len(chapters) == 2 and len(data) == 2, "one restore and one save of each cache"
    for step in chapters:  # the outputs and the checkpoints of this very code, never older ones
        assert CHECKPOINTS in step["with"]["path"].split()
        assert HASH in step["with"]["key"]
        for prefix in str(step["with"].get("restore-keys", "")).splitlines():
            assert HASH in prefix, f"restore-key {prefix!r} would bring back the outputs of other code"
    for step in data:  # the datasets of any earlier run, but never its checkpoints
        assert f"!{CHECKPOINTS}" in step["with"]["path"].split()
    for pair in (chapters, data):  # a cache restores only what was saved under the same paths
        assert (
            pair[0]["with"]["path"] == pair[1]["with"]["path"]
            and pair[0]["with"]["key"] == pair[1]["with"]["key"]
        )
