"""Ordered variable lists of gradient and apply calls (analysis/variable_sets.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts, arg_value
from tapelint.analysis.variable_sets import gradient_origin, variable_list, zipped_lists


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _parts(facts: Facts, found) -> list[tuple[str, str]] | None:
    return None if found is None else [(p.owner, p.kind) for p in found.parts]


def _sides(source: str):
    """For each apply call: the gradient call its gradients come from, its sources and its variables."""
    facts = _facts(source)
    out = []
    for zipped in zipped_lists(facts):
        origin = gradient_origin(facts, zipped.grads, zipped.scope, zipped.order)
        sources = None if origin is None else variable_list(
            facts, arg_value(origin.node, 1, "sources"), origin.scope, origin.order)
        variables = variable_list(facts, zipped.variables, zipped.scope, zipped.order)
        out.append((origin, _parts(facts, sources), _parts(facts, variables)))
    return out


def test_clipped_gradients_lead_back_to_their_gradient_call():
    ((origin, sources, variables),) = _sides("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            params = model.weights
            grads = tape.gradient(loss, params)
            grads, _ = tf.clip_by_global_norm(grads, 1.0)
            grads = [tf.clip_by_norm(g, 1.0) for g in grads]
            opt.apply_gradients(zip(grads, model.trainable_weights))
    """)
    assert origin is not None and origin.method == "gradient"
    assert sources == [("model", "all")]
    assert variables == [("model", "trainable")]


def test_sums_and_starred_collections_keep_their_order():
    ((_, sources, variables),) = _sides("""
        import tensorflow as tf
        class T:
            def __init__(self):
                self.enc = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                self.dec = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                self.opt = tf.keras.optimizers.Adam()
                self.params = self.enc.trainable_variables + self.dec.trainable_variables
            def step(self, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(self.dec(self.enc(x)))
                grads = tape.gradient(loss, [*self.dec.trainable_variables, *self.enc.trainable_variables])
                self.opt.apply_gradients(zip(grads, self.params))
    """)
    assert sources == [("self.dec", "trainable"), ("self.enc", "trainable")]
    assert variables == [("self.enc", "trainable"), ("self.dec", "trainable")]


def test_named_variables_are_told_apart_by_their_bindings():
    facts = _facts("""
        import tensorflow as tf
        w = tf.Variable(1.0)
        b = tf.Variable(2.0)
        probe([w, b], [b, w])
    """)
    (site,) = facts.calls_to("probe")
    first, second = (variable_list(facts, a.value, site.scope, site.order) for a in site.node.args)
    assert [p.kind for p in first.parts] == ["variable", "variable"]
    assert [p.key for p in first.parts] == [p.key for p in reversed(second.parts)]


def test_zip_through_a_name_and_list_and_swapped_arguments():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD(0.1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(tf.ones((1, 1))))
        grads = tape.gradient(loss, model.trainable_variables)
        pairs = list(zip(model.trainable_variables, grads))
        opt.apply_gradients(pairs)
    """)
    (zipped,) = zipped_lists(facts)
    assert gradient_origin(facts, zipped.grads, zipped.scope, zipped.order) is None
    assert gradient_origin(facts, zipped.variables, zipped.scope, zipped.order) is not None


def test_unreadable_lists_and_a_zip_of_the_users_own_give_nothing():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD(0.1)
        def step(params):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(tf.ones((1, 1))))
            grads = tape.gradient(loss, params)
            opt.apply_gradients(zip(grads, get_variables()))
    """)
    (zipped,) = zipped_lists(facts)
    origin = gradient_origin(facts, zipped.grads, zipped.scope, zipped.order)
    assert origin is not None
    assert variable_list(facts, arg_value(origin.node, 1, "sources"), origin.scope, origin.order) is None
    assert variable_list(facts, zipped.variables, zipped.scope, zipped.order) is None
    assert zipped_lists(_facts("""
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD(0.1)
        zip = lambda a, b: list(a)
        opt.apply_gradients(zip(grads, variables))
    """)) == []


def test_a_long_sum_of_collections_is_cut_off_not_overflowed():
    terms = " + ".join(f"m{i}.trainable_variables" for i in range(600))
    facts = _facts(f"probe({terms})\n")
    (site,) = facts.calls_to("probe")
    assert variable_list(facts, site.node.args[0].value, site.scope, site.order) is None
