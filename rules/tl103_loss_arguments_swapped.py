from __future__ import annotations

import libcst as cst

from tapelint.analysis.names import dotted
from tapelint.analysis.predictions import (
    Evaluation,
    evaluations,
    prediction_source,
)
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

# Losses and metrics that give the same value when the arguments are swapped.
SYMMETRIC = frozenset(
    {
        "MeanSquaredError", "mean_squared_error", "mse", "MSE", "MeanAbsoluteError", "mean_absolute_error",
        "mae", "MAE", "Huber", "huber", "LogCosh", "log_cosh", "logcosh", "CosineSimilarity",
        "cosine_similarity", "RootMeanSquaredError", "Accuracy", "accuracy", "Mean", "Sum", "MeanTensor",
        "MeanMetricWrapper", "Loss", "Metric", "Reduction", "LogCoshError", "MeanIoU", "IoU", "BinaryIoU",
        "OneHotIoU", "OneHotMeanIoU", "Dice", "dice", "F1Score", "log_cosh_error",
    }
)


class LossArgumentsSwapped(Rule):
    """
    ## What it does
    Reports a Keras loss or metric (`loss_fn(y_true, y_pred)`, `metric.update_state(y_true, y_pred)`,
    `keras.losses.categorical_crossentropy(...)`) whose *first* argument is the model's output and whose
    second is not, and `tf.nn.*_cross_entropy_with_logits(labels=..., logits=...)` with the model's
    output passed as `labels=`. The model's output is followed through assignments, helper functions,
    `self(...)` in a `train_step` and subclassed models; a layer written by hand (`tf.matmul(x, W) + b`,
    `x @ W` with `W` a `tf.Variable`) counts as a model. When the first value cannot be followed to a
    model, nothing is reported: a name such as `predictions` or `labels` is not evidence.

    ## Why is this bad?
    Keras losses take `(y_true, y_pred)`. Swapped, a cross-entropy takes the log of the (clipped) one-hot
    labels and weighs it by the predictions: the value is finite, the gradient is meaningless, and
    training fails quietly on anything harder than a toy. The official TensorFlow tutorials shipped
    this bug more than once. Symmetric losses (`MeanSquaredError`, `MeanAbsoluteError`, `Huber`,
    `LogCosh`, `CosineSimilarity`) give the same value either way and are not reported.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(predictions, labels)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    ```

    ## Known problems
    Knowledge distillation with precomputed teacher outputs read from a dataset can legitimately put a
    student's prediction first in a KL divergence; suppress the line then. Calls where both arguments
    come from models (distillation with a live teacher, consistency losses) are never reported.

    ## Options
    None.

    ## Fix safety
    The fix swaps the two positional arguments. It is unsafe: the loss value changes (that is the
    point), and code that compares the loss against recorded numbers will see different ones.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/Loss#__call__ (`__call__(y_true, y_pred)`)
    - https://github.com/tensorflow/tensorflow/issues/38067 (the arguments swapped in an official tutorial)
    - https://github.com/tensorflow/docs/pull/1528
    - https://github.com/cleverhans-lab/cleverhans/issues/25 ("will make the training fail ... on cifar-10")
    - https://github.com/bolunwang/backdoor/issues/11 (`categorical_crossentropy` with swapped arguments: "It is actually not the same")
    """

    code = "TL103"
    name = "loss-arguments-swapped"
    message = "`{callee}` takes `(y_true, y_pred)` but gets {source} first and `{other}` second: the arguments are swapped"
    severity = Severity.ERROR
    fixable = True
    triggers = ("losses", "metrics", "Crossentropy", "crossentropy", "cross_entropy", "Divergence", "Hinge",
                "Accuracy")
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for ev in evaluations(facts):
            if ev.name in SYMMETRIC or ev.y_true is None or ev.y_pred is None:
                continue
            first = prediction_source(facts, ev.y_true, ev.site.scope, ev.site.order)
            second = prediction_source(facts, ev.y_pred, ev.site.scope, ev.site.order)
            confidence = Confidence.HIGH
            if first is None or second is not None:
                continue  # unknown, or both are predictions: distillation, consistency losses
            callee = dotted(ev.site.node.func) or ev.name
            other = cst.Module([]).code_for_node(ev.y_pred)
            if ev.kind == "tf.nn":
                self.report(
                    ev.y_true_arg or ev.site.node,
                    f"`{callee}` gets {first} as `labels=` and `{other}` as `logits=`: the arguments are swapped",
                    confidence=confidence,
                    fix=self._fix(ev),
                )
                continue
            self.report(ev.site.node, confidence=confidence, fix=self._fix(ev), callee=callee, source=first,
                        other=other)

    @staticmethod
    def _fix(ev: Evaluation) -> PendingFix | None:
        a, b = ev.y_true_arg, ev.y_pred_arg
        if a is None or b is None or ev.y_true is None or ev.y_pred is None:
            return None
        if ev.kind != "tf.nn" and (a.keyword is not None or b.keyword is not None):
            return None
        return PendingFix("Swap the arguments to `(y_true, y_pred)`", False,
                          [(ev.y_true, ev.y_pred), (ev.y_pred, ev.y_true)])

    VALID = [
        Valid(
            """
from tensorflow import keras

bce = keras.losses.BinaryCrossentropy()

def evaluate(predictions, labels):
    return bce(predictions, labels)
""",
            "near miss: names are not evidence; nothing calls `evaluate`, so its arguments could hold anything",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.zeros((8, 4)))
b = tf.Variable(tf.zeros((1, 4)))
loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.SGD(0.1)

def train(features, label):
    with tf.GradientTape() as tape:
        prediction = tf.nn.softmax(tf.matmul(features, w) + b)
        loss = loss_fn(label, prediction)
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(grads, [w, b]))
    return loss
""",
            "near miss: a layer written by hand, its output passed second",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    train_accuracy(labels, predictions)
    return gradients
""",
            "the TF quickstart loop: labels first",
        ),
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(784, activation="tanh")])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)

with tf.GradientTape() as tape:
    fake_output = discriminator(generator(tf.random.normal([8, 100]), training=True), training=True)
    loss = generator_loss(fake_output)
""",
            "near miss: the GAN target is built from the prediction with `tf.ones_like`",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
mse = tf.keras.losses.MeanSquaredError()
with tf.GradientTape() as tape:
    y_pred = model(tf.zeros((4, 3)), training=True)
    loss = mse(y_pred, tf.zeros((4, 1)))
""",
            "near miss: mean squared error is symmetric",
        ),
        Valid(
            """
import tensorflow as tf

teacher = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
student = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
kld = tf.keras.losses.KLDivergence()
with tf.GradientTape() as tape:
    x = tf.zeros((4, 3))
    loss = kld(teacher(x, training=False), student(x, training=True))
""",
            "distillation: both arguments are model outputs",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_object(logits, labels)
    return tape.gradient(loss, model.trainable_variables)
""",
            line=10, column=16,
            message_contains="`model(...)` first",
            expected_fix="""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_object(labels, logits)
    return tape.gradient(loss, model.trainable_variables)
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.head = tf.keras.layers.Dense(5)
        self.acc = tf.keras.metrics.CategoricalAccuracy()

    def call(self, x):
        return self.head(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_pred, logits=y))
        self.acc.update_state(y, y_pred)
        return {"loss": loss}
""",
            message_contains="as `labels=`",
        ),
        Invalid(
            """
import tensorflow as tf

class TransferHead(tf.Module):
    def __init__(self, features, classes):
        self.w = tf.Variable(tf.zeros((features, classes)))
        self.b = tf.Variable(tf.zeros((1, classes)))
        self.loss_fn = tf.keras.losses.CategoricalCrossentropy()
        self.optimizer = tf.keras.optimizers.Adam(0.001)

    @tf.function
    def train(self, features, label):
        with tf.GradientTape() as tape:
            prediction = tf.nn.softmax(tf.matmul(features, self.w) + self.b)
            loss = self.loss_fn(prediction, label)
        grads = tape.gradient(loss, [self.w, self.b])
        self.optimizer.apply_gradients(zip(grads, [self.w, self.b]))
        return loss
""",
            line=15,
            message_contains="a layer written by hand",
        ),
    ]
