from __future__ import annotations

from tapelint.analysis.evaluations import LossKind
from tapelint.analysis.heads import meetings
from tapelint.analysis.labels import Encoding
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._heads_family import causes, head_where, replace_string

_PROBABILITY_HEADS = frozenset({"softmax", "sigmoid"})


class RegressionLossOnClassifier(Rule):
    """
    ## What it does
    Reports a regression loss (`mse`, `mae`, `mape`, `msle`, `huber`, `log_cosh` and their classes) between
    integer class ids and the probabilities of a classifier with several output units (`Dense(K,
    activation="softmax")` or K sigmoid units), in `compile(loss=...)` with the targets of `fit` and in custom
    loops. The targets must be proved to be class ids (`mnist.load_data()`, `make_classification`, `np.argmax`,
    ...).

    ## Why is this bad?
    A regression loss subtracts the target from every output: a class id such as 7 is compared with each of
    the K probabilities, all of which lie in [0, 1]. With targets shaped `(n, 1)` the subtraction broadcasts,
    the loss cannot fall below the distance from 7 to a probability, and nothing useful is learned: on TF
    2.21 a 10-class softmax model trained with MSE on `(n, 1)` class ids kept a loss of 28.26 from the first
    epoch to the fifth, with accuracy 0.12 (chance is 0.10). With 1-D targets Keras 3 stops at the first batch
    with "Incompatible shapes: [64] vs. [64,10]".

    MSE on one-hot rows is a different matter (the Brier score): it trains (0.82 accuracy against 0.81 with a
    cross-entropy on the same data) and is not reported.

    ## Example
    ```python
    (x_train, y_train), _ = keras.datasets.mnist.load_data()
    model.add(keras.layers.Dense(10, activation="softmax"))
    model.compile(optimizer="adam", loss="mse")
    model.fit(x_train, y_train.reshape(-1, 1))
    ```

    ## Use instead
    ```python
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x_train, y_train)
    ```

    ## Known problems
    The targets must be proved to be class ids in this file; one-hot targets, and targets read from files,
    are not reported.

    ## Options
    None.

    ## Fix safety
    For a string loss the fix writes `"sparse_categorical_crossentropy"`. It is unsafe: the metrics, and code
    that reads the loss value, change with it.

    ## References
    - http://pullrequest.ru/14126136/polzovatelskaya-funktsiya-poter-dlya-prognozirovaniya-vyhodnyh-dannyh-interget
      (MSE on integer class labels; the answer: a softmax output with `sparse_categorical_crossentropy`)
    - https://whosebug.com/question/4051439/Keras-loss-function-does-not-decrease-on-mean-squared-error
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/SparseCategoricalCrossentropy
    """

    code = "TL114"
    name = "regression-loss-on-classifier"
    message = ("`{loss}` compares each class id (from {evidence}) with all {units} probabilities of the "
               "`{activation}` output ({where}): use `sparse_categorical_crossentropy`")
    severity = Severity.ERROR
    fixable = True
    triggers = ("activation",)
    probe = ""

    def check(self) -> None:
        seen: set[int] = set()
        for meeting in meetings(self.facts):
            head, targets = meeting.head, meeting.targets
            if meeting.loss.kind is not LossKind.REGRESSION or targets.encoding is not Encoding.INTEGER:
                continue
            if head.activation not in _PROBABILITY_HEADS or head.units is None or head.units < 2:
                continue
            node = meeting.loss.node
            if id(node) in seen:
                continue
            seen.add(id(node))
            fix = replace_string(node, None, "sparse_categorical_crossentropy", "Use `sparse_categorical_crossentropy`")
            self.report(node, fix=fix, loss=meeting.loss.written, evidence=targets.evidence or "the targets",
                        units=int(head.units), activation=head.activation, where=head_where(self, head),
                        related=causes(meeting, head=True, targets=True))

    VALID = [
        Valid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x_train, y_train)
""",
            "class ids with a sparse categorical cross-entropy",
        ),
        Valid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, keras.utils.to_categorical(y_train, 10))
""",
            "near miss: MSE on one-hot rows (the Brier score) trains",
        ),
        Valid(
            """
import tensorflow as tf

teacher = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
student = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
mse = tf.keras.losses.MeanSquaredError()

def distill_step(x):
    with tf.GradientTape() as tape:
        loss = mse(teacher(x), student(x, training=True))
    return tape.gradient(loss, student.trainable_variables)
""",
            "near miss: a softmax head matched to a teacher's probabilities (distillation)",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_train.reshape(-1, 1))
""",
            line=6, column=38,
            message_contains="`mse` compares each class id (from `mnist.load_data()`) with all 10 probabilities",
            expected_fix="""
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x_train, y_train.reshape(-1, 1))
""",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

labels = np.argmax(np.load("onehot.npy"), axis=1)
inputs = tf.keras.Input(shape=(16,))
outputs = tf.keras.layers.Dense(4, activation="softmax")(tf.keras.layers.Dense(32, activation="relu")(inputs))
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.MeanAbsoluteError()
optimizer = tf.keras.optimizers.Adam()

def train_step(x):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=9,
            message_contains="`MeanAbsoluteError` compares each class id",
        ),
        Invalid(
            """
from sklearn.datasets import make_classification
from tensorflow.keras.layers import Dense
from tensorflow.keras.models import Sequential

X, y = make_classification(n_samples=1000, n_features=10, n_classes=3, n_informative=4)
model = Sequential()
model.add(Dense(32, activation="relu", input_dim=10))
model.add(Dense(3, activation="softmax"))
model.compile(loss="mean_squared_error", optimizer="sgd", metrics=["accuracy"])
model.fit(X, y, epochs=20)
""",
            line=10,
            message_contains="with all 3 probabilities of the `softmax` output",
        ),
    ]
