"""tools/device_audit.py: no chapter leaves its work on the CPU while a learner's GPU idles."""

from __future__ import annotations

from pathlib import Path

import nbformat
from device_audit import audit, model_classes

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


def test_no_chapter_runs_a_model_or_a_timing_on_the_cpu_by_mistake():
    classes = model_classes()
    findings = [str(f) for path in NOTEBOOKS for f in audit(path, classes)]
    assert not findings, "move the work to `device`, or mark the line `# on the CPU: <why>`:\n" + "\n".join(
        findings
    )


def _notebook(tmp_path: Path, *cells: str) -> Path:
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    return path


def test_the_audit_sees_the_three_cells_the_colab_review_found(tmp_path):
    path = _notebook(
        tmp_path,
        "encoder, tokenizer = load_bert('all-MiniLM-L6-v2')",
        "def embed(ids):\n    return encoder(ids)",  # the MiniLM probe (chapter 10)
        "model = Generator(size.model).eval()\nout = generate_text(model, prompt, 8)",
        "a = torch.randn(n, n)\nseconds = time_call(lambda: a @ a, repeats=3)",  # chapter 12's matmul
    )
    whys = [f.why for f in audit(path, model_classes())]
    assert len(whys) == 3 and "encoder runs on the CPU" in whys[0] and "model runs" in whys[1]


def test_moved_models_and_marked_lines_pass(tmp_path):
    path = _notebook(
        tmp_path,
        "model = Generator(size.model).to(device)\nmodel(tokens)",
        "other = Generator(size.model)\ntrain(other, batches, loss, config, device=device)\nother(tokens)",
        "tiny = Generator(size.model)  # on the CPU: a two-token check\ntiny(tokens)",
        "a = torch.randn(n, n, device=device)\ntime_call(lambda: a @ a, repeats=3)",
    )
    assert audit(path, model_classes()) == []
