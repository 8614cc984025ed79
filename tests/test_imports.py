"""The import plan is enforced: every import between the package's rooms is one CONTRIBUTING.md allows.

The plan lives in one place, the "may import" table of CONTRIBUTING.md ("The house"). Its first column
names the rooms (a folder of ``src/fromscratch`` or the one root module, ``utils.py``); in the third,
every room in backticks is allowed and "everything below" allows every room of the rows above. This
test reads the table, finds every import of the package in every file (imports inside functions too,
``if TYPE_CHECKING:`` blocks left out, as ``../shared/tools/layers.py`` counts them) and fails on an
arrow the table forbids, naming the file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "fromscratch"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
HEADER = re.compile(r"^\|\s*room\s*\|\s*holds\s*\|\s*may import\s*\|\s*$")


def _cells(line: str) -> list[str]:
    """The cells of one Markdown table row; a ``|`` inside backticks stays in its cell."""
    cells, cell, quoted = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            quoted = not quoted
        if char == "|" and not quoted:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
    return [*cells, cell.strip()]


def _names(cell: str) -> list[str]:
    """The rooms named in backticks in ``cell``: ``attention/`` -> attention, ``utils.py`` -> utils."""
    return [name.removesuffix("/").removesuffix(".py") for name in re.findall(r"`([^`]+)`", cell)]


def allowed_imports(text: str) -> dict[str, set[str]]:
    """``{room: rooms it may import}`` from the "may import" table of CONTRIBUTING.md's ``text``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if HEADER.match(line)), None)
    if start is None:
        raise ValueError("CONTRIBUTING.md has no table with the header | room | holds | may import |")
    plan: dict[str, set[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rooms, _, may = _cells(line)[:3]
        below = set(plan) if "everything below" in may else set()
        for room in _names(rooms):
            plan[room] = below | set(_names(may))
    return plan


def _imported(path: Path) -> list[tuple[str, int]]:
    """(module, line) of every import of ``fromscratch`` in ``path``, ``if TYPE_CHECKING:`` blocks left
    out; ``from a import b`` gives ``a.b`` (b may be a module; the room is the same either way)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for child in node.body
        for inner in ast.walk(child)
    }
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])  # the file's package
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the file's package, `level - 1` packages up
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.split(".")[0] == PACKAGE.name]


def room_of(module: str) -> str | None:
    """The room of ``fromscratch.a.b...``: ``a`` (a folder, or a module at the root); None for the
    package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def arrows() -> list[tuple[str, str, str]]:
    """(from room, to room, "file:line") for every import between two rooms of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative == Path("__init__.py"):
            continue  # the package's own __init__ sits above every room: it only brings setup() to the top
        here = relative.parts[0].removesuffix(".py")
        for module, line in _imported(path):
            there = room_of(module)
            if there is not None and there != here:
                found.append((here, there, f"src/fromscratch/{relative.as_posix()}:{line}"))
    return found


def rooms() -> set[str]:
    """Every room of the package: its folders with Python files and its root modules."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    return folders | {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}


PLAN = allowed_imports(CONTRIBUTING.read_text(encoding="utf-8"))


def test_the_table_names_every_room_and_only_rooms():
    assert rooms() - set(PLAN) == set(), "a room without a row in CONTRIBUTING.md's 'may import' table"
    assert set(PLAN) - rooms() == set(), "a row of CONTRIBUTING.md's 'may import' table names no room"
    for room, allowed in PLAN.items():
        assert allowed <= set(PLAN), (
            f"the row of {room} allows a room that does not exist: {allowed - set(PLAN)}"
        )


def test_every_import_is_one_the_table_allows():
    forbidden = [
        f"{where}: {here} imports {there}, which its row does not allow"
        for here, there, where in arrows()
        if there not in PLAN.get(here, set())
    ]
    assert not forbidden, (
        "Imports that CONTRIBUTING.md's 'may import' table forbids (move the code, or, if the arrow runs "
        "down and belongs, add the room to the row and say why):\n" + "\n".join(forbidden)
    )


def test_the_ground_floor_imports_nothing_from_the_package():
    for room in ("attention", "tokenizers", "utils"):
        assert PLAN[room] == set(), f"{room} is on the ground floor: its row must allow nothing"


def test_how_the_table_reads():
    table = """
| room | holds | may import |
|---|---|---|
| `a/` | x, with `code` | nothing |
| `util.py` | y | `a` (why: words outside backticks explain) |
| `c/`, `d/` | z | everything below; for now also `e` |
| `e/` | w | everything below |

After the table.
"""
    assert allowed_imports(table) == {
        "a": set(),
        "util": {"a"},
        "c": {"a", "util", "e"},
        "d": {"a", "util", "e"},
        "e": {"a", "util", "c", "d"},
    }


def test_a_chapter_owns_its_folder():
    """No chapter folder imports another chapter's folder, and no notebook imports another chapter's
    folder: what a second chapter needs lives in the library (``training/``, ``interop/``, ``viz/``, ...)."""
    import house_figures

    assert house_figures.chapter_imports() == []
