"""The engine's promises: one parse, isolation of crashing rules, prefiltering, stable output."""

from __future__ import annotations

import subprocess
import sys

from tapelint import Config, lint_source
from tapelint.analysis.facts import Facts
from tapelint.diagnostic import Severity
from tapelint.rule import Rule

import libcst as cst

SEED_LIKE = """\
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(lr=0.01)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(tf.zeros((1, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
"""


def test_import_tapelint_does_not_import_tensorflow_or_pygls():
    code = ("import sys, tapelint, tapelint.cli, tapelint.commands, tapelint.registry; tapelint.registry.all_rules(); "
            "bad = [m for m in ('tensorflow', 'keras', 'pygls', 'numpy') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_crashing_rule_becomes_one_internal_error_and_others_still_report():
    class Exploding(Rule):
        code = "TL998"
        name = "exploding"
        message = "never"
        triggers = ("tensorflow",)

        def visit_Call(self, node: cst.Call) -> None:
            raise ValueError("boom")

    from tapelint.registry import all_rules

    rules = (*all_rules(), Exploding)
    diagnostics = lint_source(SEED_LIKE, "seed.py", Config(), rules=rules)
    internal = [d for d in diagnostics if d.code == "TL999"]
    assert len(internal) == 1
    assert "TL998" in internal[0].message and "boom" in internal[0].message
    assert internal[0].severity is Severity.ERROR
    assert {"TL001", "TL501"} <= {d.code for d in diagnostics}


def test_files_without_tensorflow_are_not_parsed_when_discovered():
    broken_but_unrelated = "def f(:\n    pass\n"
    assert lint_source(broken_but_unrelated, "x.py", Config(), force=False) == []
    forced = lint_source(broken_but_unrelated, "x.py", Config(), force=True)
    assert [d.code for d in forced] == ["TL000"]


def test_output_is_sorted_by_position():
    diagnostics = lint_source(SEED_LIKE, "seed.py", Config())
    keys = [(d.line, d.column) for d in diagnostics]
    assert keys == sorted(keys)


def test_ignore_tl000_hides_syntax_errors():
    config = Config(ignore=("TL000",))
    assert lint_source("import tensorflow\ndef f(:\n", "x.py", config) == []


def test_imports_resolve_every_keras_spelling():
    module = cst.parse_module(
        "import tensorflow as tf\n"
        "from tensorflow import keras\n"
        "import keras as K\n"
        "import tf_keras\n"
        "from tensorflow.keras.optimizers import Adam as A\n"
        "from tensorflow.keras import layers\n"
        "a = tf.keras.optimizers.Adam\nb = keras.optimizers.Adam\nc = K.optimizers.Adam\n"
        "d = tf_keras.optimizers.Adam\ne = A\nf = tf.optimizers.Adam\ng = layers.Dense\n"
    )
    facts = Facts(module)
    resolved = {b.target: facts.resolve(b.value) for b in facts.bindings}
    for name in "abcdef":
        assert resolved[name] == "keras.optimizers.Adam", (name, resolved[name])
    assert resolved["g"] == "keras.layers.Dense"


def test_tape_blocks_and_gradient_calls_are_recorded_with_persistence():
    module = cst.parse_module(
        "import tensorflow as tf\n"
        "with tf.GradientTape(persistent=True) as outer:\n"
        "    with tf.GradientTape() as inner:\n"
        "        y = x * x\n"
        "    dy = inner.gradient(y, x)\n"
        "d2y = outer.gradient(dy, x)\n"
    )
    facts = Facts(module)
    assert [(t.name, t.persistent) for t in facts.tapes] == [("outer", True), ("inner", False)]
    assert [c.receiver for c in facts.gradient_calls()] == ["inner", "outer"]
    inner_call = facts.gradient_calls()[0]
    assert [t.name for t in inner_call.tapes] == ["outer"]


def test_the_cyclic_collector_pauses_during_a_lint_and_comes_back_as_it_was(monkeypatch):
    import gc

    import tapelint.engine as engine

    seen = []
    original = engine._lint_source

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "_lint_source", recording)
    assert gc.isenabled()
    engine.lint_source("import tensorflow as tf\nx = tf.constant(1)\n", "a.py")
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        engine.lint_source("import tensorflow as tf\nx = tf.constant(1)\n", "a.py")
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


def test_a_lint_leaves_no_reference_cycle_holding_its_tree():
    """Reference counting frees a lint's tree and facts as soon as it ends: nothing of it is left for the
    cyclic collector, which would otherwise trace every node once more (0.3 s at 8,800 lines)."""
    import gc

    import libcst as cst

    from pathlib import Path

    TRAIN_LOOP = (Path(__file__).resolve().parents[1] / "examples" / "seed2_vgg_cifar_loop.py").read_text()
    lint_source(TRAIN_LOOP, "train.py")  # imports and caches warmed
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        found = lint_source(TRAIN_LOOP, "train.py")
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert found  # the file was analysed
    assert left == []


def test_warm_up_fills_what_every_rule_fills_on_its_first_lint():
    # The daemon warms the engine once so that its forks do not each pay a process's first lint.
    from tapelint import registry
    from tapelint.engine import warm_up

    warm_up()
    assert all("_visitor_names_cache" in rule.__dict__ for rule in registry.all_rules())
