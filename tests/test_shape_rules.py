"""Behaviour of TL110 (target-shape-broadcast) and TL307 (zero-initialized-weights) on realistic code."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.diagnostic import Severity
from tapelint.engine import lint_source

MINE = {"TL110", "TL307"}


def findings(source: str):  # type: ignore[no-untyped-def]
    found = lint_source(textwrap.dedent(source), "case.py", Config())
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return [d for d in found if d.code in MINE]


def codes(source: str) -> list[str]:
    return sorted(d.code for d in findings(source))


# ----------------------------------------------------------------------------- TL307


def test_zero_relu_hidden_layer_is_an_error():
    found = findings("""
        import tensorflow as tf
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu", kernel_initializer="zeros"),
            tf.keras.layers.Dense(10),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.ERROR)]


def test_zero_layer_followed_by_a_relu_activation_layer_is_dead_too():
    found = findings("""
        from tensorflow import keras
        model = keras.Sequential([
            keras.layers.Dense(64, kernel_initializer="zeros", use_bias=False),
            keras.layers.BatchNormalization(),
            keras.layers.ReLU(),
            keras.layers.Dense(1),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.ERROR)]
    assert "never train" in found[0].message


def test_zero_relu_layer_with_a_nonzero_bias_only_warns():
    found = findings("""
        from tensorflow import keras
        model = keras.Sequential([
            keras.layers.Dense(64, activation="relu", kernel_initializer="zeros", bias_initializer="ones"),
            keras.layers.Dense(1),
        ])
    """)
    assert [(d.code, d.severity) for d in found] == [("TL307", Severity.WARNING)]


def test_two_constant_layers_in_a_row_keep_units_identical():
    found = findings("""
        import tensorflow as tf
        init = tf.keras.initializers.Constant(0.1)
        inputs = tf.keras.Input((4,))
        h = tf.keras.layers.Dense(16, activation="tanh", kernel_initializer=init)(inputs)
        out = tf.keras.layers.Dense(1, kernel_initializer=init)(h)
    """)
    assert len(found) == 1 and "stay identical forever" in found[0].message


def test_zero_output_head_and_zero_biases_are_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu", bias_initializer="zeros"),
            tf.keras.layers.Dense(32, activation="relu", bias_initializer=tf.keras.initializers.Zeros()),
            tf.keras.layers.Dense(1, kernel_initializer="zeros"),
        ])
    """) == []


def test_single_layer_linear_model_from_zero_is_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    """) == []


def test_frozen_constant_layer_is_silent():
    assert codes("""
        import tensorflow as tf
        summing = tf.keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)
        summing.trainable = False
        inputs = tf.keras.Input((4,))
        out = tf.keras.layers.Dense(1)(summing(inputs))
    """) == []


def test_residual_branch_ending_in_zeros_is_silent():
    assert codes("""
        import tensorflow as tf
        class Block(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.inner = tf.keras.layers.Dense(32, activation="relu")
                self.last = tf.keras.layers.Dense(32, kernel_initializer="zeros")
                self.next = tf.keras.layers.Dense(32)
            def call(self, x):
                return self.next(x + self.last(self.inner(x)))
    """) == []


def test_initializer_chosen_at_run_time_is_silent():
    assert codes("""
        import tensorflow as tf
        def build(init):
            return tf.keras.Sequential([tf.keras.layers.Dense(8, kernel_initializer=init), tf.keras.layers.Dense(1)])
        model = build(get_initializer())
    """) == []


# ----------------------------------------------------------------------------- TL110

_LOOP = """
        model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam()
        for step in range(10):
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
                loss = {loss}
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _program(data: str, loss: str) -> str:
    return "import numpy as np\nimport tensorflow as tf\n" + textwrap.dedent(data) + textwrap.dedent(
        _LOOP.format(loss=loss))


def test_flat_numpy_labels_against_a_dense_1_output_are_reported():
    found = findings(_program("""
        x = np.random.rand(128, 4).astype("float32")
        y = np.random.rand(128).astype("float32")
    """, "tf.reduce_mean(tf.square(y - pred))"))
    assert [(d.code, d.severity) for d in found] == [("TL110", Severity.ERROR)]
    assert "(128,)" in found[0].message and "(N, 1)" in found[0].message


def test_labels_reshaped_or_prediction_squeezed_are_silent():
    data = """
        x = np.random.rand(128, 4).astype("float32")
        y = np.random.rand(128).astype("float32")
    """
    for loss in ("tf.reduce_mean(tf.square(tf.reshape(y, (-1, 1)) - pred))",
                 "tf.reduce_mean(tf.square(y[:, None] - pred))",
                 "tf.reduce_mean(tf.square(y - tf.squeeze(pred, -1)))",
                 "tf.reduce_mean(tf.square(y - pred[:, 0]))",
                 "tf.keras.losses.MeanSquaredError()(y, pred)",
                 "tf.reduce_mean(tf.keras.losses.mean_squared_error(y, pred))"):
        assert codes(_program(data, loss)) == [], loss


def test_two_dimensional_labels_are_silent():
    assert codes(_program("""
        x = np.random.rand(128, 4).astype("float32")
        y = np.random.rand(128, 1).astype("float32")
    """, "tf.reduce_mean(tf.square(y - pred))")) == []


def test_labels_of_unknown_shape_are_silent():
    assert codes(_program("""
        import pandas as pd
        frame = pd.read_csv("data.csv")
        x = frame.drop(columns=["target"]).values
        y = frame["target"].values
    """, "tf.reduce_mean(tf.square(y - pred))")) == []
    assert codes(_program("""
        x, y = load_dataset()
    """, "tf.reduce_mean(tf.abs(y - pred))")) == []


def test_sparse_labels_with_a_keras_loss_on_a_ten_way_classifier_are_silent():
    assert codes("""
        import numpy as np
        import tensorflow as tf
        x = np.random.rand(128, 4).astype("float32")
        y = np.random.randint(0, 10, size=(128,))
        model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(10)])
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
    """) == []


def test_hand_written_binary_cross_entropy_on_flat_labels_is_reported():
    found = findings("""
        import numpy as np
        import tensorflow as tf
        x = np.random.rand(128, 4).astype("float32")
        y = np.random.randint(0, 2, size=128).astype("float32")
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
        with tf.GradientTape() as tape:
            p = model(x, training=True)
            loss = -tf.reduce_mean(y * tf.math.log(p) + (1.0 - y) * tf.math.log(1.0 - p))
    """)
    assert len(found) == 2


def test_hand_rolled_linear_regression_on_a_column_feature_is_reported():
    found = findings("""
        import numpy as np
        import tensorflow as tf
        X = np.random.rand(200, 1).astype("float32")
        y = (3.0 * X[:, 0] + 1.0).astype("float32")
        w = tf.Variable(0.0)
        b = tf.Variable(0.0)
        model = tf.keras.layers.Dense(1)
        with tf.GradientTape() as tape:
            pred = w * X + b
            loss = tf.reduce_mean(tf.square(y - pred))
        grads = tape.gradient(loss, [w, b])
    """)
    assert [d.code for d in found] == ["TL110"]
    assert "np.random.rand(200, 1)" in found[0].message


def test_pairwise_differences_built_on_purpose_are_silent():
    assert codes("""
        import numpy as np
        import tensorflow as tf
        a = np.random.rand(64)
        b = np.random.rand(64)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        with tf.GradientTape() as tape:
            distances = tf.square(a[:, None] - b)
            loss = tf.reduce_mean(model(distances))
    """) == []


def test_tf_data_labels_reach_a_step_function():
    found = findings("""
        import numpy as np
        import tensorflow as tf
        x = np.random.rand(256, 3).astype("float32")
        y = np.random.rand(256).astype("float32")
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD(0.1)

        @tf.function
        def step(features, labels):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.abs(labels - model(features, training=True)))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        for xb, yb in ds:
            step(xb, yb)
    """)
    assert [d.code for d in found] == ["TL110"]


def test_constant_weights_in_a_test_case_are_silent():
    assert codes("""
        import tensorflow as tf

        class OptimizerTest(tf.test.TestCase):
            def test_update(self):
                model = tf.keras.Sequential([
                    tf.keras.layers.Dense(2, kernel_initializer="ones", use_bias=False),
                    tf.keras.layers.Dense(1, kernel_initializer="ones", use_bias=False),
                ])
    """) == []


def test_hand_computed_mse_of_predict_on_flat_dataset_labels_is_reported():
    found = findings("""
        import numpy as np
        from keras import layers, models
        from keras.datasets import boston_housing

        (train_data, train_targets), (test_data, test_targets) = boston_housing.load_data()
        x_train = train_data.astype(np.float32)
        y_train = train_targets.astype(np.float32)
        model = models.Sequential()
        model.add(layers.Dense(64, activation="relu"))
        model.add(layers.Dense(1))
        model.compile(optimizer="rmsprop", loss="mse")
        model.fit(x_train, y_train, epochs=40, batch_size=10)
        print(np.square(np.subtract(y_train, model.predict(x_train))).mean())
    """)
    assert [d.code for d in found] == ["TL110"]
    assert "load_data()" in found[0].message
