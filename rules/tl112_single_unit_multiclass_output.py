from __future__ import annotations

from tapelint.analysis.evaluations import LossKind
from tapelint.analysis.heads import single_unit_multiclass
from tapelint.rules._heads_family import causes
from tapelint.analysis.labels import Encoding
from tapelint.analysis.facts import arg_value
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

import libcst as cst


class SingleUnitMulticlassOutput(Rule):
    """
    ## What it does
    Reports a model whose output layer has a single unit while its loss or its targets speak of several
    classes:
    - a categorical cross-entropy (`categorical_crossentropy`, `CategoricalCrossentropy`, with or without
      `from_logits`) on one unit, whatever the targets;
    - a binary or sparse categorical cross-entropy on one unit, with targets this file proves to have more
      than two classes (`to_categorical(y, 10)`, `mnist.load_data()`, `make_classification(n_classes=4)`, ...).

    Both `compile(loss=...)` with the targets of `fit`, and `loss_fn(y, model(x))` in a custom loop, are read.

    ## Why is this bad?
    A categorical cross-entropy normalises the outputs of a sample into a distribution. Over one unit
    that distribution is always `[1.0]`, so the loss reads exactly 0 whatever the model predicts: on TF 2.21
    a `Dense(1, activation="sigmoid")` model compiled with `categorical_crossentropy` reports `loss: 0.0000`
    from the first batch to the last, and Keras only prints a `SyntaxWarning`. What gradient Keras 3 still
    takes through the layer's cached logits drives every output towards 0 (about 2.6e-10 in our corpus
    program), and the model predicts class 0 for everything. A binary cross-entropy on
    class ids 0..9 is no better: targets above 1 make the loss negative and unbounded (observed: -12 after
    one epoch, -128 after five) and the accuracy stays at chance (0.12 on 10 balanced classes). A sparse
    categorical cross-entropy on one unit accepts only class 0; other ids fail on the CPU and give
    garbage on a GPU.

    ## Example
    ```python
    (x_train, y_train), _ = keras.datasets.mnist.load_data()
    model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(x_train, y_train)
    ```

    ## Use instead
    ```python
    model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x_train, y_train)
    ```

    ## Known problems
    The number of classes comes only from evidence in this file (see labels.py: `to_categorical`, Keras
    and scikit-learn data sets, `tf.one_hot`, ...); targets read from files are not counted, and nothing is
    reported then (except for the categorical loss, which is wrong on one unit whatever the targets). Where
    the one unit also carries a softmax, this rule reports it instead of TL106, because the missing units
    are the cause.

    ## Options
    None.

    ## Fix safety
    No fix: the output layer needs as many units as classes, and the loss may have to change with it.

    ## References
    - https://datascience.stackexchange.com/questions/38604/too-low-accuracy-on-mnist-dataset-using-a-neural-network
      (MNIST, `Dense(1, activation='sigmoid')` and `binary_crossentropy`: "loss: -55.0254 - acc: 0.1142")
    - https://github.com/keras-team/keras/issues/2975 (one output unit and a categorical loss: nothing learns)
    - https://codemia.io/knowledge-hub/path/keras_binary_crossentropy_has_negative_values (the Stack Overflow
      question "Keras: Binary_crossentropy has negative values": targets outside [0, 1])
    - https://geek-tips.imtqy.com/articles/557592/index.html ("if you have only 1 node output, it will always be 1.0")
    - https://python.19633.com/cs/python-tag-9/Keras-9/1009048621.html (`Dense(1)` with
      `sparse_categorical_crossentropy` on labels 0..6: "a unary classifier")
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    """

    code = "TL112"
    name = "single-unit-multiclass-output"
    message = "The output has one unit but {why}: {consequence}"
    severity = Severity.ERROR
    triggers = (("Dense", "rossentropy"),)
    probe = "Confirmed when the loss is constant across the probe's steps (categorical loss on one unit)."

    def check(self) -> None:
        seen: set[int] = set()
        for head_node, meeting in single_unit_multiclass(self.facts).items():
            if head_node in seen:
                continue
            seen.add(head_node)
            node = meeting.head.node
            assert node is not None
            where = self._units_argument(node)
            loss = meeting.loss.written
            if meeting.loss.kind is LossKind.CATEGORICAL:
                why = f"`{loss}` normalises over the last axis"
                consequence = ("a distribution over one unit is always 1.0, so the loss reads 0 whatever the "
                               "model predicts and cannot fit the targets; give the output one unit per class")
            else:
                classes = meeting.targets.classes
                kind = "one-hot rows" if meeting.targets.encoding is Encoding.ONE_HOT else "class ids"
                why = f"the `{loss}` targets are {kind} of {classes} classes (from {meeting.targets.evidence})"
                consequence = (f"use {classes} units with `softmax` and a categorical loss" if
                               meeting.loss.kind is LossKind.BINARY else
                               f"class ids above 0 are out of range for one unit; use {classes} units")
            self.report(where, why=why, consequence=consequence,
                        related=causes(meeting, loss=True, targets=meeting.loss.kind is not LossKind.CATEGORICAL))

    @staticmethod
    def _units_argument(node: cst.CSTNode) -> cst.CSTNode:
        if type(node) is cst.Call:
            units = arg_value(node, 0, "units")
            if units is not None:
                return units
        return node

    VALID = [
        Valid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x_train, y_train)
""",
            "ten units for ten classes",
        ),
        Valid(
            """
from tensorflow import keras
from sklearn.datasets import make_classification

x, y = make_classification(n_samples=500, n_features=20)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x, y)
""",
            "near miss: one sigmoid unit for two classes",
        ),
        Valid(
            """
import numpy as np
from tensorflow import keras

y = np.load("labels.npy")
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(np.load("features.npy"), y)
""",
            "near miss: targets read from a file: how many classes is unknown",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x_train, y_train)
""",
            line=6, column=46,
            message_contains="targets are class ids of 10 classes (from `mnist.load_data()`)",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(1, activation="softmax")(hidden)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
""",
            line=6,
            message_contains="`categorical_crossentropy` normalises over the last axis",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(0.01)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(tf.one_hot(y, 3), model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=4,
            message_contains="the loss reads 0 whatever the model predicts",
        ),
    ]
