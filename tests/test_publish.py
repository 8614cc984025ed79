"""The published book: the workflow that builds and deploys it, and the address README.md gives for it."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def pages_url(repository: str) -> str:
    """GitHub Pages' address of a project repository: ``https://<owner>.github.io/<name>/``."""
    owner, name = repository.removeprefix("https://github.com/").strip("/").split("/")
    return f"https://{owner}.github.io/{name}/"


def test_readme_says_where_the_book_is_published():
    url = pages_url(CONFIG["repository"]["url"])
    assert url in (ROOT / "README.md").read_text(), f"README.md should name {url} (from _config.yml)"
    assert url in WORKFLOW.read_text()


def test_the_workflow_builds_in_the_cpu_profile_and_keeps_the_execution_cache():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    build = workflow["jobs"]["build"]
    assert build["env"]["FROMSCRATCH_PROFILE"] == "cpu"
    assert CONFIG["execute"]["execute_notebooks"] == "cache"  # so a cached chapter does not run again
    cached = [s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/cache/")]
    assert {s["uses"].split("@")[0] for s in cached} == {"actions/cache/restore", "actions/cache/save"}
    for step in cached:
        assert "_build/.jupyter_cache" in step["with"]["path"].split()
    runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert "make book" in runs and "--out _build/html/slides" in runs  # the decks beside the book
    assert any("deploy-pages" in str(s.get("uses")) for s in workflow["jobs"]["deploy"]["steps"])
