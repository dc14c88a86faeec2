"""What a model is, whatever spelling builds it: `self.model = self.create_model()` (marload's A2C/A3C
actors) reads the Sequential its builder method returns, like a module-level builder function does. Found on
marload/DeepRL-TensorFlow2: a softmax actor fed to `SparseCategoricalCrossentropy(from_logits=True)`, missed
because the model came from a method."""

from __future__ import annotations

import textwrap

import pytest

from tapelint.config import parse
from tapelint.engine import lint_source

ACTOR = """
    import tensorflow as tf
    from tensorflow.keras.layers import Dense, Input


    class Actor:
        def __init__(self, state_dim, action_dim):
            self.state_dim = state_dim
            self.action_dim = action_dim
            self.model = {build}
            self.opt = tf.keras.optimizers.Adam(5e-4)

        def create_model(self):
            return tf.keras.Sequential([
                Input((self.state_dim,)),
                Dense(32, activation="relu"),
                Dense(self.action_dim, activation="{activation}"),
            ])

        @staticmethod
        def build(state_dim, action_dim):
            return tf.keras.Sequential([Input((state_dim,)), Dense(32, activation="relu"),
                                        Dense(action_dim, activation="{activation}")])

        def compute_loss(self, actions, logits, advantages):
            ce_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return ce_loss(actions, logits, sample_weight=tf.stop_gradient(advantages))

        def train(self, states, actions, advantages):
            with tf.GradientTape() as tape:
                logits = self.model(states, training=True)
                loss = self.compute_loss(actions, logits, advantages)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss


    actor = Actor(4, 2)
    for episode in range(100):
        actor.train(states, actions, advantages)
"""


def tl101(build: str, activation: str) -> list[int]:
    config = parse({"select": ["TL101"]}, "test", None)
    source = textwrap.dedent(ACTOR.format(build=build, activation=activation))
    return [d.line for d in lint_source(source, "a2c.py", config)]


@pytest.mark.parametrize("build", ["self.create_model()", "self.build(state_dim, action_dim)",
                                   "Actor.build(state_dim, action_dim)"])
def test_softmax_actor_built_by_a_method_is_reported(build):
    assert tl101(build, "softmax") == [26]


@pytest.mark.parametrize("build", ["self.create_model()", "self.build(state_dim, action_dim)"])
def test_logits_actor_built_by_a_method_is_silent(build):
    assert tl101(build, "linear") == []
