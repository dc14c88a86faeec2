"""Properties that hold for every input, checked on generated code: any valid module lints without an
exception or an internal error and gives the same output twice; `--fix` output parses and a second
`--fix` changes nothing. A mutation fuzzer over the corpus (slow tier) checks the same on broken code."""

from __future__ import annotations

import ast

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tapelint.config import Config  # noqa: E402
from tapelint.engine import lint_source  # noqa: E402
from tapelint.fixes import fix_source  # noqa: E402
from tests.mutants import check, mutants  # noqa: E402

LOOP = """
model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(lr=0.001)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def _lints_cleanly(text: str) -> None:
    config = Config()
    first = lint_source(text, "generated.py", config, force=True)
    assert not [d for d in first if d.code == "TL999"], [d.message for d in first if d.code == "TL999"]
    assert lint_source(text, "generated.py", config, force=True) == first


hypothesmith = pytest.importorskip("hypothesmith")


@pytest.mark.slow
@settings(SETTINGS, max_examples=100)
@given(st.deferred(hypothesmith.from_grammar))  # built when the (slow) test runs, not at import
def test_any_valid_module_next_to_a_training_loop_lints_without_internal_errors(module: str):
    # The generated code alone mentions no TensorFlow, so no rule would look at it: put it in a TF file.
    _lints_cleanly("import tensorflow as tf\n" + module + "\n" + LOOP)


@pytest.mark.slow
@settings(SETTINGS, max_examples=100)
@given(st.deferred(hypothesmith.from_node))
def test_any_libcst_generated_module_lints_without_internal_errors(module: str):
    _lints_cleanly("import tensorflow as tf\n" + module + "\n")


# Statements with fixes (and neighbours that have none), put together in any order and nesting, with any
# of Python's line endings.
SNIPPETS = [
    "optimizer = tf.keras.optimizers.Adam(lr=0.01)",
    "optimizer = tf.keras.optimizers.SGD(lr=0.1, decay=1e-6)",
    "opt = keras.optimizers.RMSprop(lr=1e-3)  # noqa: TL201",
    "metric = tf.keras.metrics.Mean()",
    "metric.reset_states()",
    "metric.update_state(loss)",
    "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)",
    "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])",
    "x = tf.constant([[1.0, 2.0]])",
    "with tf.GradientTape() as tape:\n    y = x * x",
    "grads = tape.gradient(y, x)",
    "pass",
    "# a comment",
    "",
]


@st.composite
def programs_with_fixes(draw) -> str:
    body = draw(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=8))
    wrapper = draw(st.sampled_from(["", "def train():\n", "for epoch in range(3):\n", "if True:\n\tif True:\n"]))
    indent = {"": "", "def train():\n": "    ", "for epoch in range(3):\n": "    ",
              "if True:\n\tif True:\n": "\t\t"}[wrapper]
    lines = ["import tensorflow as tf", "import keras"]
    inner = [indent + line for snippet in body for line in (snippet or "").split("\n")]
    if wrapper and not any(line.strip() and not line.strip().startswith("#") for line in inner):
        inner.append(indent + "pass")
    text = "\n".join(lines) + "\n" + wrapper + "\n".join(inner) + "\n"
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return text.replace("\n", ending)


@SETTINGS
@given(programs_with_fixes())
def test_fix_output_parses_and_a_second_fix_changes_nothing(text: str):
    config = Config()
    once = fix_source(text, "generated.py", config, unsafe=True).source
    ast.parse(once)
    assert fix_source(once, "generated.py", config, unsafe=True).source == once
    # Line endings are the user's: a fix never brings in another kind.
    if "\r\n" not in text and "\r" in text:
        assert "\n" not in once
    if "\r" not in text:
        assert "\r" not in once
    if "\r\n" in text:
        assert "\n" not in once.replace("\r\n", "")


@pytest.mark.slow
def test_corpus_mutants_never_crash_or_flip_flop():
    problems = [(index, problem) for index, text in enumerate(mutants(400, seed=7)) if (problem := check(text))]
    assert not problems, problems[:5]
