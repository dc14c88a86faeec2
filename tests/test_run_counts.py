"""How often code runs: decorators, default values and annotations run once, when `def` runs, in the
enclosing scope; a function's body runs per call (per step, per trace). TL202, TL304, TL403 and TL401
ask this of the shared analysis, so each spelling of "made once, at def time" must stay silent, and the
same object made in the body must still be found.

The first case is tensorlayer's `_train_step(network, X, y, cost, train_op=tf.optimizers.Adam(...))`,
called once per batch: TL202 said the optimizer was created on every step."""

from __future__ import annotations

import textwrap

import pytest

from tapelint.analysis.facts import Facts
from tapelint.analysis.parsing import parse_module
from tapelint.config import parse
from tapelint.engine import lint_source

CODES = ["TL202", "TL304", "TL401", "TL403"]


def findings(source: str) -> list[tuple[str, int]]:
    config = parse({"select": CODES, "preview": True}, "test", None)
    return [(d.code, d.line) for d in lint_source(textwrap.dedent(source), "train.py", config)]


DATA = """
    import numpy as np
    import tensorflow as tf

    x_train = np.random.rand(256, 28, 28).astype("float32")
    y_train = np.random.randint(0, 10, size=(256,))
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
    network = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    cost = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
"""


# ----- TL202: an optimizer made once, at def time, in four spellings

def test_optimizer_as_a_default_argument_of_the_step_called_per_batch_is_silent():
    """tensorlayer's quantized_net tutorials, as they are written."""
    assert findings(DATA + """
    def _train_step(network, X_batch, y_batch, cost, train_op=tf.optimizers.Adam(learning_rate=0.0001)):
        with tf.GradientTape() as tape:
            y_pred = network(X_batch, training=True)
            _loss = cost(y_batch, y_pred)
        grad = tape.gradient(_loss, network.trainable_weights)
        train_op.apply_gradients(zip(grad, network.trainable_weights))
        return _loss

    for epoch in range(10):
        for X_batch, y_batch in dataset:
            _train_step(network, X_batch, y_batch, cost=cost)
    """) == []


def test_keyword_only_default_from_an_imported_class_is_silent():
    assert findings(DATA + """
    from tensorflow.keras.optimizers import Adam

    def train_one_batch(x, y, *, optimizer=Adam(1e-3)):
        with tf.GradientTape() as tape:
            loss = cost(y, network(x, training=True))
        grads = tape.gradient(loss, network.trainable_variables)
        optimizer.apply_gradients(zip(grads, network.trainable_variables))

    for epoch in range(5):
        for x, y in dataset:
            train_one_batch(x, y)
    """) == []


def test_method_default_and_class_attribute_are_silent():
    assert findings(DATA + """
    import keras

    class Trainer:
        optimizer = keras.optimizers.RMSprop(learning_rate=1e-3)

        def __init__(self, model):
            self.model = model

        def step(self, x, y, tracker=keras.metrics.Mean(name="loss")):
            with tf.GradientTape() as tape:
                loss = cost(y, self.model(x, training=True))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            tracker.update_state(loss)
            return tracker.result()

    trainer = Trainer(network)
    for epoch in range(3):
        for x, y in dataset:
            trainer.step(x, y)
    """) == []


def test_optimizer_made_in_the_body_of_the_step_is_still_reported():
    """The buggy twin: the same step with the optimizer as its first statement."""
    assert findings(DATA + """
    def _train_step(network, X_batch, y_batch, cost):
        train_op = tf.optimizers.Adam(learning_rate=0.0001)
        with tf.GradientTape() as tape:
            y_pred = network(X_batch, training=True)
            _loss = cost(y_batch, y_pred)
        grad = tape.gradient(_loss, network.trainable_weights)
        train_op.apply_gradients(zip(grad, network.trainable_weights))
        return _loss

    for epoch in range(10):
        for X_batch, y_batch in dataset:
            _train_step(network, X_batch, y_batch, cost=cost)
    """) == [("TL202", 12)]


def test_def_inside_the_training_loop_runs_its_defaults_every_iteration():
    """A `def` that itself runs per batch makes its defaults per batch: the run count follows the `def`."""
    assert findings(DATA + """
    for epoch in range(10):
        for X_batch, y_batch in dataset:
            def _train_step(x, y, train_op=tf.optimizers.Adam(learning_rate=0.0001)):
                with tf.GradientTape() as tape:
                    _loss = cost(y, network(x, training=True))
                grad = tape.gradient(_loss, network.trainable_weights)
                train_op.apply_gradients(zip(grad, network.trainable_weights))
            _train_step(X_batch, y_batch)
    """) == [("TL202", 13)]


# ----- TL403 / TL304 / TL401 inside tf.function: the default runs at def time, not in the trace

def test_traced_step_with_an_optimizer_default_is_silent_and_with_one_in_its_body_is_reported():
    """tensorlayer/utils.py: `@tf.function def _train_step(..., train_op=tf.optimizers.Adam(...))`
    runs twice without error on TensorFlow 2.21; the same optimizer in the body raises."""
    default = DATA + """
    @tf.function
    def _train_step(network, X_batch, y_batch, cost, train_op=tf.optimizers.Adam(learning_rate=0.0001), acc=None):
        with tf.GradientTape() as tape:
            y_pred = network(X_batch)
            _loss = cost(y_batch, y_pred)
        grad = tape.gradient(_loss, network.trainable_weights)
        train_op.apply_gradients(zip(grad, network.trainable_weights))
        return _loss

    for X_batch, y_batch in dataset:
        _train_step(network, X_batch, y_batch, cost)
    """
    assert findings(default) == []
    body = default.replace("cost, train_op=tf.optimizers.Adam(learning_rate=0.0001), acc=None):",
                           "cost, acc=None):\n        train_op = tf.optimizers.Adam(learning_rate=0.0001)")
    assert findings(body) == [("TL403", 13)]


def test_layer_default_and_trace_time_random_default_are_silent_but_body_forms_are_reported():
    silent = DATA + """
    @tf.function
    def train_step(x, y, head=tf.keras.layers.Dense(10), scale=np.random.uniform(0.5, 1.5)):
        with tf.GradientTape() as tape:
            loss = cost(y, head(network(x, training=True)) * scale)
        variables = network.trainable_variables + head.trainable_variables
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))

    opt = tf.keras.optimizers.Adam()
    for x, y in dataset:
        train_step(x, y)
    """
    assert findings(silent) == []
    buggy = silent.replace("head=tf.keras.layers.Dense(10), scale=np.random.uniform(0.5, 1.5)):",
                           "):\n        head = tf.keras.layers.Dense(10)\n        scale = np.random.uniform(0.5, 1.5)")
    found = {code for code, _ in findings(buggy)}
    assert {"TL401", "TL403"} <= found, findings(buggy)


# ----- the shared analysis: which scope a default's call belongs to

@pytest.mark.parametrize("header", [
    "def step(x, opt=Adam()):",
    "def step(x, *, opt=Adam()):",
    "async def step(x, opt: Adam = Adam()):",
    "@register(Adam())\ndef step(x):",
])
def test_calls_in_a_def_line_belong_to_the_enclosing_scope(header):
    source = f"from keras.optimizers import Adam\nclass T:\n    {header.replace(chr(10), chr(10) + '    ')}\n        return Adam()\n"
    facts = Facts(parse_module(source), source)
    made = [c for c in facts.calls if c.func == "Adam"]
    assert len(made) == 2
    at_def, in_body = made
    assert at_def.scope.is_module and in_body.scope.name == "T.step"


def test_optimizer_made_in_the_batch_loop_that_calls_the_step_function_is_reported():
    """The loop that calls the step function runs a step per iteration, like one that opens the tape."""
    assert findings(DATA + """
    def train_step(x, y, opt):
        with tf.GradientTape() as tape:
            loss = cost(y, network(x, training=True))
        grads = tape.gradient(loss, network.trainable_variables)
        opt.apply_gradients(zip(grads, network.trainable_variables))

    for epoch in range(3):
        opt_per_epoch = tf.keras.optimizers.Adam(1e-3)
        for x, y in dataset:
            opt = tf.keras.optimizers.Adam(1e-3)
            train_step(x, y, opt)
    """) == [("TL202", 20)]
