"""Tensor shapes, when provable: constructors, broadcasting, indexing, reductions, tf.data and model outputs.

Each program marks the questions with `probe(expr)` calls; the tests ask about `expr` there.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.shapes import elementwise_operations, shape_of


def _shapes(source: str):  # type: ignore[no-untyped-def]
    facts = Facts(cst.parse_module(textwrap.dedent(source)))
    return [shape_of(facts, s.node.args[0].value, s.scope, s.order) for s in facts.calls_to("probe")]


def _dims(source: str):  # type: ignore[no-untyped-def]
    return [s.dims if s is not None else "unknown" for s in _shapes(source)]


def test_numpy_constructors_with_literal_shapes():
    assert _dims("""
        import numpy as np
        n = 64
        rng = np.random.default_rng(0)
        probe(np.random.rand(n))
        probe(np.random.rand(n, 3))
        probe(rng.normal(size=(n, 1)))
        probe(rng.integers(0, 10, size=n))
        probe(np.random.randint(0, 2, size=(n,)))
        probe(np.zeros((4, 5)))
        probe(np.arange(10))
        probe(rng.normal())
        probe(np.random.normal(0, 1, shape_from_config()))
    """) == [(64,), (64, 3), (64, 1), (64,), (64,), (4, 5), (None,), (), "unknown"]


def test_matmul_reductions_and_broadcasting():
    assert _dims("""
        import numpy as np
        import tensorflow as tf
        x = np.random.rand(100, 3)
        w = np.array([1.0, 2.0, 3.0])
        probe(x @ w)
        probe(x @ w + 0.1 * np.random.randn(100))
        probe(np.sum(x ** 2, axis=1))
        probe(x.mean(axis=0, keepdims=True))
        probe(tf.reduce_mean(x))
        probe((x[:, 0] > 0.5).astype("float32"))
    """) == [(100,), (100,), (100,), (1, 3), (), (100,)]


def test_indexing_reshape_and_expand():
    assert _dims("""
        import numpy as np
        import tensorflow as tf
        data = np.random.rand(50, 6)
        x, y = data[:, :-1], data[:, -1]
        probe(x)
        probe(y)
        probe(y[:, None])
        probe(y.reshape(-1, 1))
        probe(tf.reshape(y, (-1, 1)))
        probe(tf.expand_dims(y, -1))
        probe(y[10:20])
        probe(tf.squeeze(y[:, None], axis=1))
        probe(data[mask])
    """) == [(50, None), (50,), (50, 1), (None, 1), (None, 1), (50, 1), (None,), (50,), "unknown"]


def test_tf_data_batches_iterated_in_a_loop_and_through_a_step_function():
    assert _dims("""
        import numpy as np
        import tensorflow as tf
        x = np.random.rand(256, 8).astype("float32")
        y = np.random.rand(256).astype("float32")
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(256).batch(32).prefetch(1)
        def step(features, labels):
            probe(labels)
            probe(features)
        for epoch in range(3):
            for i, (xb, yb) in enumerate(ds):
                step(xb, yb)
        for xb, yb in ds.map(lambda a, b: (a, b * 2.0)):
            probe(yb)
    """) == [(None,), (None, 8), "unknown"]


def test_keras_dataset_labels():
    assert _dims("""
        import tensorflow as tf
        (x_train, y_train), (x_test, y_test) = tf.keras.datasets.boston_housing.load_data()
        probe(y_train)
        (a, b), _ = tf.keras.datasets.cifar10.load_data()
        probe(b)
        probe(x_train)
    """) == [(None,), (None, 1), "unknown"]


def test_model_outputs_know_their_last_axis_only():
    shapes = _shapes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
        inputs = tf.keras.Input((3,))
        functional = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
        pred = model(x, training=True)
        probe(pred)
        probe(tf.sigmoid(pred) + 1e-7)
        probe(functional(x))
        probe(tf.squeeze(pred, -1))
        probe(pred[:, 0])
        probe(tf.squeeze(pred))
    """)
    first, activated, functional, squeezed, sliced, squeezed_all = shapes
    assert first is not None and first.dims is None and first.last_dim == 1 and first.at_least_2d and first.from_model
    assert activated is not None and activated.last_dim == 1 and activated.from_model
    assert functional is not None and functional.last_dim == 1
    assert squeezed is not None and squeezed.last_dim is None and squeezed.rank is None
    assert sliced is None and squeezed_all is None


def test_names_that_may_hold_different_shapes_are_unknown():
    assert _dims("""
        import numpy as np
        if flat:
            y = np.random.rand(10)
        else:
            y = np.random.rand(10, 1)
        probe(y)
        y2 = load_targets()
        probe(y2)
    """) == ["unknown", "unknown"]


def test_elementwise_operations_are_listed_with_their_operands():
    facts = Facts(cst.parse_module(textwrap.dedent("""
        import tensorflow as tf
        def loss(y, p):
            return tf.reduce_mean(tf.square(y - p)) + tf.math.squared_difference(y, p) * 2
    """)))
    found = sorted(facts.module.code_for_node(op.node) for op in elementwise_operations(facts))
    assert found == ["tf.math.squared_difference(y, p)", "tf.math.squared_difference(y, p) * 2",
                     "tf.reduce_mean(tf.square(y - p)) + tf.math.squared_difference(y, p) * 2", "y - p"]
