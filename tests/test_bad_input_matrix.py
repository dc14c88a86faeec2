"""Every kind of bad input, file by file: each gives at most one line about that file, the other files are
still linted, the exit code says what happened, and there is never a traceback or a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from tapelint.cli import app

GOOD = """import tensorflow as tf

optimizer = tf.keras.optimizers.Adam(lr=0.001)
"""
LOOP = """import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _notebook(cells: list, nbformat: int = 4) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": nbformat, "nbformat_minor": 5})


def _code(source) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("pipe"))
    path.symlink_to(path.with_name("pipe"))


def _link_to_kernel_file(path: Path) -> None:
    # /proc/kmsg is "regular" and blocks on read (root only); any /proc file has its danger: not a file.
    path.symlink_to("/proc/kmsg" if os.geteuid() == 0 else "/proc/self/status")


def _symlink_loop(path: Path) -> None:
    path.symlink_to(path)


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "inner.py").write_text(GOOD, encoding="utf-8")


# name -> (file name, bytes or a function that makes it, the expected outcome for that file)
# outcome: "clean" (linted, nothing to say), "finding" (linted, a finding), "TL000" (linted as not
# parseable), "error" (one `tapelint: error:` line, exit 2)
CASES: dict[str, tuple[str, bytes | Callable[[Path], None], str]] = {
    "syntax error": ("bad.py", b"import tensorflow as tf\ndef f(:\n", "TL000"),
    "unclosed bracket": ("bad.py", b"import tensorflow as tf\nx = (1,\n", "TL000"),
    "empty file": ("bad.py", b"", "clean"),
    "comments only": ("bad.py", b"# just a comment\n# and another\n", "clean"),
    "latin-1 without a cookie": ("bad.py", b"# caf\xe9\nimport tensorflow as tf\n", "error"),
    "latin-1 with a cookie": ("bad.py", "# coding: latin-1\n# café\n".encode("latin-1") + GOOD.encode(), "finding"),
    "unknown cookie": ("bad.py", b"# coding: klingon\nx = 1\n", "error"),
    "utf-8 BOM": ("bad.py", b"\xef\xbb\xbf" + GOOD.encode(), "finding"),
    "CRLF": ("bad.py", GOOD.replace("\n", "\r\n").encode(), "finding"),
    "lone CR line ends": ("bad.py", GOOD.replace("\n", "\r").encode(), "finding"),
    "tabs": ("bad.py", LOOP.replace("    ", "\t").encode() + b"opt = tf.keras.optimizers.Adam(lr=1.0)\n", "finding"),
    "tabs and spaces mixed as Python allows": (
        "bad.py", b"import tensorflow as tf\nif a:\n x = 1\n if a:\n  \tx = 1\n  \tif a:\n \t \t"
                  b"opt = tf.keras.optimizers.Adam(lr=0.01)\n", "finding"),
    "form feeds": ("bad.py", ("import tensorflow as tf\n\x0c\n" + GOOD.split("\n", 1)[1]).encode(), "finding"),
    "binary bytes named .py": ("bad.py", bytes(range(256)) * 4, "error"),
    "NUL byte in source": ("bad.py", b"import tensorflow as tf\nx = 1\x00\n", "TL000"),
    "1,000 nested parentheses": ("bad.py", b"import tensorflow as tf\nx = " + b"(" * 1000 + b"1" + b")" * 1000 + b"\n",
                                 "TL000"),
    "1,500 nested lists": ("bad.py", b"import tensorflow as tf\nx = " + b"[" * 1500 + b"]" * 1500 + b"\n", "TL000"),
    "a very long line": ("bad.py", b"import tensorflow as tf\nx = [" + b"1, " * 100_000 + b"]\n", "clean"),
    "python 3.12 syntax": ("bad.py", b"import tensorflow as tf\ntype Pair = tuple[int, int]\n"
                                     b"def first[T](xs: list[T]) -> T:\n    return xs[0]\n", "clean-or-TL000"),
    "over the 4 MB limit": ("bad.py", b"import tensorflow as tf\n" + b"x = 1\n" * 750_000, "error"),
    "symlink loop": ("bad.py", _symlink_loop, "error"),
    "folder named x.py": ("bad.py", _folder, "finding-inside"),
    "FIFO named .py": ("bad.py", _fifo, "error"),
    "link to a FIFO named .py": ("bad.py", _link_to_fifo, "error"),
    "link to a /proc file named .py": ("bad.py", _link_to_kernel_file, "error"),
    "notebook: broken JSON": ("bad.ipynb", b'{"cells": [', "error"),
    "notebook: cell without source": ("bad.ipynb", _notebook([{"cell_type": "code", "metadata": {}}]).encode(),
                                      "clean"),
    "notebook: source a number": ("bad.ipynb", _notebook([_code(GOOD), _code(42)]).encode(), "error"),
    "notebook: source a list holding a number": ("bad.ipynb", _notebook([_code(["x = 1\n", 7])]).encode(), "error"),
    "notebook: source as one string": ("bad.ipynb", _notebook([_code(GOOD)]).encode(), "finding"),
    "notebook: nbformat 3": ("bad.ipynb", json.dumps({"worksheets": [{"cells": [
        {"cell_type": "code", "input": GOOD.splitlines(True), "outputs": []}]}], "nbformat": 3}).encode(),
                             "any"),
    "notebook: 1,000 cells": ("bad.ipynb", _notebook([_code(["x = 1\n"])] * 999 + [_code(GOOD)]).encode(), "finding"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_gives_one_line_and_the_run_goes_on(case: str, tmp_path: Path):
    name, content, outcome = CASES[case]
    bad = tmp_path / name
    if callable(content):
        content(bad)
    else:
        bad.write_bytes(content)
    good = tmp_path / "good.py"
    good.write_text(GOOD, encoding="utf-8")
    result = CliRunner().invoke(app, [str(bad), str(good)], catch_exceptions=False)
    output = result.output
    assert "Traceback" not in output and "internal error" not in output, output
    assert "good.py:3:" in output, output  # the other file is always linted
    about_bad = [line for line in output.splitlines() if name in line and "inner.py" not in line]
    if outcome == "error":
        assert result.exit_code == 2, output
        assert len(about_bad) == 1 and about_bad[0].startswith("tapelint: error:"), output
    elif outcome == "TL000":
        assert result.exit_code == 1
        assert len(about_bad) == 1 and "TL000" in about_bad[0], output
    elif outcome == "clean":
        assert result.exit_code == 1 and about_bad == [], output
    elif outcome == "clean-or-TL000":
        assert all("TL000" in line for line in about_bad) and len(about_bad) <= 1, output
    elif outcome == "finding":
        assert about_bad and all("TL000" not in line and "error:" not in line for line in about_bad), output
    elif outcome == "finding-inside":
        assert "inner.py" in output
    else:
        assert len(about_bad) <= 1


def test_the_editor_server_declines_a_document_over_the_limit_once_and_stays_responsive(tmp_path: Path):
    pytest.importorskip("pygls")
    from tapelint.lsp import TapelintServer

    server = TapelintServer()
    messages = []
    server.notify = lambda method, params: messages.append(params.message)  # type: ignore[method-assign]
    uri = (tmp_path / "huge.py").as_uri()
    huge = "import tensorflow as tf\n" + "x = 1\n" * 750_000
    assert server.lint_text(uri, huge) == ()
    assert server.lint_text(uri, huge + "y = 2\n") == ()
    assert len(messages) == 1 and "over the 4 MB limit" in messages[0]
    found = server.lint_text(uri, GOOD)
    assert [d.code for d in found] == ["TL501"]
