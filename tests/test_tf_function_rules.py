"""TL401-TL403 on realistic tf.function training loops: the buggy form and the near miss that must stay
silent."""

from __future__ import annotations

import textwrap

from tapelint.config import parse
from tapelint.engine import lint_source


def _codes(source: str, code: str) -> list[int]:
    config = parse({"select": [code], "preview": True}, "test", None)
    return [d.line for d in lint_source(textwrap.dedent(source), "train.py", config) if d.code == code]


STEP = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step(x, y, step):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
"""


def test_enumerate_counter_passed_to_a_traced_step_is_reported():
    assert _codes(STEP + """
    for step, (x, y) in enumerate(dataset):
        train_step(x, y, step)
    """, "TL402") == [16]


def test_counter_wrapped_in_tf_constant_is_not_reported():
    assert _codes(STEP + """
    for step, (x, y) in enumerate(dataset):
        train_step(x, y, tf.constant(step))
    """, "TL402") == []


def test_counter_passed_to_an_eager_step_is_not_reported():
    eager = STEP.replace("@tf.function\n", "")
    assert _codes(eager + """
    for step, (x, y) in enumerate(dataset):
        train_step(x, y, step)
    """, "TL402") == []


def test_retracing_is_not_reported_when_the_traced_step_is_called_from_traced_code():
    assert _codes(STEP + """
    @tf.function
    def train_epoch(batches):
        for step in range(10):
            train_step(batches[0], batches[1], step)
    """, "TL402") == []


def test_side_effect_in_a_step_called_once_is_not_reported():
    source = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf

        @tf.function
        def export(x):
            return x + np.random.normal()

        export(tf.constant(1.0))
    """)
    assert _codes(source, "TL401") == []
    assert _codes(source + "for x in data:\n    export(x)\n", "TL401") == [7]


def test_outer_list_append_in_a_helper_of_the_traced_step_is_reported():
    assert _codes("""
        import tensorflow as tf

        history = []

        def record(loss):
            history.append(loss)

        @tf.function
        def train_step(x):
            loss = tf.reduce_sum(x)
            record(loss)
            return loss

        for x in data:
            train_step(x)
    """, "TL401") == [7]


def test_keras_train_step_counter_is_reported_only_when_fit_traces_it():
    source = """
        import keras
        import tensorflow as tf

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = keras.layers.Dense(1)
                self.seen = 0

            def call(self, x):
                return self.dense(x)

            def train_step(self, data):
                self.seen += 1
                return {"seen": self.seen}

        model = Net()
        model.compile(optimizer="adam", loss="mse"{extra})
        model.fit(x, y, epochs=2)
    """
    assert _codes(source.replace("{extra}", ""), "TL401") == [15]
    assert _codes(source.replace("{extra}", ", run_eagerly=True"), "TL401") == []


def test_variable_created_in_a_wrapped_method_is_reported_and_the_guarded_one_is_not():
    source = """
        import tensorflow as tf

        class Scaler(tf.Module):
            def __init__(self):
                self.scale = None
                self.apply = tf.function(self.forward)

            def forward(self, x):
                {body}
                return x * self.scale
    """
    assert _codes(source.replace("{body}", "self.scale = tf.Variable(2.0)"), "TL403") == [10]
    guarded = "if self.scale is None:\n                    self.scale = tf.Variable(2.0)"
    assert _codes(source.replace("{body}", guarded), "TL403") == []


def test_layer_built_but_never_called_in_the_traced_body_is_not_reported():
    assert _codes("""
        import tensorflow as tf

        @tf.function
        def describe(x):
            head = tf.keras.layers.Dense(4)
            return x, head.units
    """, "TL403") == []
