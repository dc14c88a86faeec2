"""Which layer takes which layer's output next, and which initializers are provably constant."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.rules._tl307_layer_graph import constant_initializer, layer_initializer, successors


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _pairs(source: str) -> list[tuple[str, str, tuple[str, ...]]]:
    facts = _facts(source)
    return sorted(
        (facts.module.code_for_node(p.layer), p.following_class, tuple(cls for cls, _ in p.between))
        for p in successors(facts)
    )


def test_sequential_neighbours_pair_through_unit_keeping_layers():
    assert _pairs("""
        import tensorflow as tf
        m = tf.keras.Sequential([
            tf.keras.layers.Conv2D(8, 3),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10),
        ])
    """) == [("tf.keras.layers.Conv2D(8, 3)", "Dense", ("BatchNormalization", "MaxPooling2D", "Flatten"))]


def test_sequential_add_calls_are_read_in_order():
    assert _pairs("""
        from tensorflow import keras
        m = keras.Sequential()
        m.add(keras.layers.Dense(4))
        m.add(keras.layers.Dropout(0.1))
        m.add(keras.layers.Dense(1))
    """) == [("keras.layers.Dense(4)", "Dense", ("Dropout",))]


def test_a_layer_we_cannot_read_ends_the_chain():
    assert _pairs("""
        import tensorflow as tf
        m = tf.keras.Sequential([tf.keras.layers.Dense(4), MyLayer(), tf.keras.layers.Dense(1)])
    """) == []


def test_functional_application_pairs_with_its_producer():
    assert _pairs("""
        import tensorflow as tf
        inputs = tf.keras.Input((3,))
        h = tf.keras.layers.Dense(8, activation="relu")(inputs)
        h = tf.keras.layers.Dropout(0.2)(h)
        out = tf.keras.layers.Dense(1)(h)
    """) == [('tf.keras.layers.Dense(8, activation="relu")', "Dense", ("Dropout",))]


def test_residual_add_is_not_a_successor():
    assert _pairs("""
        import tensorflow as tf
        inputs = tf.keras.Input((8,))
        branch = tf.keras.layers.Dense(8)(inputs)
        x = tf.keras.layers.Add()([inputs, branch])
        out = tf.keras.layers.Dense(1)(x)
    """) == []


def test_subclass_attributes_pair_through_call():
    assert _pairs("""
        import tensorflow as tf
        class M(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.a = tf.keras.layers.Dense(8)
                self.b = tf.keras.layers.Dense(1)
            def call(self, x):
                x = self.a(x)
                return self.b(x)
    """) == [("tf.keras.layers.Dense(8)", "Dense", ())]


def test_constant_initializers_are_recognised_through_names():
    facts = _facts("""
        import tensorflow as tf
        z = tf.keras.initializers.Zeros()
        a = tf.keras.layers.Dense(4, kernel_initializer=z)
        b = tf.keras.layers.Dense(4, kernel_initializer="ones")
        c = tf.keras.layers.Dense(4, kernel_initializer=tf.constant_initializer(0.5))
        d = tf.keras.layers.Dense(4, kernel_initializer="he_normal")
        e = tf.keras.layers.Dense(4, kernel_initializer=pick())
        f = tf.keras.layers.Dense(4, kernel_initializer=tf.keras.initializers.Constant())
    """)
    layers = [s.node for s in facts.calls if s.func == "tf.keras.layers.Dense"]
    found = [layer_initializer(facts, layer, "kernel_initializer") for layer in layers]
    assert [f.value if f else "no" for f in found] == [0.0, 1.0, 0.5, "no", "no", 0.0]


def test_a_name_that_may_hold_two_initializers_is_not_one_constant():
    facts = _facts("""
        import tensorflow as tf
        init = "zeros"
        if wide:
            init = "glorot_uniform"
        probe(init)
    """)
    site = facts.calls_to("probe")[0]
    assert constant_initializer(facts, site.node.args[0].value, site.scope, site.order) is None


def test_methods_of_library_test_cases_are_unit_tests():
    from tapelint.analysis.unit_tests import in_unit_test

    facts = _facts("""
        import unittest
        import tensorflow as tf
        from keras.src import testing

        class Base(testing.TestCase):
            pass

        class LayerTest(Base):
            def test_dense(self):
                def helper():
                    probe()
                probe()

        class TfTest(tf.test.TestCase):
            def test_x(self):
                probe()

        class Trainer:
            def test_run(self):
                probe()

        def test_plain():
            probe()
    """)
    assert [in_unit_test(facts, s.scope) for s in facts.calls_to("probe")] == [True, True, True, False, False]
