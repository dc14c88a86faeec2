from __future__ import annotations

from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl010_assignments import forward_path_assigns


class AssignOnForwardPath(Rule):
    """
    ## What it does
    Reports `var.assign(value)`, `var.assign_add(value)` or `var.assign_sub(value)` inside a
    `GradientTape` block when `value` is computed from the variables the tape then differentiates (one of
    the `tape.gradient` sources, or a call of the model whose weights they are) and the loss reads the
    assigned variable back after the assignment, or uses what `tf.Variable.assign` returned.

    ## Why is this bad?
    TensorFlow does not differentiate through an assignment: the state of a variable lives outside the
    graph, and reading it back gives a new leaf with no history. The weights that computed the assigned
    value get no gradient along that path. Measured on TF 2.21: in `h.assign(tf.matmul(x, w));
    loss = tf.reduce_mean(h)` the gradient for `w` is None and `apply_gradients` raises `ValueError: No
    gradients provided for any variable.`; when other weights still reach the loss, Keras only warns
    `Gradients do not exist for variables [...]` and those layers keep their initial weights
    (`tests/corpus/assign_*.py`). What `tf.Variable.assign` returns has no gradient either; what Keras 3's
    `Variable.assign` (`add_weight`, `keras.Variable`) returns does, since it is the value it was given.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        hidden.assign(encoder(x, training=True))  # a tf.Variable used as a buffer
        loss = loss_fn(y, head(hidden, training=True))
    grads = tape.gradient(loss, encoder.trainable_variables + head.trainable_variables)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        features = encoder(x, training=True)
        loss = loss_fn(y, head(features, training=True))
    hidden.assign(features)  # keep the state, outside the path of the gradient
    ```

    ## Known problems
    Only assignments written in the tape's own function are followed; one inside a layer's `call` or a
    helper function is not seen. An assigned value that does not depend on the differentiated variables
    (a statistic of the data, a `tf.stop_gradient`-ed value, a counter) is fine and not reported, and
    neither is an assignment the loss does not read back (a moving average kept for inference).

    ## Options
    None.

    ## Fix safety
    No fix: the loss must read the tensor instead of the variable, which means restructuring the step.

    ## References
    - https://www.tensorflow.org/guide/autodiff (cases where `gradient` returns None: gradients through a
      stateful object)
    - https://github.com/tensorflow/tensorflow/issues/30234 ("TF doesn't track assignments to
      tf.Variables to their source operations")
    - https://github.com/tensorflow/tensorflow/issues/54568 and https://github.com/keras-team/keras/issues/16128
      (a memory layer: "It seems that assign op would break gradient")
    - https://github.com/tensorflow/tensorflow/issues/54532 (tape.gradient returns None when assign is
      used in a model)
    """

    code = "TL010"
    name = "assign-on-forward-path"
    message = "`{call}` stores a value computed from {source} inside the tape, and the loss reads it back ({where}): no gradient flows through an assignment, so {source} {gets} none along this path"
    severity = Severity.ERROR
    confidence = Confidence.HIGH
    triggers = (("assign", "GradientTape"),)
    probe = "Confirmed when the gradient of the loss for the variables behind the assigned value is None."

    def check(self) -> None:
        for found in forward_path_assigns(self.facts):
            site = found.site
            where = self.location(found.read) or "later"
            source = f"the weights of `{found.source}`" if found.owner else f"`{found.source}`"
            self.report(site.node, call=f"{found.variable}.{site.method}(...)", source=source, where=where,
                        gets="get" if found.owner else "gets")

    VALID = [
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 2)))
running_mean = tf.Variable(tf.zeros((2,)), trainable=False)
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        h = tf.matmul(x, w)
        running_mean.assign(0.9 * running_mean + 0.1 * tf.reduce_mean(h, axis=0))
        loss = tf.reduce_mean(tf.square(h - y))
    grads = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(grads, [w]))
""",
            "near miss: a running statistic is assigned inside the tape, but the loss never reads it",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 2)))
hidden = tf.Variable(tf.zeros((4, 2)), trainable=False)
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        h = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(h - y))
    hidden.assign(h)
    grads = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(grads, [w]))
""",
            "near miss: the state is kept after the tape, off the forward path",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 2)))
center = tf.Variable(tf.zeros((2,)), trainable=False)
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        center.assign(tf.reduce_mean(y, axis=0))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - (y - center)))
    grads = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(grads, [w]))
""",
            "near miss: the loss reads the assigned variable, but its value comes from the data, not from `w`",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 1)))
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    g = tape.gradient(loss, w)
    w.assign_sub(0.1 * g)
""",
            "near miss: manual SGD, the update is after the tape",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 2)))
h = tf.Variable(tf.zeros((4, 2)))
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        h.assign(tf.matmul(x, w))
        loss = tf.reduce_mean(tf.square(h - y))
    grads = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(grads, [w]))
""",
            line=9,
            message_contains="`h.assign(...)` stores a value computed from `w` inside the tape, and the loss reads it back (line 10)",
        ),
        Invalid(
            """
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu")])
head = tf.keras.Sequential([tf.keras.layers.Dense(1)])
features = tf.Variable(tf.zeros((32, 8)), trainable=False)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        features.assign(encoder(x, training=True))
        loss = tf.reduce_mean(tf.square(head(features, training=True) - y))
    variables = encoder.trainable_variables + head.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss
""",
            line=12,
            message_contains="computed from the weights of `encoder`",
        ),
        Invalid(
            """
import tensorflow as tf

class Accumulator:
    def __init__(self):
        self.cell = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh")])
        self.total = tf.Variable(tf.zeros((16, 4)), trainable=False)
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def update(self, x, y):
        with tf.GradientTape() as tape:
            summed = self.total.assign_add(self.cell(x))
            loss = tf.reduce_mean(tf.square(summed - y))
        grads = tape.gradient(loss, self.cell.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.cell.trainable_variables))
        return loss
""",
            line=12,
            message_contains="`self.total.assign_add(...)` stores a value computed from the weights of `self.cell` inside the tape, and the loss reads it back (line 13)",
        ),
    ]
