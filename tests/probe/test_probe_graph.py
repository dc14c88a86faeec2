"""The probe runs a `tf.function` step as a graph, as the script runs without it: the numbers match an eager
run, graph-only errors still fail the script, and the report says how each function ran."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"

DETERMINISTIC_STEP = '''
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(3)
rng = np.random.default_rng(3)
x = rng.normal(size=(32, 5)).astype("float32")
y = rng.integers(0, 3, size=32)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-2)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(10):
    train_step(x, y)
'''


# Two models, each stepped by its own tf.function, in turns (a GAN's discriminator and generator steps): the probe
# keeps each traced step's values in the graph and reads them later, and must still see the calls in the order they
# ran.
TWO_FUNCTIONS = '''
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(4)
rng = np.random.default_rng(4)
x = rng.normal(size=(32, 5)).astype("float32")
y = rng.integers(0, 3, size=32)
first = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
second = keras.Sequential([keras.Input((5,)), keras.layers.Dense(6, activation="tanh"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt_first, opt_second = keras.optimizers.Adam(1e-2), keras.optimizers.SGD(1e-1)


@tf.function
def step_first(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, first(x, training=True))
    grads = tape.gradient(loss, first.trainable_variables)
    opt_first.apply_gradients(zip(grads, first.trainable_variables))
    return loss


@tf.function
def step_second(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, second(x, training=True))
    grads = tape.gradient(loss, second.trainable_variables)
    opt_second.apply_gradients(zip(grads, second.trainable_variables))
    return loss


for step in range(10):
    step_first(x, y)
    step_second(x, y)
'''

# The whole loop inside one tf.function: the step runs in a graph loop, where the probe hands its values to a host
# callback each iteration, and stops the loop after the probed steps.
LOOP_IN_FUNCTION = '''
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
x = tf.constant(rng.normal(size=(32, 5)).astype("float32"))
y = tf.constant(rng.integers(0, 3, size=32))
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-2)


@tf.function
def train(steps):
    for _ in tf.range(steps):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


train(tf.constant(10))
'''


def probe(*args: str) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "tapelint", "probe", *args, "--format", "json", "--device", "cpu"],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=600)
    return done.returncode, json.loads(done.stdout)


def test_graph_step_measures_the_same_numbers_as_an_eager_run(tmp_path):
    script = tmp_path / "step.py"
    script.write_text(DETERMINISTIC_STEP, encoding="utf-8")
    _, graph = probe(str(script), "--steps", "3")
    _, eager = probe(str(script), "--steps", "3", "--functions", "eager")
    assert any("`train_step` ran as a graph" in note for note in graph["probe"]["notes"])
    assert any("`train_step` ran eagerly" in note for note in eager["probe"]["notes"])
    graph_steps, eager_steps = graph["probe"]["measurements"], eager["probe"]["measurements"]
    assert len(graph_steps) == len(eager_steps) == 4
    for g, e in zip(graph_steps, eager_steps):
        assert g["loss"] == pytest.approx(e["loss"], rel=1e-4)
        assert [v["name"] for v in g["variables"]] == [v["name"] for v in e["variables"]]
        assert [v["norm"] for v in g["variables"]] == pytest.approx([v["norm"] for v in e["variables"]], rel=1e-3)
        assert (g["updates"] is None) == (e["updates"] is None)
        if g["updates"] is not None:
            assert {k: u["changed"] for k, u in g["updates"].items()} == \
                {k: u["changed"] for k, u in e["updates"].items()}
    # Sites of the traced calls point at the user's lines, not at autograph's generated code.
    assert graph["probe"]["measurements"][0]["site"]["path"] == str(script)
    assert graph["probe"]["measurements"][0]["site"]["line"] == DETERMINISTIC_STEP.splitlines().index(
        "    grads = tape.gradient(loss, model.trainable_variables)") + 1


@pytest.mark.parametrize("code", [TWO_FUNCTIONS, LOOP_IN_FUNCTION], ids=["two-functions", "loop-in-function"])
def test_graph_steps_are_seen_in_the_order_they_ran(tmp_path, code):
    script = tmp_path / "steps.py"
    script.write_text(code, encoding="utf-8")
    graph_code, graph = probe(str(script), "--steps", "4")
    _, eager = probe(str(script), "--steps", "4", "--functions", "eager")
    assert graph_code == 0, graph
    assert graph["probe"]["status"] == "stopped"
    graph_steps, eager_steps = graph["probe"]["measurements"], eager["probe"]["measurements"]
    assert len(graph_steps) == len(eager_steps) >= 5
    for g, e in zip(graph_steps, eager_steps):
        assert [v["name"] for v in g["variables"]] == [v["name"] for v in e["variables"]]
        assert g["loss"] == pytest.approx(e["loss"], rel=1e-4)
        assert [v["norm"] for v in g["variables"]] == pytest.approx([v["norm"] for v in e["variables"]], rel=1e-3)
        assert (g["updates"] is None) == (e["updates"] is None)


@pytest.mark.parametrize("functions", ["graph", "eager"])
def test_numpy_inside_a_tf_function_fails_under_the_probe_as_it_does_without(functions):
    code, report = probe(str(SCRIPTS / "numpy_in_function.py"), "--steps", "2", "--functions", functions)
    assert code == 1
    assert report["probe"]["status"] == "raised"
    assert "'SymbolicTensor' object has no attribute 'numpy'" in report["probe"]["error"]["message"]
    frame = report["probe"]["error"]["frame"]
    assert frame["path"].endswith("numpy_in_function.py") and frame["line"] == 22


def test_xla_step_runs_eagerly_and_is_traced_once_more_at_the_end():
    code, report = probe(str(SCRIPTS / "jit_step.py"), "--steps", "2")
    assert code == 0, report
    notes = report["probe"]["notes"]
    assert any("`train_step` ran eagerly under the probe: jit_compile=True" in note for note in notes)
    assert any("once more as a graph" in note for note in notes)
