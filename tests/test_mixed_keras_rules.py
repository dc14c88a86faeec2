"""TL503 on realistic training programs: tf_keras objects (hub.KerasLayer) in Keras 3 models and the
reverse are reported; one-package programs, eager use of a hub layer and TFSMLayer stay silent."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source

LOOP = """
optimizer = tf.keras.optimizers.Adam(1e-3)
for epoch in range(5):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _tl503(source: str, config: Config | None = None) -> list[int]:
    text = textwrap.dedent(source) + LOOP
    return [d.line for d in lint_source(text, "t.py", config or Config(), force=True) if d.code == "TL503"]


def test_hub_layer_in_a_tf_keras_sequential_on_keras3_is_reported():
    assert _tl503("""
        import tensorflow as tf
        import tensorflow_hub as hub
        model = tf.keras.Sequential([hub.KerasLayer("encoder", trainable=False), tf.keras.layers.Dense(1)])
    """) == [4]


def test_hub_layer_added_to_a_sequential_through_a_factory_is_reported():
    assert _tl503("""
        import tensorflow as tf
        import tensorflow_hub as hub
        def make_encoder():
            return hub.KerasLayer("encoder")
        model = tf.keras.Sequential()
        model.add(make_encoder())
        model.add(tf.keras.layers.Dense(1))
    """) == [7]


def test_same_program_with_the_legacy_flag_is_silent():
    assert _tl503("""
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import tensorflow as tf
        import tensorflow_hub as hub
        model = tf.keras.Sequential([hub.KerasLayer("encoder", trainable=False), tf.keras.layers.Dense(1)])
    """) == []


def test_legacy_flag_set_outside_the_file_is_not_guessed():
    assert _tl503("""
        import os
        os.environ.update(TF_USE_LEGACY_KERAS="1")
        import tensorflow as tf
        import tensorflow_hub as hub
        model = tf.keras.Sequential([hub.KerasLayer("encoder"), tf.keras.layers.Dense(1)])
    """) == []


def test_keras3_layer_in_a_legacy_model_is_reported():
    assert _tl503("""
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import keras
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input((8,)), keras.layers.Dense(1)])
    """) == [6]


def test_hub_layer_applied_to_a_keras3_input_is_reported():
    assert _tl503("""
        import tensorflow as tf
        import tensorflow_hub as hub
        inputs = tf.keras.Input((8,))
        features = hub.KerasLayer("encoder")(inputs)
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(features))
    """) == [5]


def test_tf_keras_functional_model_is_silent():
    assert _tl503("""
        import tensorflow as tf
        import tensorflow_hub as hub
        import tf_keras
        inputs = tf_keras.Input((8,))
        features = hub.KerasLayer("encoder")(inputs)
        model = tf_keras.Model(inputs, tf_keras.layers.Dense(1)(features))
    """) == []


def test_hub_layer_run_eagerly_before_a_keras3_model_is_silent():
    assert _tl503("""
        import numpy as np
        import tensorflow as tf
        import tensorflow_hub as hub
        encoder = hub.KerasLayer("encoder")
        features = encoder(np.zeros((64, 8), "float32")).numpy()
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    """) == []


def test_trainable_hub_layer_on_a_keras3_subclass_is_reported_and_frozen_one_is_not():
    source = """
        import tensorflow as tf
        import tensorflow_hub as hub
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.encoder = hub.KerasLayer("encoder", trainable=TRAINABLE)
                self.head = tf.keras.layers.Dense(1)
            def call(self, x):
                return self.head(self.encoder(x))
        model = Net()
    """
    assert _tl503(source.replace("TRAINABLE", "True")) == [7]
    assert _tl503(source.replace("TRAINABLE", "False")) == []
    assert _tl503(source.replace("TRAINABLE", "flags.fine_tune")) == []


def test_keras2_project_config_is_silent():
    assert _tl503("""
        import tensorflow as tf
        import tensorflow_hub as hub
        model = tf.keras.Sequential([hub.KerasLayer("encoder"), tf.keras.layers.Dense(1)])
    """, Config(keras_version=2)) == []
