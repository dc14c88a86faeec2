"""Behaviour of TL110 (target-shape-broadcast) and TL307 (zero-initialized-weights) on realistic code."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.diagnostic import Severity
from tapelint.engine import lint_source

MINE = {"TL110", "TL307"}


def findings(source: str):  # type: ignore[no-untyped-def]
    found = lint_source(textwrap.dedent(source), "case.py", Config())
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return [d for d in found if d.code in MINE]


def codes(source: str) -> list[str]:
    return sorted(d.code for d in findings(source))


# ----------------------------------------------------------------------------- TL307


def test_zero_relu_hidden_layer_is_an_error():
    found = findings("""
        import tensorflow as tf
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu", kernel_initializer="zeros"),
            tf.keras.layers.Dense(10),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.ERROR)]


def test_zero_layer_followed_by_a_relu_activation_layer_is_dead_too():
    found = findings("""
        from tensorflow import keras
        model = keras.Sequential([
            keras.layers.Dense(64, kernel_initializer="zeros", use_bias=False),
            keras.layers.BatchNormalization(),
            keras.layers.ReLU(),
            keras.layers.Dense(1),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.ERROR)]
    assert "never train" in found[0].message


def test_zero_relu_layer_with_a_nonzero_bias_only_warns():
    found = findings("""
        from tensorflow import keras
        model = keras.Sequential([
            keras.layers.Dense(64, activation="relu", kernel_initializer="zeros", bias_initializer="ones"),
            keras.layers.Dense(1),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.WARNING)]


def test_two_constant_layers_in_a_row_keep_units_identical():
    found = findings("""
        import tensorflow as tf
        init = tf.keras.initializers.Constant(0.1)
        inputs = tf.keras.Input((4,))
        h = tf.keras.layers.Dense(16, activation="tanh", kernel_initializer=init)(inputs)
        out = tf.keras.layers.Dense(1, kernel_initializer=init)(h)
    """)
    assert len(found) == 1 and "stay identical forever" in found[0].message


def test_zero_output_head_and_zero_biases_are_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu", bias_initializer="zeros"),
            tf.keras.layers.Dense(32, activation="relu", bias_initializer=tf.keras.initializers.Zeros()),
            tf.keras.layers.Dense(1, kernel_initializer="zeros"),
        ])
    """) == []


def test_single_layer_linear_model_from_zero_is_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    """) == []


def test_frozen_constant_layer_is_silent():
    assert codes("""
        import tensorflow as tf
        summing = tf.keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)
        summing.trainable = False
        inputs = tf.keras.Input((4,))
        out = tf.keras.layers.Dense(1)(summing(inputs))
    """) == []


def test_residual_branch_ending_in_zeros_is_silent():
    assert codes("""
        import tensorflow as tf
        class Block(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.inner = tf.keras.layers.Dense(32, activation="relu")
                self.last = tf.keras.layers.Dense(32, kernel_initializer="zeros")
                self.next = tf.keras.layers.Dense(32)
            def call(self, x):
                return self.next(x + self.last(self.inner(x)))
    """) == []


def test_initializer_chosen_at_run_time_is_silent():
    assert codes("""
        import tensorflow as tf
        def build(init):
            return tf.keras.Sequential([tf.keras.layers.Dense(8, kernel_initializer=init), tf.keras.layers.Dense(1)])
        model = build(get_initializer())
    """) == []
