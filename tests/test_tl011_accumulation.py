"""The accumulation question asked directly: which accumulators collect tape gradients, where they are
applied, where they are reset, and whether the sum grows from one application to the next."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.rules._tl011_accumulation import accumulators, grows_between_applies

HEAD = """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.SGD(0.1)
"""


def _found(body: str) -> dict[str, tuple[int, int, int, int, bool]]:
    """holder -> (adds, creations, applies, resets, grows)"""
    facts = Facts(cst.parse_module(textwrap.dedent(HEAD) + textwrap.dedent(body)))
    return {
        acc.holder: (len(acc.adds), len(acc.creations), len(acc.applies), len(acc.resets),
                     grows_between_applies(facts, acc) is not None)
        for acc in accumulators(facts)
    }


def test_variables_added_through_a_zip_loop_and_applied_without_reset_grow():
    found = _found("""
        acc = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
        for step, (x, y) in enumerate(data):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            for a, g in zip(acc, grads):
                a.assign_add(g)
            if step % 4 == 0:
                opt.apply_gradients(zip(acc, model.trainable_variables))
    """)
    assert found == {"acc": (1, 1, 1, 0, True)}


def test_an_assign_on_the_accumulated_variables_elsewhere_is_a_reset():
    found = _found("""
        acc = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
        def zero(variables):
            for v in variables:
                v.assign(tf.zeros_like(v))
        for step, (x, y) in enumerate(data):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            for a, g in zip(acc, grads):
                a.assign_add(g)
            if step % 4 == 0:
                opt.apply_gradients(zip(acc, model.trainable_variables))
                zero(acc)
    """)
    (adds, creations, applies, resets, grows) = found["acc"]
    assert resets >= 1 and not grows


def test_a_list_rebound_with_its_sum_is_an_add_and_a_rebuild_is_a_creation_in_the_loop():
    found = _found("""
        acc = [tf.zeros_like(v) for v in model.trainable_variables]
        for step, (x, y) in enumerate(data):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            acc = [a + g for a, g in zip(acc, grads)]
            if step % 4 == 0:
                opt.apply_gradients(zip([a / 4 for a in acc], model.trainable_variables))
                acc = [tf.zeros_like(v) for v in model.trainable_variables]
    """)
    assert found == {"acc": (1, 2, 1, 0, False)}


def test_subscript_sums_are_adds_and_an_apply_after_the_loop_runs_once():
    found = _found("""
        acc = [tf.zeros_like(v) for v in model.trainable_variables]
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            for i in range(len(acc)):
                acc[i] += grads[i]
        opt.apply_gradients(zip(acc, model.trainable_variables))
    """)
    assert found == {"acc": (1, 1, 1, 0, False)}


def test_a_list_created_in_the_step_function_starts_from_zero_each_step():
    found = _found("""
        def step(batches):
            acc = [tf.zeros_like(v) for v in model.trainable_variables]
            for x, y in batches:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                acc = [a + g for a, g in zip(acc, grads)]
            opt.apply_gradients(zip(acc, model.trainable_variables))
        for batches in data:
            step(batches)
    """)
    assert found == {"acc": (1, 1, 1, 0, False)}


def test_a_sum_of_something_else_is_no_accumulator():
    found = _found("""
        total = 0.0
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            total = total + loss
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """)
    assert found == {}


def test_an_accumulator_handed_to_an_unknown_call_may_be_reset_there():
    found = _found("""
        import helpers
        acc = [tf.Variable(tf.zeros_like(v)) for v in model.trainable_variables]
        for step, (x, y) in enumerate(data):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            for a, g in zip(acc, grads):
                a.assign_add(g)
            if step % 4 == 0:
                opt.apply_gradients(zip(acc, model.trainable_variables))
                helpers.clear(acc)
    """)
    assert found["acc"][3] == 1 and not found["acc"][4]
