"""Behaviour of the rules about gradients TensorFlow cannot compute (TL009 integer variables, TL010
assignments on the forward path) on realistic loops: the bug, and the correct code that looks most like it."""

from __future__ import annotations

import textwrap

from tapelint.config import parse
from tapelint.engine import lint_source

CODES = ["TL007", "TL009"]


def findings(source: str) -> list[tuple[str, int, str]]:
    config = parse({"select": [*CODES, "TL999"]}, "test", None)
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
