"""The house's figures hold: what ``tools/house_figures.py`` prints stays within the aims. The figures
themselves are printed, not capped (a cap splits code by count, not by idea), except where a limit
guards the reader: a forward or constructor a learner must read, the Llama's files, 400-line modules."""

from __future__ import annotations

import house_figures as house


def test_attention_and_blocks_keep_their_teaching_shape():
    methods = list(house.methods(["attention", "blocks"]))
    forwards = {f"{c}.forward": n.end_lineno - n.lineno + 1 for _, c, n in methods if n.name == "forward"}
    inits = {c: house.arguments(n) for _, c, n in methods if n.name == "__init__"}
    assert max(forwards.values()) <= 45, f"a forward over 45 lines: {forwards}"
    assert max(inits.values()) <= 8, f"a constructor over 8 arguments: {inits}"


def test_the_llama_reads_in_six_files():
    files = house.closure(house.PACKAGE / "models" / "llama.py")
    assert len(files) <= 6, sorted(str(p.relative_to(house.PACKAGE)) for p in files)


def test_one_attention_dispatch():
    """The choice between the written-out weights, the causal kernel and the masked kernel is ``attend``'s."""
    assert house.dispatch_files() == ["attention/dot_product.py"]


def test_the_book_removes_little_code():
    """Results are visible tables and a prose cell is one line: code the book removes (``remove-input``,
    ``remove-cell``; collapsed solutions are not removed) stays a few lines a chapter."""
    later = sorted(p for p in (house.ROOT / "notebooks").glob("*.ipynb") if int(p.name[:2]) >= 6)
    hidden = {path.name[:2]: house.hidden_lines(path) for path in later}
    assert max(hidden.values()) <= 12, f"removed code lines per chapter: {hidden}"


def test_no_module_is_over_400_lines():
    long = {
        str(p.relative_to(house.PACKAGE)): n
        for p in house.PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert not long, f"modules over 400 lines (split them by idea, or say in the module why not): {long}"
