"""Defects found by running tapelint on real code: each test pins the behaviour that was wrong."""

from __future__ import annotations

import ast
import importlib
import json
import re

import pytest

from tapelint.config import Config
from tapelint.engine import lint_source
from tapelint.fixes import fix_source
from tapelint.notebooks import lint_notebook_text, mask_magics
from tapelint.rule import describe_line

tl502 = importlib.import_module("tapelint.rules.tl502_removed_keras_api")


def _only(code: str, source: str) -> list:
    return [d for d in lint_source(source, "example.py", Config(select=(code,))) if d.code == code]


# --- TL502: renames only to names that exist in Keras 3 ----------------------------------------------------


def _keras_module(namespace: str) -> str:
    """`keras.optimizers.experimental` -> `keras.optimizers`: the module the stable names live below."""
    return "keras" if namespace == "keras.experimental" else namespace.split(".experimental")[0]


def _attribute(root: object, dotted_path: str) -> object | None:
    for part in filter(None, dotted_path.split(".")):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
def test_every_safe_experimental_rename_exists_in_the_installed_keras():
    keras = pytest.importorskip("keras")
    if not keras.__version__.startswith("3."):
        pytest.skip("the renames target Keras 3")
    missing = []
    for namespace, (below, members) in tl502.MOVED.items():
        module = _attribute(keras, _keras_module(namespace).removeprefix("keras"))
        for member in sorted(members):
            if _attribute(module, f"{below}.{member}") is None:
                missing.append(f"{namespace}.{member}")
    assert not missing


def test_members_without_a_replacement_are_really_gone_and_their_advice_exists():
    keras = pytest.importorskip("keras")
    if not keras.__version__.startswith("3."):
        pytest.skip("the advice targets Keras 3")
    for old, advice in tl502.GONE.items():
        namespace, member = old.rsplit(".", 1)
        below = tl502.MOVED[namespace][0]
        module = _attribute(keras, _keras_module(namespace).removeprefix("keras"))
        assert _attribute(module, f"{below}.{member}") is None, f"{old} has a stable name now: rename it"
        for name in re.findall(r"`\{keras\}\.([\w.]+)", advice):
            assert _attribute(keras, name) is not None, f"{old}: advice names keras.{name}, which does not exist"
        for method in re.findall(r"`model\.(\w+)\(", advice):
            assert hasattr(keras.Model, method), f"{old}: advice names model.{method}()"


def test_export_saved_model_is_reported_without_a_fix():
    source = 'import tensorflow as tf\ntf.keras.experimental.export_saved_model(model, "saved")\n'
    [finding] = _only("TL502", source)
    assert finding.fix is None
    assert "model.export(path)" in finding.message and 'model.save("model.keras")' in finding.message
    assert "optimizers.schedules.export_saved_model" not in finding.message
    assert fix_source(source, "example.py", Config(select=("TL502",)), unsafe=True).source == source


def test_load_from_saved_model_points_to_load_model_and_tfsmlayer():
    source = 'from tensorflow import keras\nmodel = keras.experimental.load_from_saved_model("saved")\n'
    [finding] = _only("TL502", source)
    assert finding.fix is None
    assert '`keras.saving.load_model("model.keras")`' in finding.message
    assert "`keras.layers.TFSMLayer(path)`" in finding.message


def test_cosine_decay_is_still_renamed_to_the_schedules_module():
    source = "import tensorflow as tf\nschedule = tf.keras.experimental.CosineDecayRestarts(1e-3, 100)\n"
    outcome = fix_source(source, "example.py", Config(select=("TL502",)))
    assert outcome.source == (
        "import tensorflow as tf\nschedule = tf.keras.optimizers.schedules.CosineDecayRestarts(1e-3, 100)\n"
    )


def test_optimizer_experimental_under_an_alias_is_renamed_below_the_alias():
    source = "from tensorflow.keras import optimizers as O\nopt = O.experimental.AdamW(1e-3)\n"
    outcome = fix_source(source, "example.py", Config(select=("TL502",)))
    assert outcome.source == "from tensorflow.keras import optimizers as O\nopt = O.AdamW(1e-3)\n"


def test_preprocessing_layer_that_keras_3_dropped_gets_no_rename():
    source = ("import tensorflow as tf\n"
              "augment = tf.keras.layers.experimental.preprocessing.RandomWidth(0.2)\n"
              "bn = tf.keras.layers.experimental.SyncBatchNormalization()\n")
    findings = _only("TL502", source)
    assert [d.fix for d in findings] == [None, None]
    assert "RandomZoom" in findings[0].message
    assert "BatchNormalization(synchronized=True)" in findings[1].message


def _module_exists(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_keras2_private_modules_are_really_gone_and_their_public_modules_hold_what_the_advice_names():
    keras = pytest.importorskip("keras")
    if not keras.__version__.startswith("3."):
        pytest.skip("the modules are reported as missing from Keras 3")
    for module, (public, advice) in tl502.PRIVATE_MODULES.items():
        for root in ("keras", "tensorflow.keras"):
            spelled = root + module[len("keras"):]
            if root == "tensorflow.keras" and not _module_exists("tensorflow"):
                continue
            assert not _module_exists(spelled), f"{spelled} exists: Keras 3 did not remove it"
        if public is None:
            continue
        holder = _attribute(keras, public.removeprefix("keras"))
        assert holder is not None, f"{module}: the advice names {public}, which does not exist"
        for name in re.findall(r"`(\w+)`", advice):
            assert _attribute(holder, name) is not None, f"{module}: {public} has no {name}"


@pytest.mark.slow  # imports TensorFlow
def test_tensorflow_python_keras_still_exists_but_its_layers_do_not_go_into_a_keras_3_model():
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    if not keras.__version__.startswith("3.") or not _module_exists(tl502.TF_PRIVATE_KERAS):
        pytest.skip("TL502 reports TF's private copy of Keras 2 next to Keras 3")
    from tensorflow.python.keras.layers import Dense

    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        tf.keras.Sequential([tf.keras.Input((4,)), Dense(2)])


# --- TL501: TF1's RMSProp `decay` is Keras's `rho`, not a learning-rate decay ------------------------------


def test_rmsprop_decay_that_reads_like_rho_gets_no_inverse_time_decay():
    source = "import tensorflow as tf\nopt = tf.keras.optimizers.RMSprop(1e-3, decay=0.99)\n"
    [finding] = _only("TL501", source)
    assert "TF1's RMSProp, `decay` is what Keras calls `rho`" in finding.message
    assert finding.fix is not None and not finding.fix.safe
    assert fix_source(source, "example.py", Config(select=("TL501",))).source == source  # nothing safe
    fixed = fix_source(source, "example.py", Config(select=("TL501",)), unsafe=True).source
    assert fixed == "import tensorflow as tf\nopt = tf.keras.optimizers.RMSprop(1e-3, rho=0.99)\n"
    assert "InverseTimeDecay" not in fixed


def test_rmsprop_decay_of_unknown_value_is_not_turned_into_a_schedule():
    source = "import tensorflow as tf\nopt = tf.keras.optimizers.RMSprop(1e-3, decay=args.decay)\n"
    [finding] = _only("TL501", source)
    assert "`rho=args.decay`" in finding.message
    assert "InverseTimeDecay" not in fix_source(source, "example.py", Config(select=("TL501",)), unsafe=True).source


def test_rmsprop_decay_with_rho_already_given_gets_no_fix():
    source = "import tensorflow as tf\nopt = tf.keras.optimizers.RMSprop(1e-3, rho=0.9, decay=0.9)\n"
    [finding] = _only("TL501", source)
    assert finding.fix is None


@pytest.mark.parametrize("cls, decay", [("RMSprop", "1e-6"), ("Adam", "0.99"), ("SGD", "1e-4")])
def test_small_learning_rate_decays_and_other_optimizers_keep_the_schedule_fix(cls, decay):
    source = f"import tensorflow as tf\nopt = tf.keras.optimizers.{cls}(0.01, decay={decay})\n"
    [finding] = _only("TL501", source)
    assert "rho" not in finding.message
    fixed = fix_source(source, "example.py", Config(select=("TL501",)), unsafe=True).source
    assert fixed == (f"import tensorflow as tf\nopt = tf.keras.optimizers.{cls}(learning_rate=tf.keras.optimizers"
                     f".schedules.InverseTimeDecay(0.01, decay_steps=1, decay_rate={decay}))\n")


# --- Notebooks: messages that cite another line name its cell -----------------------------------------------


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
                   **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                  for kind, text in cells],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    })


def _in_notebook(code: str, *cells: tuple[str, str]) -> list:
    return [d for d in lint_notebook_text(_notebook(*cells), "train.ipynb", Config()) if d.code == code]


def test_describe_line_reads_line_in_a_file_and_cell_and_line_in_a_notebook():
    assert describe_line(12) == "line 12"
    assert describe_line(2, cell=3) == "cell 3, line 2"


def test_variable_rebound_in_a_notebook_cites_the_cell_of_the_variable():
    [finding] = _in_notebook(
        "TL303",
        ("markdown", "# Linear regression\n"),
        ("code", "import tensorflow as tf\n\nw = tf.Variable(tf.random.normal((3, 1)))\n"),
        ("code", "for x, y in [(tf.ones((4, 3)), tf.zeros((4, 1)))]:\n"
                 "    with tf.GradientTape() as tape:\n"
                 "        loss = tf.reduce_mean(tf.square(x @ w - y))\n"
                 "    dw = tape.gradient(loss, w)\n"
                 "    w = w - 0.01 * dw\n"),
    )
    assert (finding.cell, finding.line) == (3, 5)
    assert "`w` was a `tf.Variable` (cell 2, line 3)" in finding.message


def test_second_gradient_in_a_later_cell_cites_the_cell_of_the_first():
    [finding] = _in_notebook(
        "TL005",
        ("code", "import tensorflow as tf\nx = tf.Variable(2.0)\n"),
        ("markdown", "Two gradients from one tape"),
        ("code", "with tf.GradientTape() as tape:\n    y = x * x\n    z = y * y\n\ndy = tape.gradient(y, x)\n"),
        ("code", "dz = tape.gradient(z, x)\n"),
    )
    assert (finding.cell, finding.line) == (4, 1)
    assert "(the first at cell 3, line 5)" in finding.message
    assert "line 9" not in finding.message  # the line of the composed module, meaningless to the user


def test_mixed_precision_policy_is_cited_by_cell():
    [finding] = _in_notebook(
        "TL203",
        ("code", "!pip install -q tensorflow\nimport tensorflow as tf\n"),
        ("code", 'tf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
                 "model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype='float32')])\n"
                 "optimizer = tf.keras.optimizers.Adam(1e-3)\n"),
        ("code", "def train_step(x, y):\n"
                 "    with tf.GradientTape() as tape:\n"
                 "        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))\n"
                 "    grads = tape.gradient(loss, model.trainable_variables)\n"
                 "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"),
    )
    assert (finding.cell, finding.line) == (3, 4)
    assert "`mixed_float16` policy (cell 2, line 1)" in finding.message


def test_the_same_rule_in_a_py_file_still_cites_a_plain_line():
    source = ("import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as tape:\n    y = x * x\n"
              "    z = y * y\ndy = tape.gradient(y, x)\ndz = tape.gradient(z, x)\n")
    [finding] = _only("TL005", source)
    assert "(the first at line 6)" in finding.message


# --- Notebooks: a shell or line magic continued with `\` ----------------------------------------------------


@pytest.mark.parametrize("magic", ["!pip install foo \\\n    --upgrade\n",
                                   "%pip install foo \\\n        --upgrade \\\n  -q\n",
                                   "!apt-get install -y \\\nlibsndfile1\n"])
def test_a_magic_continued_on_indented_lines_is_not_a_syntax_error(magic):
    source = magic + "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1e-3)\n"
    masked, lines = mask_magics(source)
    ast.parse(masked)
    assert lines == frozenset(range(1, magic.count("\n") + 1))
    found = lint_notebook_text(_notebook(("markdown", "Setup"), ("code", source)), "setup.ipynb", Config())
    assert [(d.code, d.cell, d.line) for d in found] == [("TL501", 2, magic.count("\n") + 2)]


def test_a_continued_magic_inside_a_block_keeps_the_block_depth():
    source = ("import tensorflow as tf\nif not tf.config.list_physical_devices('GPU'):\n"
              "    !pip install tensorflow-cpu \\\n        --quiet\n    print('cpu')\n")
    masked, lines = mask_magics(source)
    ast.parse(masked)
    assert lines == frozenset({3, 4})
    assert not [d for d in lint_notebook_text(_notebook(("code", source)), "x.ipynb", Config()) if d.code == "TL000"]
