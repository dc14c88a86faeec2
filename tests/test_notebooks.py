"""Jupyter notebooks: linted as one module of their code cells, reported per cell, fixed in place."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tapelint.config import Config
from tapelint.notebooks import fix_notebook_text, lint_notebook_text, mask_magics

PYTHON_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.11.7"},
}


def code(source: str, outputs: list | None = None, count: int | None = None) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {"tags": ["train"]},
            "outputs": outputs or [], "source": source.splitlines(keepends=True)}


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(keepends=True)}


def notebook(*cells: dict, metadata: dict | None = None) -> dict:
    return {"cells": list(cells), "metadata": PYTHON_METADATA if metadata is None else metadata,
            "nbformat": 4, "nbformat_minor": 5}


def nbformat_text(data: dict, indent: int = 1) -> str:
    """What Jupyter writes: sorted keys, one-space indent, raw UTF-8, a final newline."""
    return json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


# A Colab-style notebook: install cell, model in cell 3, optimizer and loss in cell 5, loop in cell 6.
TRAINING = notebook(
    markdown("# Fine-tune a classifier — ünïcode in markdown\n"),
    code("!pip install -q tensorflow\n%matplotlib inline\nimport tensorflow as tf\n",
         outputs=[{"name": "stdout", "output_type": "stream", "text": ["Successfully installed\n"]}], count=1),
    code("model = tf.keras.Sequential([\n    tf.keras.layers.Dense(64, activation='relu'),\n"
         "    tf.keras.layers.Dense(10, activation='softmax'),\n])\nmodel?\n", count=2),
    markdown("Optimizer and loss"),
    code("%%time\noptimizer = tf.keras.optimizers.Adam(lr=0.001, decay=0.0)\n"
         "loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)\n", count=3),
    code("for x, y in dataset:\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x))\n"
         "    grads = tape.gradient(loss, model.trainable_variables)\n"
         "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    %timeit -n1 pass\n"
         "    !nvidia-smi", count=4),
)


def tapelint(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def training(tmp_path: Path) -> Path:
    path = tmp_path / "train.ipynb"
    path.write_text(nbformat_text(TRAINING), encoding="utf-8")
    return path


def test_findings_are_reported_at_cell_line_and_column(training: Path):
    run = tapelint(training.name, cwd=training.parent)
    assert "train.ipynb:cell 5:2:38: TL501 `lr=`" in run.stdout
    assert "train.ipynb:cell 5:2:48: TL501 `decay=`" in run.stdout
    assert run.returncode == 1


def test_cells_are_understood_together_as_one_module(training: Path):
    # The softmax model of cell 3 meets the from_logits=True loss of cell 5 in the loop of cell 6.
    diagnostics = lint_notebook_text(training.read_text(encoding="utf-8"), "train.ipynb", Config())
    softmax = [d for d in diagnostics if d.code == "TL101"]
    assert [(d.cell, d.line) for d in softmax] == [(5, 3)]
    # The optimizer of cell 5 is applied in cell 6: not "never applied".
    assert not [d for d in diagnostics if d.code == "TL001"]


def test_magics_shell_lines_and_help_are_masked_not_syntax_errors(training: Path):
    diagnostics = lint_notebook_text(training.read_text(encoding="utf-8"), "train.ipynb", Config())
    assert not [d for d in diagnostics if d.code == "TL000"], diagnostics


def test_masking_keeps_lines_and_block_structure():
    source = "%%time\nfor i in range(3):\n    !echo $i\nfiles = !ls\nnp.mean?\n??np\nx = 1\n"
    masked, lines = mask_magics(source)
    assert lines == {1, 3, 4, 5, 6}
    assert masked.count("\n") == source.count("\n")
    assert masked.splitlines()[6] == "x = 1"
    assert [len(a) for a in masked.splitlines()] == [len(b) for b in source.splitlines()]
    compile(masked, "cell", "exec")


def test_a_cell_that_is_plain_python_is_never_masked():
    data = notebook(code('import tensorflow as tf\nname = ("%s"\n        % "adam")\nquestion = """why?\n!not a shell\n"""\n'
                         "opt = tf.keras.optimizers.Adam(lr=1e-3)\n"))
    diagnostics = lint_notebook_text(nbformat_text(data), "nb.ipynb", Config())
    assert [(d.code, d.line) for d in diagnostics] == [("TL501", 7)]


def test_automagic_shell_commands_without_percent_are_masked_and_python_using_those_names_is_not():
    # IPython runs `ls ./data/train/` as %ls (automagic); `ls = [...]` and `cd(x)` stay Python.
    data = notebook(code("ls ./data/train/\npip install -q tensorflow_hub\n"),
                    code("import tensorflow as tf\nls = [1]\ncd = len\ncd(ls)\nopt = tf.keras.optimizers.Adam(lr=0.1)\n"))
    diagnostics = lint_notebook_text(nbformat_text(data), "nb.ipynb", Config())
    assert [(d.code, d.cell, d.line) for d in diagnostics] == [("TL501", 2, 5)]


def test_non_python_cell_magics_mask_the_whole_cell(tmp_path: Path):
    data = notebook(code("%%bash\nfor f in *.csv; do wc -l $f; done\n"),
                    code("%%writefile train.py\nimport tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1)\n"))
    assert lint_notebook_text(nbformat_text(data), "shell.ipynb", Config()) == []


def test_indented_bodies_of_non_python_cell_magics_are_not_syntax_errors():
    # A `%%writefile` of a module with a function, and a shell loop with an indented body.
    data = notebook(code("%%writefile task.py\nimport tensorflow as tf\n\ndef build():\n"
                         "    return tf.keras.optimizers.Adam(lr=1)\n"),
                    code("%%bash\nfor f in *.csv\ndo\n    wc -l $f\ndone\n"),
                    code("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.1)\n"))
    diagnostics = lint_notebook_text(nbformat_text(data), "nb.ipynb", Config())
    assert [(d.code, d.cell, d.line) for d in diagnostics] == [("TL501", 3, 2)]


def test_syntax_error_in_one_cell_is_reported_there_and_other_cells_are_still_checked():
    data = notebook(markdown("intro"), code("import tensorflow as tf\n"),
                    code("def broken(:\n    pass\n"),
                    code("opt = tf.keras.optimizers.Adam(lr=0.001)\n"))
    diagnostics = lint_notebook_text(nbformat_text(data), "nb.ipynb", Config())
    assert [(d.code, d.cell, d.line, d.column + 1) for d in diagnostics] == [
        ("TL000", 3, 1, 12), ("TL501", 4, 1, 32)]
    assert "this cell was not checked" in diagnostics[0].message


def test_json_output_carries_the_cell(training: Path):
    run = tapelint("--format", "json", training.name, cwd=training.parent)
    report = json.loads(run.stdout)
    cells = {(d["code"], d["cell"], d["line"], d["column"]) for d in report["diagnostics"]}
    assert ("TL501", 5, 2, 38) in cells
    fix = next(d["fix"] for d in report["diagnostics"] if d["code"] == "TL501" and d["column"] == 38)
    assert fix["edits"][0]["line"] == 2  # fix positions count within the cell, like the finding


def test_invalid_notebook_json_is_a_one_line_error(tmp_path: Path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "ok.py").write_text("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1e-3)\n",
                                    encoding="utf-8")
    run = tapelint(".", cwd=tmp_path)
    assert run.returncode == 2
    errors = run.stderr.strip().splitlines()
    assert errors == ["tapelint: error: broken.ipynb: not a valid notebook: invalid JSON at line 1, column 12 "
                      "(Expecting value)"]
    assert "ok.py:2:32: TL501" in run.stdout  # the other files are still checked


def test_notebook_without_cells_is_a_one_line_error(tmp_path: Path):
    (tmp_path / "data.ipynb").write_text('{"hello": 1}', encoding="utf-8")
    run = tapelint("data.ipynb", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "data.ipynb: not a valid notebook: no `cells` list" in run.stderr


def test_fix_changes_only_the_fixed_source_lines(training: Path):
    before = training.read_text(encoding="utf-8")
    run = tapelint("--fix", training.name, cwd=training.parent)
    after = training.read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [('    "optimizer = tf.keras.optimizers.Adam(lr=0.001, decay=0.0)\\n",',
                        '    "optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)\\n",')]
    assert len(before.splitlines()) == len(after.splitlines()) and after.endswith("}\n")
    data = json.loads(after)
    assert data["cells"][1]["outputs"] == TRAINING["cells"][1]["outputs"]
    assert data["metadata"] == TRAINING["metadata"]
    assert "Fixed 2 findings in 1 file." in run.stdout


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_fix_keeps_indentation_key_order_and_missing_final_newline(tmp_path: Path, indent: int):
    data = notebook(code("import tensorflow as tf\nopt = tf.keras.optimizers.SGD(lr=0.1)\n"))
    data = {"nbformat": 4, "metadata": data["metadata"], "cells": data["cells"], "nbformat_minor": 5}
    text = json.dumps(data, indent=indent)  # unsorted keys, no final newline, escaped non-ASCII
    path = tmp_path / "nb.ipynb"
    path.write_text(text, encoding="utf-8")
    tapelint("--fix", path.name, cwd=tmp_path)
    after = path.read_text(encoding="utf-8")
    assert after == text.replace("SGD(lr=0.1)", "SGD(learning_rate=0.1)")


def test_fix_works_when_cell_source_is_one_string_and_keeps_magics(tmp_path: Path):
    data = notebook(code("x"))
    data["cells"][0]["source"] = "%load_ext tensorboard\nimport tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=3e-4)"
    path = tmp_path / "one.ipynb"
    path.write_text(nbformat_text(data), encoding="utf-8")
    run = tapelint("--fix", path.name, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    source = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
    assert source == "%load_ext tensorboard\nimport tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=3e-4)"


def test_diff_of_a_notebook_is_shown_per_cell(training: Path):
    before = training.read_bytes()
    run = tapelint("--diff", training.name, cwd=training.parent)
    assert run.returncode == 1 and training.read_bytes() == before
    assert "--- train.ipynb:cell 5\n+++ train.ipynb:cell 5\n" in run.stdout
    assert "+optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)" in run.stdout


def test_stdin_notebook_with_fix_prints_the_fixed_notebook(training: Path):
    text = training.read_text(encoding="utf-8")
    run = tapelint("--fix", "--stdin-filename", "train.ipynb", "-", cwd=training.parent, stdin=text)
    assert json.loads(run.stdout)["cells"][4]["source"][1] == "optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)\n"


def test_folders_are_walked_for_notebooks_and_config_can_exclude_them(training: Path):
    folder = training.parent
    assert "train.ipynb:cell 5" in tapelint(".", cwd=folder).stdout
    (folder / "pyproject.toml").write_text("[tool.tapelint]\ninclude-notebooks = false\n", encoding="utf-8")
    run = tapelint(".", cwd=folder)
    assert "train.ipynb" not in run.stdout and run.returncode == 0
    (folder / "pyproject.toml").write_text('[tool.tapelint]\nextend-exclude = ["*.ipynb"]\n', encoding="utf-8")
    run = tapelint(".", cwd=folder)
    assert "train.ipynb" not in run.stdout and run.returncode == 0


def test_notebook_of_another_language_is_not_linted():
    data = notebook(code("library(keras)\nx <- 1\n"),
                    metadata={"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}})
    assert lint_notebook_text(nbformat_text(data), "r.ipynb", Config()) == []


def test_cells_are_numbered_among_all_cells_including_markdown():
    data = notebook(markdown("a"), markdown("b"), code("import tensorflow as tf\n"),
                    {"cell_type": "raw", "metadata": {}, "source": ["raw text"]},
                    code("opt = tf.keras.optimizers.Adam(lr=1.0)\n"))
    diagnostics = lint_notebook_text(nbformat_text(data), "nb.ipynb", Config(select=("TL501",)))
    assert [(d.cell, d.line) for d in diagnostics] == [(5, 1)]


def test_noqa_in_a_cell_suppresses_the_finding():
    data = notebook(code("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1e-3)  # noqa: TL501\n"))
    assert lint_notebook_text(nbformat_text(data), "nb.ipynb", Config()) == []


def test_a_cell_indented_as_a_whole_is_read_as_ipython_runs_it():
    # IPython strips the first line's indentation from the cell before running it.
    data = notebook(code("import tensorflow as tf\n"),
                    code("  optimizer = tf.keras.optimizers.Adam(lr=0.01)\n  steps = 10\n"))
    found = lint_notebook_text(json.dumps(data), "nb.ipynb", Config())
    assert [(d.code, d.cell, d.line, d.column) for d in found] == [("TL501", 2, 1, 39)]
    assert found[0].fix is None  # written for the dedented text: not offered for the cell as it is


def test_an_indented_line_that_is_really_a_syntax_error_is_still_reported():
    data = notebook(code("import tensorflow as tf\nx = 1\n    y = 2\n"))
    found = lint_notebook_text(json.dumps(data), "nb.ipynb", Config())
    assert [d.code for d in found] == ["TL000"]


def test_a_lone_carriage_return_in_a_cell_keeps_findings_and_fixes_in_their_cell():
    # Python (and libcst) end a line at a lone "\r" as at "\n"; a cell must be split the same way as a .py
    # file, or cell 1's finding moves into cell 2 and cell 2's fix is written at the wrong offset there.
    first = ["%matplotlib inline\r", "import tensorflow as tf\n", "# stray\r", "# cr\n",
             "opt = tf.keras.optimizers.Adam(lr=0.01)\n"]
    second = ["x = 1\n", "optimizer_two = tf.keras.optimizers.SGD(lr=0.02)\n"]
    data = notebook(code("x"), code("x"))
    data["cells"][0]["source"], data["cells"][1]["source"] = first, second
    text = nbformat_text(data)
    found = lint_notebook_text(text, "cr.ipynb", Config())
    assert [(d.code, d.cell, d.line, d.column) for d in found] == [("TL501", 1, 5, 31), ("TL501", 2, 2, 40)]
    fixed = json.loads(fix_notebook_text(text, "cr.ipynb", Config()).source)
    assert fixed["cells"][0]["source"] == [*first[:4], "opt = tf.keras.optimizers.Adam(learning_rate=0.01)\n"]
    assert fixed["cells"][1]["source"] == [second[0], "optimizer_two = tf.keras.optimizers.SGD(learning_rate=0.02)\n"]
