"""Print the house's figures: how readable the code a learner opens is, measured.

    python tools/house_figures.py

- the longest ``forward`` in ``attention/`` and ``blocks/`` (lines, docstring included);
- the largest constructor there (``__init__`` arguments, ``self`` excluded; ``**fields`` counts one);
- ``return_attention`` in ``src/``, ``notebooks/`` and ``tests/`` (the golden maker, which documents the
  old API it recorded, excluded);
- ``models/llama.py``'s import closure inside the package (files, lines), the files a reader opens;
- hidden code in chapters 06 and later: non-blank, non-comment lines of code cells tagged ``remove-input``
  or ``remove-cell`` (the exercises' solutions, tagged ``solution`` and collapsed by design, not counted);
- the attention dispatch (files calling ``F.scaled_dot_product_attention`` outside ``attend``);
- chapter folders or notebooks importing another chapter's folder;
- modules of the package over 300 lines (a figure: ``tests/test_house_figures.py`` fails at 400).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "fromscratch"
HIDING = {"remove-input", "remove-cell"}  # hide-input collapses: the solutions, there by design


def methods(folders: list[str]):
    """Every (module, class, method node) in the package's ``folders``."""
    for folder in folders:
        for path in sorted((PACKAGE / folder).glob("*.py")):
            for cls in ast.walk(ast.parse(path.read_text())):
                if isinstance(cls, ast.ClassDef):
                    for node in cls.body:
                        if isinstance(node, ast.FunctionDef):
                            yield path.name, cls.name, node


def arguments(f: ast.FunctionDef) -> int:
    a = f.args
    return (
        len(a.posonlyargs)
        + len(a.args)
        - 1
        + len(a.kwonlyargs)
        + (a.vararg is not None)
        + (a.kwarg is not None)
    )


def closure(path: Path) -> set[Path]:
    """The package's files a reader of ``path`` opens: its top-level ``from fromscratch... import``s,
    transitively, each name followed to its module (a package's ``__init__`` only for a name it defines)."""
    seen, todo = set(), [path]
    while todo:
        current = todo.pop()
        if current in seen or not current.exists():
            continue
        seen.add(current)
        for node in ast.parse(current.read_text()).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fromscratch"):
                module = PACKAGE.joinpath(*node.module.split(".")[1:])
                if not module.is_dir():
                    todo.append(module.with_suffix(".py"))
                for alias in node.names if module.is_dir() else ():
                    named = module / f"{alias.name}.py"
                    todo.append(named if named.exists() else module / "__init__.py")
    return seen


def hidden_lines(notebook: Path) -> int:
    """Code lines the book does not show: non-blank, non-comment lines of code cells tagged
    ``remove-input`` or ``remove-cell``, exercise solutions (tagged ``solution``) excluded."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum(
        1
        for cell in cells
        if cell["cell_type"] == "code"
        and HIDING & (tags := set(cell["metadata"].get("tags", [])))
        and "solution" not in tags
        for line in "".join(cell["source"]).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )


def dispatch_files() -> list[str]:
    """Modules of the package that call PyTorch's fused attention themselves (not through ``attend``):
    only ``attention/dot_product.py``, where ``attend`` lives, should."""
    return sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if re.search(r"scaled_dot_product_attention\([^)]*is_causal=True", p.read_text())
        and "flash" not in p.name
    )


def chapter_imports() -> list[str]:
    """``file -> chNN`` for every chapter folder or notebook that imports another chapter's folder."""
    found = []
    for path in sorted((PACKAGE / "chapters").glob("ch*/*.py")) + sorted(
        (ROOT / "notebooks").glob("*.ipynb")
    ):
        own = path.parent.name[:4] if path.suffix == ".py" else "ch" + path.name[:2]
        text = path.read_text()
        others = set(re.findall(r"fromscratch\.chapters\.(ch\d\d)_", text)) - {own}
        found += [f"{path.relative_to(ROOT)} -> {other}" for other in sorted(others)]
    return found


def main() -> None:
    rooms = ["attention", "blocks"]
    forwards = [
        (n.end_lineno - n.lineno + 1, f"{c}.forward ({m})")
        for m, c, n in methods(rooms)
        if n.name == "forward"
    ]
    inits = [(arguments(n), f"{c} ({m})") for m, c, n in methods(rooms) if n.name == "__init__"]
    print("longest forward in attention/ and blocks/: {} lines, {}".format(*max(forwards)))
    print("largest constructor in attention/ and blocks/: {} arguments, {}".format(*max(inits)))
    mentions = sum(
        path.read_text().count("return_attention")
        for folder in ("src", "notebooks", "tests")
        for path in (ROOT / folder).rglob("*.[pi]*")
        if path.suffix in (".py", ".ipynb") and path.name != "make_goldens.py"
    )
    print(f"return_attention: {mentions}")
    files = closure(PACKAGE / "models" / "llama.py")
    lines = sum(len(p.read_text().splitlines()) for p in files)
    named = ", ".join(sorted(str(p.relative_to(PACKAGE)) for p in files))
    print(f"models/llama.py's closure: {len(files)} files, {lines:,} lines ({named})")
    chapters = {p.name[:2]: hidden_lines(p) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    later = {k: n for k, n in chapters.items() if int(k) >= 6}
    print(f"hidden code in chapters 06+ (solutions not counted): {sum(later.values())} lines ({later})")
    print(f"files holding the attention dispatch: {dispatch_files()}")
    print(f"chapter -> chapter imports: {chapter_imports() or 'none'}")
    long = [(len(p.read_text().splitlines()), str(p.relative_to(PACKAGE))) for p in PACKAGE.rglob("*.py")]
    print("modules over 300 lines:", sorted((n, p) for n, p in long if n > 300) or "none")


if __name__ == "__main__":
    main()
