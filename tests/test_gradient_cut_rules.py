"""Behaviour of the rules about gradients TensorFlow cannot compute (TL009 integer variables, TL010
assignments on the forward path) on realistic loops: the bug, and the correct code that looks most like it."""

from __future__ import annotations

import textwrap

from tapelint.config import parse
from tapelint.engine import lint_source

CODES = ["TL007", "TL009", "TL010"]


def findings(source: str) -> list[tuple[str, int, str]]:
    config = parse({"select": [*CODES, "TL999"], "preview": True}, "test", None)
    found = lint_source(textwrap.dedent(source), "t.py", config)
    assert not [d for d in found if d.code == "TL999"], found
    return [(d.code, d.line, d.message) for d in found]


def codes(source: str) -> list[str]:
    return [code for code, _, _ in findings(source)]


# ---------------------------------------------------------------- TL009 integer-variable-gradient

def test_variable_from_an_int_literal_differentiated_next_to_model_weights_is_reported():
    found = findings("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        temperature = tf.Variable(1)
        opt = tf.keras.optimizers.Adam(1e-3)
        def step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True) / tf.cast(temperature, tf.float32)
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
            variables = model.trainable_variables + [temperature]
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
    """)
    assert [(c, line) for c, line, _ in found] == [("TL009", 11)]
    assert "`temperature` is an `int32` variable (created at line 4 from `1`" in found[0][2]


def test_integer_variable_held_by_a_keras_layer_attribute_is_reported():
    assert codes("""
        import tensorflow as tf
        class Shift(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.shift = tf.Variable(0, dtype="int64")
            def call(self, x):
                return x + tf.cast(self.shift, x.dtype)
        layer = Shift()
        opt = tf.keras.optimizers.SGD(0.1)
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(layer(x))
            grads = tape.gradient(loss, [layer.shift])
            opt.apply_gradients(zip(grads, [layer.shift]))
    """) == ["TL009"]


def test_bool_mask_variable_is_reported_as_integer_like():
    found = findings("""
        import tensorflow as tf
        mask = tf.Variable([True, False, True])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(mask, tf.float32) * x)
        grad = tape.gradient(loss, mask)
    """)
    assert [c for c, _, _ in found] == ["TL009"] and "`bool`" in found[0][2]


def test_float_variables_and_counters_stay_silent():
    assert codes("""
        import numpy as np
        import tensorflow as tf
        scale = tf.Variable(3.0)
        bias = tf.Variable(np.zeros(4), dtype=tf.float32)
        offsets = tf.Variable(np.arange(4), dtype=tf.float32)
        epoch = tf.Variable(0)
        opt = tf.keras.optimizers.SGD(0.1)
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(scale * x + bias + offsets - y))
            grads = tape.gradient(loss, [scale, bias, offsets])
            opt.apply_gradients(zip(grads, [scale, bias, offsets]))
            epoch.assign_add(1)
    """) == []


def test_a_watched_float_cast_of_an_integer_variable_stays_silent():
    # TF 2.21: the gradient with respect to the watched float32 cast is 3.0, not None.
    assert codes("""
        import tensorflow as tf
        count = tf.Variable(3)
        with tf.GradientTape() as tape:
            as_float = tf.cast(count, tf.float32)
            tape.watch(as_float)
            loss = as_float * 2.0
        grad = tape.gradient(loss, as_float)
    """) == []


def test_a_variable_whose_dtype_cannot_be_proved_stays_silent():
    assert codes("""
        import tensorflow as tf
        def make(init):
            return tf.Variable(init)
        w = make(load_initial_weights())
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * x)
        grad = tape.gradient(loss, [w])
    """) == []


def test_a_non_trainable_integer_variable_is_left_to_tl007():
    assert codes("""
        import tensorflow as tf
        counter = tf.Variable(0, trainable=False)
        with tf.GradientTape() as tape:
            loss = tf.cast(counter, tf.float32) * x
        grad = tape.gradient(loss, counter)
    """) == ["TL007"]


# ---------------------------------------------------------------- TL010 assign-on-forward-path

def test_buffer_variable_assigned_from_the_weights_and_read_by_the_loss_is_reported():
    found = findings("""
        import tensorflow as tf
        w = tf.Variable(tf.random.normal((3, 2)))
        h = tf.Variable(tf.zeros((4, 2)))
        def step(x, y):
            with tf.GradientTape() as tape:
                z = tf.matmul(x, w)
                h.assign(tf.nn.relu(z))
                loss = tf.reduce_mean(tf.square(h - y))
            return tape.gradient(loss, [w])
    """)
    assert [(c, line) for c, line, _ in found] == [("TL010", 8)]
    assert "computed from `w`" in found[0][2] and "(line 9)" in found[0][2]


def test_the_result_of_tf_variable_assign_used_by_the_loss_is_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        state = tf.Variable(tf.zeros((8, 2)), trainable=False)
        opt = tf.keras.optimizers.Adam()
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(state.assign(model(x, training=True)) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == ["TL010"]


def test_the_result_of_a_keras_weight_assign_keeps_its_gradient_and_stays_silent():
    # TF 2.21 / Keras 3.15: `Variable.assign` returns the value it was given, which keeps its gradient.
    assert codes("""
        import tensorflow as tf
        class Cached(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.project = tf.keras.layers.Dense(3)
            def build(self, shape):
                self.cache = self.add_weight(shape=(8, 3), initializer="zeros", trainable=False)
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    cached = self.cache.assign(self.project(x, training=True))
                    loss = tf.reduce_mean(tf.square(cached - y))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """) == []


def test_an_assigned_variable_read_only_in_the_other_branch_stays_silent():
    assert codes("""
        import tensorflow as tf
        w = tf.Variable(tf.random.normal((3, 2)))
        mean = tf.Variable(tf.zeros((2,)), trainable=False)
        def step(x, y, training):
            with tf.GradientTape() as tape:
                z = tf.matmul(x, w)
                if training:
                    mean.assign(tf.reduce_mean(z, axis=0))
                    out = z - tf.reduce_mean(z, axis=0)
                else:
                    out = z - mean
                loss = tf.reduce_mean(tf.square(out - y))
            return tape.gradient(loss, [w])
    """) == []


def test_an_assignment_that_feeds_the_loss_but_not_from_the_differentiated_weights_stays_silent():
    assert codes("""
        import tensorflow as tf
        encoder = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        head = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        features = tf.Variable(tf.zeros((8, 4)), trainable=False)
        opt = tf.keras.optimizers.Adam()
        def step(x, y):
            with tf.GradientTape() as tape:
                features.assign(tf.stop_gradient(encoder(x)))
                loss = tf.reduce_mean(tf.square(head(features, training=True) - y))
            grads = tape.gradient(loss, head.trainable_variables)
            opt.apply_gradients(zip(grads, head.trainable_variables))
    """) == []


def test_an_assignment_before_the_tape_or_a_counter_inside_it_stays_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        steps = tf.Variable(0)
        scale = tf.Variable(1.0, trainable=False)
        opt = tf.keras.optimizers.Adam()
        def step(x, y):
            scale.assign(tf.reduce_max(tf.abs(x)))
            with tf.GradientTape() as tape:
                steps.assign_add(1)
                loss = tf.reduce_mean(tf.square(model(x / scale, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == []
