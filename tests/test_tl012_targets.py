"""The bootstrapped-target question asked directly: which regression targets are built, inside the tape,
from the model whose weights the gradient is for."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.rules._tl012_targets import bootstrapped_targets, regressions

HEAD = """
import tensorflow as tf
q = tf.keras.Sequential([tf.keras.layers.Dense(2)])
other = tf.keras.Sequential([tf.keras.layers.Dense(2)])
"""


def _targets(body: str) -> list[str]:
    facts = Facts(cst.parse_module(textwrap.dedent(HEAD) + textwrap.dedent(body)))
    return [cst.Module([]).code_for_node(t.model_call) for t in bootstrapped_targets(facts)]


def test_a_reward_plus_the_trained_models_next_value_is_a_bootstrapped_target():
    assert _targets("""
        with tf.GradientTape() as tape:
            y = r + 0.9 * tf.reduce_max(q(s2), axis=1)
            loss = tf.reduce_mean(tf.square(y - tf.reduce_max(q(s), axis=1)))
        grads = tape.gradient(loss, q.trainable_variables)
    """) == ["q(s2)"]


def test_a_stopped_target_another_model_or_the_same_inputs_are_not():
    assert _targets("""
        with tf.GradientTape() as tape:
            y1 = r + 0.9 * tf.stop_gradient(q(s2))
            y2 = r + 0.9 * other(s2)
            y3 = r + 0.9 * q(s)
            loss = tf.reduce_mean(tf.square(y1 - q(s))) + tf.reduce_mean(tf.square(y2 - q(s)))
            loss += tf.reduce_mean(tf.square(y3 - q(s)))
        grads = tape.gradient(loss, q.trainable_variables)
    """) == []


def test_a_target_computed_before_the_tape_is_not_recorded():
    assert _targets("""
        y = r + 0.9 * q(s2)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - q(s)))
        grads = tape.gradient(loss, q.trainable_variables)
    """) == []


def test_squared_differences_through_a_name_and_powers_are_regressions():
    facts = Facts(cst.parse_module(textwrap.dedent(HEAD) + textwrap.dedent("""
        with tf.GradientTape() as tape:
            td = r + q(s2) - q(s)
            loss = tf.reduce_mean(tf.square(td)) + tf.reduce_mean((r - q(s)) ** 2)
        grads = tape.gradient(loss, q.trainable_variables)
    """)))
    assert len(regressions(facts)) == 2
    assert [cst.Module([]).code_for_node(t.model_call) for t in bootstrapped_targets(facts)] == ["q(s2)"]
