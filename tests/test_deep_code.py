"""Deeply nested but valid code is linted like any other file, and what is deeper than anything can
analyse becomes one finding for that file: never a crashed run."""

from __future__ import annotations

import pytest

from tapelint.config import Config
from tapelint.engine import lint_source

HEAD = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.1)\n"
DEEP = {
    "400 chained ands": "x = " + " and ".join(["a"] * 400) + "\n",
    "150 nested lists": "x = " + "[" * 150 + "]" * 150 + "\n",
    "400 elifs": "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(400)),
    "a 400-term sum": "x = " + " + ".join(f"v{i}" for i in range(400)) + "\n",
    "200 chained calls": "x = y" + ".f()" * 200 + "\n",
    "400 implicitly joined strings": "x = (" + " ".join(['"s"'] * 400) + ")\n",
}


@pytest.mark.parametrize("body", DEEP.values(), ids=DEEP.keys())
def test_deep_valid_code_is_linted(body: str):
    found = lint_source(HEAD + body, "deep.py", Config())
    assert [d.code for d in found] == ["TL501"]


def test_code_too_deep_for_the_parser_is_one_finding_for_that_file():
    found = lint_source("import tensorflow as tf\nx = " + "[" * 1000 + "]" * 1000 + "\n", "deep.py", Config())
    assert [d.code for d in found] == ["TL000"]
