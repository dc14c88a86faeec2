from __future__ import annotations

from tapelint.analysis.evaluations import LossKind
from tapelint.analysis.heads import ACTIVATION_RANGES, activation_argument, meetings, targets_outside
from tapelint.analysis.labels import Encoding
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._heads_family import causes, replace_string

import libcst as cst


def _bound(value: float) -> str:
    return "inf" if value == float("inf") else f"{value:g}"


class BoundedRegressionOutput(Rule):
    """
    ## What it does
    Reports a regression loss (`mse`, `mae`, `huber`, `log_cosh`, `mape`, `msle` and their classes) on a
    model whose output activation is bounded (`sigmoid`, `tanh`, `softmax`, `relu`, `softplus`, `elu`, ...),
    when the targets are proved to go beyond that bound: prices from `boston_housing.load_data()`,
    `make_regression`, `load_diabetes`, targets standardised with `StandardScaler` (negative values under a
    `relu` or `sigmoid`), and so on. Read in `compile(loss=...)` with the targets of `fit`, and in custom
    loops (`loss_fn(y, model(x))`).

    ## Why is this bad?
    The model cannot output the values it is asked to predict: a sigmoid stops at 1, a tanh at -1 and 1, a
    relu at 0. Every target beyond the bound leaves an error the model can never remove, and pushing towards
    it saturates the activation, whose gradient then vanishes. On TF 2.21, an MLP ending in
    `Dense(1, activation="sigmoid")` trained with MSE on targets between 5 and 50 went from loss 765 to 746 in
    ten epochs, every prediction pinned at 0.97-1.00; the same model with a linear output reached 14. On
    standardised targets a `relu` output stopped at loss 0.56 and a `sigmoid` at 0.53 (linear: 0.04): the
    negative half of the targets is out of reach.

    ## Example
    ```python
    (x_train, y_train), _ = keras.datasets.boston_housing.load_data()
    model = keras.Sequential([keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x_train, y_train)
    ```

    ## Use instead
    ```python
    model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x_train, y_train)
    ```

    Keeping a bounded output is fine when the targets are scaled into its range (`MinMaxScaler` for a
    sigmoid): that is not reported.

    ## Known problems
    The range of the targets comes only from evidence in this file (labels.py: Keras and scikit-learn data
    sets, `StandardScaler`, ...). Targets read from a CSV file are unknown, and nothing is reported then.

    ## Options
    None.

    ## Fix safety
    For a string activation the fix writes `"linear"`. It is unsafe: scaling the targets into the
    activation's range is the other way to fix it.

    ## References
    - https://community.deeplearning.ai/t/loss-values-do-not-change/324182 (a `relu` output, targets -3..9:
      "the loss values do not change")
    - https://stackoverflow.com/questions/52800582/why-do-i-fail-to-predict-y-x4-with-keras-y-x3-works
    - https://keras.io/api/layers/activations/
    """

    code = "TL113"
    name = "bounded-regression-output"
    message = ("The `{activation}` output ({where}) only reaches [{low}, {high}], but the `{loss}` targets go "
               "{outside} (from {evidence}): that error can never be removed, and the output saturates")
    severity = Severity.ERROR
    fixable = True
    triggers = ("activation",)
    probe = ""

    def check(self) -> None:
        seen: set[int] = set()
        for meeting in meetings(self.facts):
            head, targets = meeting.head, meeting.targets
            if meeting.loss.kind is not LossKind.REGRESSION or targets.encoding is not Encoding.CONTINUOUS:
                continue
            activation = head.activation
            if activation not in ACTIVATION_RANGES or head.node is None or id(head.node) in seen:
                continue
            low, high = ACTIVATION_RANGES[activation]
            outside = targets_outside(targets, low, high)
            if outside is None:
                continue
            seen.add(id(head.node))
            argument = activation_argument(self.facts, head.node)
            node: cst.CSTNode = argument if argument is not None else head.node
            fix = replace_string(argument, activation, "linear", "Use a linear output")
            self.report(node, fix=fix, activation=activation, where=head.output.description or "the output layer", low=_bound(low), high=_bound(high),
                        loss=meeting.loss.written, outside=outside, evidence=targets.evidence or "the targets",
                        related=causes(meeting, targets=True, loss=True))

    VALID = [
        Valid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.boston_housing.load_data()
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_train, epochs=10)
""",
            "a linear output for house prices",
        ),
        Valid(
            """
from sklearn.preprocessing import MinMaxScaler
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.boston_housing.load_data()
y_scaled = MinMaxScaler().fit_transform(y_train.reshape(-1, 1))
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_scaled, epochs=10)
""",
            "near miss: a sigmoid output on targets scaled into [0, 1]",
        ),
        Valid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.boston_housing.load_data()
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1, activation="relu")])
model.compile(optimizer="adam", loss="mae")
model.fit(x_train, y_train, epochs=10)
""",
            "near miss: a relu output for prices, which are all positive",
        ),
        Valid(
            """
import pandas as pd
from tensorflow import keras

frame = pd.read_csv("prices.csv")
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="mse")
model.fit(frame.drop(columns="price").values, frame["price"].values)
""",
            "near miss: the targets come from a file, their range is unknown",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.boston_housing.load_data()
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_train, epochs=10)
""",
            line=5,
            message_contains="The `sigmoid` output (`Dense` layer) only reaches [0, 1], but the `mse` targets go above 1",
            expected_fix="""
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.boston_housing.load_data()
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1, activation="linear")])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_train, epochs=10)
""",
        ),
        Invalid(
            """
import tensorflow as tf
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler

x, y = make_regression(n_samples=1000, n_features=8, noise=0.1)
y = StandardScaler().fit_transform(y.reshape(-1, 1))
inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(1, activation="relu")(hidden)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss=tf.keras.losses.MeanSquaredError())
model.fit(x, y, epochs=20)
""",
            line=10,
            message_contains="`relu` output (`Dense` layer) only reaches [0, inf]",
        ),
        Invalid(
            """
import tensorflow as tf
from sklearn.datasets import make_regression

features, targets = make_regression(n_samples=512, n_features=4)
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1, activation="tanh")])
loss_fn = tf.keras.losses.Huber()
optimizer = tf.keras.optimizers.Adam()
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(32)

for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=6,
            message_contains="The `tanh` output",
        ),
    ]
