"""Which Keras package an object comes from: Keras 3, tf_keras (hub.KerasLayer included), or unknown.

Each program marks the questions with `probe(expr)` calls; the tests ask about `expr` there.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.rules._tl503_keras_packages import Package, legacy_tf_keras, mixes, packages_of, tensor_package


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _layer_packages(source: str) -> list[str]:
    facts = _facts(source)
    out = []
    for site in facts.calls_to("probe"):
        found = packages_of(facts, site.node.args[0].value, site.scope, site.order)
        out.append(found[0].value if found else "unknown")
    return out


def _tensor_packages(source: str) -> list[str]:
    facts = _facts(source)
    return [tensor_package(facts, s.node.args[0].value, s.scope, s.order).value for s in facts.calls_to("probe")]


def test_layers_take_the_package_of_their_import():
    assert _layer_packages("""
        import keras
        import tensorflow as tf
        import tf_keras
        import tensorflow_hub as hub
        from tf_keras import layers as legacy_layers
        probe(keras.layers.Dense(1))
        probe(tf.keras.layers.Dense(1))
        probe(tf_keras.layers.Dense(1))
        probe(legacy_layers.Dense(1))
        probe(hub.KerasLayer("path"))
        probe(keras.layers.TFSMLayer("path"))
        probe(tf_keras.Sequential())
    """) == ["Keras 3", "Keras 3", "tf_keras", "tf_keras", "tf_keras", "Keras 3", "tf_keras"]


def test_tf_keras_follows_the_legacy_flag_set_in_the_file():
    legacy = """
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import keras
        import tensorflow as tf
        probe(tf.keras.layers.Dense(1))
        probe(keras.layers.Dense(1))
    """
    assert _layer_packages(legacy) == ["tf_keras", "Keras 3"]
    assert legacy_tf_keras(_facts(legacy)) is True
    off = legacy.replace('"1"', '"0"')
    assert _layer_packages(off) == ["Keras 3", "Keras 3"]


def test_legacy_flag_set_in_an_unreadable_way_makes_tf_keras_unknown():
    source = """
        import os
        os.environ.update({"TF_USE_LEGACY_KERAS": "1"})
        import tensorflow as tf
        probe(tf.keras.layers.Dense(1))
    """
    assert legacy_tf_keras(_facts(source)) is None
    assert _layer_packages(source) == ["unknown"]


def test_local_subclasses_take_the_package_of_their_keras_bases():
    assert _layer_packages("""
        import keras
        import tf_keras
        class Block(tf_keras.layers.Layer):
            pass
        class Deeper(Block):
            pass
        class Mixed(Block, keras.layers.Layer):
            pass
        class Plain(keras.layers.Layer):
            pass
        probe(Deeper())
        probe(Mixed())
        probe(Plain())
    """) == ["tf_keras", "unknown", "Keras 3"]


def test_names_of_unknown_origin_are_unknown():
    assert _layer_packages("""
        import keras
        from mylib import make_encoder
        probe(make_encoder())
        probe(keras.layers.Dense(1) if flag else other)
    """) == ["unknown", "unknown"]


def test_symbolic_tensors_come_from_inputs_and_layers_applied_to_them():
    assert _tensor_packages("""
        import keras
        import tf_keras
        x = keras.Input((8,))
        h = keras.layers.Dense(4)(x)
        t = tf_keras.Input((8,))
        g = tf_keras.layers.Dense(4)(t)
        probe(x)
        probe(h)
        probe(t)
        probe(g)
        probe(keras.layers.Dense(4)(batch))
    """) == ["Keras 3", "Keras 3", "tf_keras", "tf_keras", "unknown"]


def test_a_layer_output_in_call_is_eager_not_symbolic():
    facts = _facts("""
        import keras
        import tensorflow_hub as hub
        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.encoder = hub.KerasLayer("path")
                self.head = keras.layers.Dense(1)
            def call(self, x):
                return self.head(self.encoder(x))
    """)
    assert mixes(facts) == []


def test_mixes_name_the_place_and_the_two_packages():
    facts = _facts("""
        import keras
        import tensorflow as tf
        import tensorflow_hub as hub
        enc = hub.KerasLayer("path")
        a = tf.keras.Sequential([enc, tf.keras.layers.Dense(1)])
        b = keras.Sequential()
        b.add(enc)
        inputs = keras.Input((8,))
        out = enc(inputs)
    """)
    found = [(m.how, m.inner, m.outer, m.what) for m in mixes(facts)]
    assert found == [
        ("sequential", Package.TF_KERAS, Package.KERAS3, "hub.KerasLayer"),
        ("sequential", Package.TF_KERAS, Package.KERAS3, "hub.KerasLayer"),
        ("functional", Package.TF_KERAS, Package.KERAS3, "hub.KerasLayer"),
    ]
