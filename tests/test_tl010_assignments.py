"""Which variable assignments sit on the forward path of a loss: rules/_tl010_assignments.py."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.rules._tl010_assignments import forward_path_assigns


def _found(source: str) -> list[tuple[str, str, bool, str]]:
    facts = Facts(cst.parse_module(textwrap.dedent(source)))
    return [(a.variable, a.source, a.owner, cst.Module(body=[]).code_for_node(a.read))
            for a in forward_path_assigns(facts)]


HEAD = """
import tensorflow as tf
w = tf.Variable(tf.random.normal((3, 2)))
v = tf.Variable(tf.random.normal((3, 2)))
h = tf.Variable(tf.zeros((4, 2)))
model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
"""


def test_read_back_after_the_assignment_through_intermediate_names():
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    h.assign(tf.matmul(x, w))
    centred = h - tf.reduce_mean(h)
    loss = tf.reduce_mean(tf.square(centred))
g = tape.gradient(loss, [w])
""") == [("h", "w", False, "h - tf.reduce_mean(h)")]


def test_a_model_call_counts_for_its_weight_collection():
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    h.assign_add(model(x))
    loss = tf.reduce_mean(h)
g = tape.gradient(loss, model.trainable_variables)
""") == [("h", "model", True, "tf.reduce_mean(h)")]


def test_the_value_must_come_from_the_differentiated_sources():
    # `v` computes the assigned value, but only `w` is differentiated: its path does not pass `h`.
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    h.assign(tf.matmul(x, v))
    loss = tf.reduce_mean(h) + tf.reduce_sum(w)
g = tape.gradient(loss, [w])
""") == []


def test_a_read_before_the_assignment_is_not_a_read_back():
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(h * tf.matmul(x, w))
    h.assign(tf.matmul(x, w))
g = tape.gradient(loss, [w])
""") == []


def test_the_returned_value_of_tf_variable_assign_is_a_read_back():
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    out = h.assign(tf.matmul(x, w))
    loss = tf.reduce_mean(out)
g = tape.gradient(loss, [w])
""") == [("h", "w", False, "tf.reduce_mean(out)")]


def test_a_receiver_that_is_not_surely_a_variable_is_not_judged():
    assert _found(HEAD + """
with tf.GradientTape() as tape:
    buffer.assign(tf.matmul(x, w))
    loss = tf.reduce_mean(buffer)
g = tape.gradient(loss, [w])
""") == []
