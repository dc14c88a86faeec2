from __future__ import annotations

import libcst as cst

from tapelint.analysis.names import dotted
from tapelint.analysis.outputs import output_model, single_output
from tapelint.analysis.evaluations import evaluations
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


def _subscripts(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, list[cst.Subscript]]:
    """`p[0][:-1]` -> (`p`, [`p[0]`, `p[0][:-1]`]) innermost first."""
    chain: list[cst.Subscript] = []
    while isinstance(expr, cst.Subscript):
        chain.append(expr)
        expr = expr.value
    return expr, list(reversed(chain))


def _first_index_is_integer(sub: cst.Subscript) -> bool:
    if not sub.slice:
        return False
    first = sub.slice[0].slice
    return isinstance(first, cst.Index) and isinstance(first.value, cst.Integer)


def _drops_last(sub: cst.Subscript) -> bool:
    last = sub.slice[-1].slice if sub.slice else None
    if not isinstance(last, cst.Slice) or last.lower is not None:
        return False
    upper = last.upper
    return isinstance(upper, cst.UnaryOperation) and isinstance(upper.operator, cst.Minus)


class MetricFedSingleSample(Rule):
    """
    ## What it does
    Reports a Keras metric (`metric.update_state(y, p)` or `metric(y, p)`) whose prediction argument is
    one sample of the batch, `logits[0]`, where `logits` is the whole batch output of a single-output
    model. The loop of `examples/seed2_vgg_cifar_loop.py` (from a Stack Overflow question) does
    `train_acc_metric(y_batch_train[0], logits[0][:-1])`: one sample, and a prediction vector with its
    last class cut off.

    ## Why is this bad?
    The metric then scores one example per step (0 or 1 for accuracy) instead of the batch, and with a
    slice like `[:-1]` it compares against the wrong classes. The printed number is noise, and users
    conclude that "the model is not learning" when it is. Metrics take whole batches: pass `y` and the
    model output unchanged.

    ## Example
    ```python
    logits = model(x_batch, training=True)
    train_acc_metric.update_state(y_batch[0], logits[0][:-1])
    ```

    ## Use instead
    ```python
    logits = model(x_batch, training=True)
    train_acc_metric.update_state(y_batch, logits)
    ```

    ## Known problems
    Only outputs of models built in this file with one output are checked; indexing a multi-output
    model's result (`outputs[0]` is its first head) is not reported.

    ## Options
    None.

    ## Fix safety
    No fix: the labels may need the same change, and the author may have meant something else.

    ## References
    - https://keras.io/api/metrics/ (metrics take batches of `y_true`, `y_pred`)
    - https://github.com/keras-team/keras/issues/18796 (accuracy that says nothing about learning)
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected" (`train_acc_metric(y_batch_train[0], logits[0][:-1])`)
    """

    code = "TL109"
    name = "metric-fed-single-sample"
    message = "`{metric}` is fed `{arg}`: one sample of the batch{extra}, so the number it reports says nothing about training"
    severity = Severity.WARNING
    triggers = ("metrics",)
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for ev in evaluations(facts):
            if ev.role != "metric" or ev.y_pred is None:
                continue
            base, chain = _subscripts(ev.y_pred)
            if not chain or not _first_index_is_integer(chain[0]):
                continue
            model = output_model(facts, base, ev.site.scope, ev.site.order, through_params=True)
            if model is None or not single_output(model):
                continue
            extra = " with its last classes cut off" if any(_drops_last(s) for s in chain) else ""
            self.report(ev.y_pred, metric=dotted(ev.site.node.func) or ev.name,
                        arg=cst.Module([]).code_for_node(ev.y_pred), extra=extra)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
acc = tf.keras.metrics.CategoricalAccuracy()
for x, y in tf.data.Dataset.from_tensor_slices((tf.zeros((8, 4)), tf.zeros((8, 10)))).batch(4):
    probs = model(x, training=False)
    acc.update_state(y, probs)
""",
            "the whole batch",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(4,))
hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
model = tf.keras.Model(inputs, [tf.keras.layers.Dense(3)(hidden), tf.keras.layers.Dense(1)(hidden)])
acc = tf.keras.metrics.SparseCategoricalAccuracy()
outputs = model(tf.zeros((2, 4)))
acc.update_state(tf.constant([0, 2]), outputs[0])
""",
            "near miss: `outputs[0]` is the first head of a two-output model",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(4096, activation="relu"), tf.keras.layers.Dense(10, activation="softmax")])
loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()

def train(dataset):
    for step, (x_batch_train, y_batch_train) in enumerate(dataset):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric(y_batch_train[0], logits[0][:-1])
""",
            line=16, column=44,
            message_contains="with its last classes cut off",
        ),
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
auc = keras.metrics.AUC()
auc.update_state([1.0], model(keras.ops.zeros((8, 3)))[0])
""",
            message_contains="one sample of the batch,",
        ),
    ]
