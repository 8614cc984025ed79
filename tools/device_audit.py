"""Which chapter cells would work on the CPU while a learner's GPU idles? A static check of every notebook.

On Colab, ``setup()`` returns ``device = cuda`` and the chapters must put their work there; a model
built and called without ``.to(device)`` runs on the host's two slow cores at ``gpu``-profile sizes
(the review of 2026-11-26 found three such cells, hours in all). CI has no GPU, so no run can see it;
this check reads the code instead. Per notebook (its code cells in order, as one program) it finds:

- **models left on the CPU**: a name bound to a model (a call of a class from ``fromscratch.models``,
  or of a loader below) that is then called, or handed to a function that runs it, before anything
  moved it (``.to(device)``, ``train(..., device=device)``, a function given ``device=device``);
- **timings on the CPU**: a cell that times with ``time_call`` and makes its tensors with a ``torch``
  factory (``randn``, ``rand``, ``randint``, ``zeros``, ``ones``, ``empty``, ``tensor``) without ``device=``.

A line that is meant to run on the CPU says so with ``# on the CPU: <why>`` (e.g. an oracle compared on
two sentences), or on the line above, which silences it.

    python tools/device_audit.py notebooks/*.ipynb     # prints each finding; exit 1 if any
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from torch import nn

LOADERS = {  # functions that build a model on the CPU
    "load_bert",
    "load_gpt2",
    "load_llama2c",
    "load_llama",
    "minilm_encoder",
    "hf_minilm",
    "read_gguf_llama",
    "load_smollm2",
    "hf_twin",
}
RUNNERS = {  # functions that run the model they are given (first argument)
    "generate",
    "generate_text",
    "bits_per_byte",
    "bits_per_byte_xl",
    "predict_labels",
    "beam_search",
    "translate",
    "evaluate",
    "masked_lm_eval",
    "measure_activations",
    "input_gradients",
}
FACTORIES = {"randn", "rand", "randint", "zeros", "ones", "empty", "tensor", "arange", "full"}
QUIET = "# on the CPU:"


@dataclass(frozen=True)
class Finding:
    notebook: str
    cell: int
    line: str
    why: str

    def __str__(self) -> str:
        return f"{self.notebook} cell {self.cell}: {self.why}: {self.line.strip()}"


def model_classes() -> set[str]:
    """Names of the nn.Module classes ``fromscratch.models`` exports."""
    import fromscratch.models as models

    return {n for n, v in vars(models).items() if inspect.isclass(v) and issubclass(v, nn.Module)}


def _name(node: ast.AST) -> str | None:
    """``f`` of ``f(...)``, ``obj.f(...)``: the called function's last name."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _gives_device(call: ast.Call) -> bool:
    """``f(..., device=...)`` or ``x.to(device)`` / ``x.cuda()``."""
    if any(k.arg == "device" for k in call.keywords):
        return True
    return _name(call) in ("to", "cuda") and isinstance(call.func, ast.Attribute)


def _builds_model(value: ast.AST, classes: set[str]) -> tuple[bool, bool]:
    """(whether ``value`` builds a model, whether it also moves it in the same expression)."""
    calls = _calls(value)
    builds = any(_name(c) in classes | LOADERS for c in calls)
    return builds, builds and any(_gives_device(c) for c in calls)


def audit(path: Path, classes: set[str]) -> list[Finding]:
    nb = nbformat.read(path, as_version=4)
    models: dict[str, int] = {}  # name -> cell where it was built and left on the CPU
    found: list[Finding] = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for statement in tree.body:
            text = lines[statement.lineno - 1] if statement.lineno <= len(lines) else ""
            above = max(statement.lineno - 2, 0)  # the mark may stand on the line above
            quiet = any(QUIET in lines[i] for i in range(above, statement.end_lineno or 0))
            _uses(statement, models, classes, index, text, quiet, path.name, found)
        timed = any(_name(c) in ("time_call", "perf_counter") for c in _calls(tree))
        for call in _calls(tree) if timed else []:
            if (
                isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "torch"
                and call.func.attr in FACTORIES
                and not _gives_device(call)
                and not any(QUIET in lines[i] for i in range(max(call.lineno - 2, 0), call.lineno))
            ):
                why = "a timed cell makes its tensors on the CPU (no device=)"
                found.append(Finding(path.name, index, lines[call.lineno - 1], why))
    return found


def _uses(statement, models, classes, index, text, quiet, notebook, found) -> None:
    """Update ``models`` with what ``statement`` builds or moves; record uses of unmoved models."""
    if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        first = targets[0].elts[0] if isinstance(targets[0], ast.Tuple) else targets[0]
        builds, moved = _builds_model(statement.value, classes)
        if isinstance(first, ast.Name) and builds:
            if moved or quiet:
                models.pop(first.id, None)
            else:
                models[first.id] = index
            return
        moves = any(_gives_device(c) for c in _calls(statement))
        if isinstance(first, ast.Name) and first.id in models and moves:
            models.pop(first.id)  # x = x.to(device)
            return
    for call in _calls(statement):
        args = [*call.args, *(k.value for k in call.keywords)]
        named = [a.id for a in args if isinstance(a, ast.Name) and a.id in models]
        if _gives_device(call):  # x.to(device), train(x, ..., device=device): moved from here on
            target = call.func.value if _name(call) == "to" and isinstance(call.func, ast.Attribute) else None
            for name in named + ([target.id] if isinstance(target, ast.Name) and target.id in models else []):
                models.pop(name, None)
            continue
        used = named if _name(call) in RUNNERS else []
        if isinstance(call.func, ast.Name) and call.func.id in models:
            used.append(call.func.id)
        for name in used if not quiet else []:  # a quiet use (on the CPU on purpose) keeps watching
            why = f"{name} runs on the CPU (built in cell {models[name]})"
            found.append(Finding(notebook, index, text, why))
            models.pop(name, None)  # one finding per model


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args()
    classes = model_classes()
    findings = [f for path in args.notebooks for f in audit(path, classes)]
    for finding in findings:
        print(finding)
    print(f"device audit: {len(args.notebooks)} notebooks, {len(findings)} cells that would run on the CPU")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
