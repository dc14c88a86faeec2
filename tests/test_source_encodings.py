"""Files are read as Python reads them: UTF-8, a UTF-8 BOM, or the encoding a PEP 263 coding cookie
names; `--fix` writes them back in that same encoding, changing only the bytes of its edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cli import app
from tapelint.errors import InputError
from tapelint.files import decode
from tapelint.atomic import write_atomic

LATIN1_LOOP = (
    "# -*- coding: latin-1 -*-\n"
    "import tensorflow as tf\n"
    "# Entraînement du modèle (café)\n"
    "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
    "optimizer = tf.keras.optimizers.Adam(lr=0.01)\n"
    "for x, y in batches:\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
)


def invoke(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(app, list(args), input=stdin)


def test_a_latin1_file_with_a_coding_cookie_is_linted(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_bytes(LATIN1_LOOP.encode("latin-1"))
    result = invoke(str(path))
    assert result.exit_code == 1, result.output
    assert "train.py:5:" in result.output and "TL501" in result.output
    assert "not valid" not in result.output


def test_fix_writes_a_cookie_file_back_in_its_own_encoding(tmp_path: Path):
    path = tmp_path / "train.py"
    before = LATIN1_LOOP.encode("latin-1")
    path.write_bytes(before)
    result = invoke("--fix", str(path))
    assert result.exit_code == 0, result.output
    after = path.read_bytes()
    # Only the edit changed: the accented comment keeps its single latin-1 bytes.
    assert after == before.replace(b"Adam(lr=0.01)", b"Adam(learning_rate=0.01)")
    assert b"caf\xe9" in after and "café".encode("utf-8") not in after


def test_fix_of_a_cookie_file_read_from_stdin_answers_in_that_encoding():
    result = CliRunner().invoke(app, ["--fix", "-"], input=LATIN1_LOOP.encode("latin-1"))
    assert result.exit_code == 0, result.output
    assert b"Adam(learning_rate=0.01)" in result.stdout_bytes
    assert b"caf\xe9" in result.stdout_bytes


def test_bytes_that_do_not_match_the_cookie_are_a_one_line_error(tmp_path: Path):
    (tmp_path / "bad.py").write_bytes("# coding: ascii\nx = 'é'\n".encode("utf-8"))
    (tmp_path / "good.py").write_bytes(LATIN1_LOOP.encode("latin-1"))
    result = invoke(str(tmp_path))
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("tapelint: error:")]
    assert len(errors) == 1 and "bad.py: not valid ascii, the encoding its coding cookie declares," in errors[0]
    assert "good.py:5:" in result.output  # the other file is still linted


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# -*- coding: klingon -*-\nx = 1\n", "unknown encoding: klingon"),
        (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", "coding cookie names another encoding than its UTF-8 BOM"),
    ],
)
def test_a_cookie_python_rejects_is_rejected_with_python_s_reason(data: bytes, message: str):
    with pytest.raises(InputError, match=message):
        decode(data, "x.py")


def test_a_cookie_on_line_three_is_not_a_cookie():
    data = b"# one\n# two\n# coding: latin-1\nx = '\xe9'\n"
    with pytest.raises(InputError, match="not valid UTF-8"):
        decode(data, "x.py")


def test_a_notebook_is_json_and_always_utf8():
    cell = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n# coding: latin-1\n'
    assert decode(cell.encode("utf-8"), "n.ipynb", python=False) == cell


def test_text_the_encoding_cannot_hold_leaves_the_file_untouched(tmp_path: Path):
    path = tmp_path / "x.py"
    path.write_bytes(b"# coding: latin-1\nx = 1\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "# coding: latin-1\nx = '\u4e2d'\n", "latin-1")
    assert path.read_bytes() == b"# coding: latin-1\nx = 1\n"
    assert not list(tmp_path.glob("*.tapelint-tmp"))
