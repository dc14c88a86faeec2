from __future__ import annotations

import libcst as cst

from tapelint.analysis.shapes import TensorShape, elementwise_operation, shape_of
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid


def _flat(shape: TensorShape | None) -> bool:
    """Provably one axis of data, longer than one: labels of shape (N,)."""
    return (shape is not None and shape.rank == 1 and shape.dims != (1,) and not shape.from_model)


def _column(shape: TensorShape | None) -> bool:
    """A prediction with a last axis of size 1 and at least two axes: a `Dense(1)` output, or a tensor built
    with an explicit `(..., 1)` shape."""
    return (shape is not None and shape.last_dim == 1 and shape.at_least_2d
            and (shape.from_model or shape.column))


def _describe(shape: TensorShape) -> str:
    if shape.dims is not None:
        inner = ", ".join("N" if i == 0 and d is None else "?" if d is None else str(d) for i, d in enumerate(shape.dims))
        return f"({inner},)" if len(shape.dims) == 1 else f"({inner})"
    return "(N, 1)" if shape.min_rank <= 2 else "(..., 1)"


class TargetShapeBroadcast(Rule):
    """
    ## What it does
    Reports an element-wise operation (`y - pred`, `y * tf.math.log(p)`, `tf.math.squared_difference(y,
    pred)`, `keras.ops.subtract(y, pred)`) between labels that provably have one axis, shape `(N,)`, and
    predictions whose last axis has size 1, shape `(N, 1)`: the output of a model or layer ending in
    `Dense(1)`, or a tensor built with an explicit `(..., 1)` shape. The labels' shape is read from NumPy
    constructors (`np.random.rand(N)`, `rng.normal(size=N)`, `x @ w` with a 1-D `w`), column slices
    (`data[:, -1]`), `keras.datasets` loaders and `tf.data.Dataset.from_tensor_slices((x, y))` pipelines
    iterated in the loop; `model.predict(x)` counts as the model's output. The static twin of the probe's TL814.

    ## Why is this bad?
    NumPy broadcasting turns `(N,) - (N, 1)` into an `(N, N)` matrix: every target is compared with every
    prediction. The mean of that matrix is smallest when every prediction is the mean of the targets, so
    the model learns to predict the mean and nothing else; nothing fails. Measured on TF 2.21 / Keras 3.15:
    `y - model(x)` has shape (256, 256); a regression MLP trained on it ends at R^2 = 0.00 (its predictions
    vary by 0.01 around the target mean) where the same loop with `y[:, None]` reaches R^2 = 0.99. Keras
    loss objects and functions (`keras.losses.MeanSquaredError()`, `keras.losses.mean_squared_error`) squeeze
    or expand `y_true` to the rank of `y_pred` and are correct (measured: same value as the aligned
    loss), which is why `model.fit` converges and the hand-written loop does not. `keras.ops.subtract` and
    `tf.math.squared_difference` broadcast exactly like `-`; `keras.losses.binary_crossentropy` raises
    "Arguments `target` and `output` must have the same rank" instead.

    ## Example
    ```python
    x = np.random.rand(256, 3).astype("float32")
    y = x @ np.array([1.0, -2.0, 0.5], "float32")          # shape (256,)
    model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - model(x)))     # (256, 256)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y[:, None] - model(x)))        # or tf.squeeze(model(x), -1)
    # or: loss = keras.losses.MeanSquaredError()(y, model(x))
    ```

    ## Known problems
    Silent unless both shapes are proved: labels from a CSV reader, a generator, a function of another module
    or a `tf.data` `map` that computes them have unknown shape. A prediction that is squeezed, sliced
    (`pred[:, 0]`) or reshaped, and labels reshaped to `(N, 1)` (`y[:, None]`, `tf.reshape(y, (-1, 1))`), are
    the fix and are not reported. The opposite mistake (labels `(N, 1)` against a prediction squeezed to
    `(N,)`) is not detected.

    ## Options
    None.

    ## Fix safety
    No fix: reshaping the labels (`y[:, None]`) or squeezing the prediction (`tf.squeeze(pred, -1)`) are
    both right, and the choice depends on how the rest of the loop uses them.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/28901 (a custom loop whose loss did not go down; fixed
      with `y = y[:, tf.newaxis]`)
    - https://github.com/keras-team/keras/issues/14627 (`np.square(np.subtract(y_train, model.predict(x_train)))`
      with boston_housing's (404,) targets: a (404, 404) "MSE" that disagrees with Keras')
    - https://numpy.org/doc/stable/user/basics.broadcasting.html
    """

    code = "TL110"
    name = "target-shape-broadcast"
    message = ("`{op}` broadcasts `{label}` of shape {label_shape} ({label_from}) against `{pred}` of shape "
               "{pred_shape} ({pred_from}) to (N, N): every target is compared with every prediction")
    severity = Severity.ERROR
    confidence = Confidence.HIGH
    triggers = (("GradientTape", "Dense"), ("predict", "Dense"))
    probe = "TL814 compares the shapes of the targets and predictions that reach the loss at run time."

    def check(self) -> None:
        facts = self.facts
        text = facts.module.code_for_node
        # The candidates, operators and calls of two or more arguments, in document order.
        candidates: list[tuple[int, cst.CSTNode]] = list(facts.binary_operations)
        candidates += [(site.order, site.node) for site in facts.calls if len(site.node.args) >= 2]
        candidates.sort(key=lambda entry: entry[0])
        for _, node in candidates:
            operation = elementwise_operation(facts, node)
            if operation is None:
                continue
            left = shape_of(facts, operation.left, operation.scope, operation.order)
            if left is None:
                continue
            right = shape_of(facts, operation.right, operation.scope, operation.order)
            if right is None:
                continue
            if _flat(left) and _column(right):
                label, pred, label_node, pred_node = left, right, operation.left, operation.right
            elif _flat(right) and _column(left):
                label, pred, label_node, pred_node = right, left, operation.right, operation.left
            else:
                continue
            self.report(
                operation.node,
                op=_short(text(operation.node)),
                label=_short(text(label_node)),
                label_shape=_describe(label),
                label_from=f"from `{label.evidence}`" if label.evidence else "one axis",
                pred=_short(text(pred_node)),
                pred_shape=_describe(pred),
                pred_from=pred.evidence if pred.from_model else f"from `{pred.evidence}`",
            )

    VALID = [
        Valid(
            """
import numpy as np
import tensorflow as tf

x = np.random.rand(256, 3).astype("float32")
y = (x @ np.array([1.0, -2.0, 0.5])).astype("float32")
model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-2)
for step in range(100):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y[:, None] - model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the labels are reshaped to (N, 1)",
        ),
        Valid(
            """
import numpy as np
import tensorflow as tf

x = np.random.rand(256, 3).astype("float32")
y = np.random.rand(256).astype("float32")
model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-2)
for step in range(100):
    with tf.GradientTape() as tape:
        pred = tf.squeeze(model(x, training=True), -1)
        loss = tf.reduce_mean(tf.square(y - pred))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the prediction is squeezed to (N,)",
        ),
        Valid(
            """
import numpy as np
import tensorflow as tf

x = np.random.rand(256, 3).astype("float32")
y = np.random.rand(256).astype("float32")
model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
loss_fn = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.Adam(1e-2)
for step in range(100):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: a Keras loss object aligns the ranks itself",
        ),
        Valid(
            """
import numpy as np
import pandas as pd
import tensorflow as tf

data = pd.read_csv("train.csv").values
x, y = data[:, :-1], data[:, -1]
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(y - model(x)))
""",
            "near miss: the CSV's shape cannot be proved, so neither can the labels'",
        ),
    ]
    INVALID = [
        Invalid(
            """
import numpy as np
import tensorflow as tf

x = np.random.rand(256, 3).astype("float32")
y = (x @ np.array([1.0, -2.0, 0.5])).astype("float32")
model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-2)
for step in range(100):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=11,
            message_contains="`y` of shape (256,) (from `x @ np.array([1.0, -2.0, 0.5])`)",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

features = np.random.rand(1000, 8).astype("float32")
targets = np.random.rand(1000).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(1000).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = tf.reduce_mean(tf.math.squared_difference(y, pred))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

for epoch in range(5):
    for x_batch, y_batch in dataset:
        train_step(x_batch, y_batch)
""",
            line=15,
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

data = np.random.rand(500, 6).astype("float32")
x, y = data[:, :-1], data[:, -1]
model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
with tf.GradientTape() as tape:
    p = model(x)
    loss = -tf.reduce_mean(y * tf.math.log(p + 1e-7) + (1 - y) * tf.math.log(1 - p + 1e-7))
""",
            line=10,
            count=2,
        ),
    ]


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
