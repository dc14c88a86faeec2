"""`prediction_source`: which values carry a model's output. Each program marks the questions with
`probe(expr)` calls; the tests ask about `expr` there."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.predictions import prediction_source

HAND_WRITTEN = """
import tensorflow as tf

class Head(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.zeros((8, 4)))
        self.b = tf.Variable(tf.zeros((1, 4)))
        self.scale = tf.constant(2.0)

    def step(self, x, y, table):
        logits = tf.matmul(x, self.w) + self.b
        probe(tf.nn.softmax(logits))          # a layer written by hand, through its bias and an activation
        probe(x @ self.w)                     # the operator spelling
        probe(tf.matmul(x, table))            # a tensor, not a variable: unknown
        probe(tf.matmul(x, self.scale))       # a constant
        probe(y + self.b)                     # a bias added to a label is not a layer
        probe(predictions)                    # a name proves nothing
"""


def _answers(source: str) -> list[str | None]:
    facts = Facts(cst.parse_module(textwrap.dedent(source)))
    return [prediction_source(facts, site.node.args[0].value, site.scope, site.order)
            for site in facts.calls_to("probe")]


def test_a_layer_written_by_hand_is_a_prediction_and_names_are_not() -> None:
    answers = _answers(HAND_WRITTEN)
    assert answers[0] is not None and "tf.matmul(..., self.w)" in answers[0]
    assert answers[1] is not None and "self.w" in answers[1]
    assert answers[2:] == [None, None, None, None]
