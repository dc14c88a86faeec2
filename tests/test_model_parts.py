"""What a functional model is made of is what its graph is computed from: the layers and models its
outputs are reached from through the assignments of the scope that builds it, and nothing else that
scope happens to call (a teacher, another program's model in the same script)."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.training import parts
from tapelint.analysis.values import Kind, values_of


def _parts_of(code: str, name: str) -> set[str] | None:
    facts = Facts(cst.parse_module(code))
    binding = next(b for b in facts.bindings if b.target == name)
    (model,) = values_of(facts, binding.value, binding.scope, binding.order)
    found = parts(facts, model)
    if found is None:
        return None
    named = {b.target for b in facts.bindings if b.value is not None and isinstance(b.value, cst.Call)
             and any(v.node is b.value for v in found)}
    return named - {name}


DISTILL = """
import tensorflow as tf

teacher = tf.keras.Sequential([tf.keras.layers.Dense(10)])
inputs = tf.keras.Input((32,))
soft_targets = teacher(inputs)
backbone = tf.keras.layers.Dense(64, activation="relu")
head = tf.keras.layers.Dense(10)
hidden = backbone(inputs)
for _ in range(2):
    hidden = backbone(hidden)
student = tf.keras.Model(inputs, head(hidden))
"""


def test_a_functional_model_is_made_of_its_graph_not_of_its_neighbours():
    assert _parts_of(DISTILL, "student") == {"backbone", "head"}


def test_every_spelling_of_the_graph_reaches_the_same_layers():
    through_a_list = """
import tensorflow as tf

inputs = tf.keras.Input((32,))
blocks = [tf.keras.layers.Dense(64), tf.keras.layers.Dense(64)]
x = inputs
for block in blocks:
    x = block(x)
side = tf.keras.layers.Dense(3)
unrelated = side(inputs)
model = tf.keras.Model(inputs=inputs, outputs=x)
"""
    found = _parts_of(through_a_list, "model")
    assert found is not None and "side" not in found
    facts = Facts(cst.parse_module(through_a_list))
    binding = next(b for b in facts.bindings if b.target == "model")
    (model,) = values_of(facts, binding.value, binding.scope, binding.order)
    layers = [v for v in parts(facts, model) or () if v.kind is Kind.LAYER]
    assert len(layers) == 2  # the two Dense layers of the list, not the unrelated one
