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


TOO_COMPLEX = {
    "10,000 unary minus signs": "x = " + "-" * 10000 + "1\n",
    "3,000 nots": "x = " + "not " * 3000 + "y\n",
    "300 nested lists": "x = " + "[" * 300 + "]" * 300 + "\n",
    "600 conditional expressions": "x = " + "1 if a else " * 600 + "1\n",
    "600 chained powers": "x = " + "**".join(["2"] * 600) + "\n",
}


@pytest.mark.parametrize("body", TOO_COMPLEX.values(), ids=TOO_COMPLEX.keys())
def test_text_too_complex_to_analyse_is_one_finding_in_a_moment(body: str):
    # 10,000 unary minus signs took 190 s and 5.5 GB in libcst's parser; refused before it, at once.
    import time

    start = time.perf_counter()
    found = lint_source(HEAD + body, "deep.py", Config())
    assert time.perf_counter() - start < 3
    assert [d.code for d in found] == ["TL000"]
    assert "too complex to analyse" in found[0].message


def test_brackets_in_strings_do_not_make_a_file_too_complex():
    found = lint_source(HEAD + 's = "' + "(" * 300 + '"\n# ' + "[" * 300 + "\n", "deep.py", Config())
    assert [d.code for d in found] == ["TL501"]


def test_code_too_deep_for_the_parser_is_one_finding_for_that_file():
    found = lint_source("import tensorflow as tf\nx = " + "[" * 1000 + "]" * 1000 + "\n", "deep.py", Config())
    assert [d.code for d in found] == ["TL000"]


# Each case runs in its own process: before the large-stack lint thread, these crashed the interpreter
# (SIGSEGV in libcst's native parser), which would take the test run down with it.
CRASHERS = {
    # Deeper than Python itself accepts, and minutes and gigabytes in libcst: one TL000, "too complex".
    "1,500 nested lists": ("x = " + "[" * 1500 + "]" * 1500 + "\n", "TL000"),
    "10,000 nested unary minus signs": ("x = " + "-" * 10000 + "1\n", "TL000"),
    "10,000 nested nots": ("x = " + "not " * 10000 + "y\n", "TL000"),
    "100,000 nested brackets": ("x = " + "[" * 100000 + "]" * 100000 + "\n", "TL000"),
    "a chain of 20,000 calls": ("x = f" + "(1)" * 20000 + "\n", "TL000"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CRASHERS))
def test_pathological_nesting_never_crashes_the_run(case: str, tmp_path):
    import subprocess
    import sys

    body, code = CRASHERS[case]
    (tmp_path / "deep.py").write_text(HEAD + body, encoding="utf-8")
    (tmp_path / "other.py").write_text(HEAD, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "tapelint", "--jobs", "1", "deep.py", "other.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr[-500:]
    assert "deep.py:" in run.stdout and code in run.stdout
    if code == "TL501":
        assert "deep.py:2:" in run.stdout  # the deep file itself was checked
    assert "other.py:2:" in run.stdout  # the run went on


def test_a_model_whose_call_goes_back_through_itself_is_not_an_internal_error():
    # Seen in keras/src/layers/layer.py under the cross-module prelude: the subclass's `call` returns a
    # helper's call of a parameter that is the model itself, so reading the model reads its `call` again.
    source = '''
import keras

class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.drop = keras.layers.Dropout(0.5)

    def call(self, x, training=True):
        return run(self, x)

def run(model, x):
    return model(x)

net = Net()
metric = keras.metrics.Mean()
for epoch in range(3):
    for x in batches:
        metric.update_state(run(net, x))
'''
    found = lint_source(source, "cycle.py", Config())
    assert not [d for d in found if d.code == "TL999"], [d.message for d in found]
