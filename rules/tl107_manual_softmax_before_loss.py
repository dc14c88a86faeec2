from __future__ import annotations

import libcst as cst

from tapelint.analysis.gradients import under_tape
from tapelint.analysis.keras import Output
from tapelint.analysis.losses import fed_losses
from tapelint.analysis.names import dotted
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl107_execution import runs_traced

# Raw TensorFlow activations: unlike Keras' own softmax/sigmoid (layers, `keras.activations`,
# `keras.ops` on the TF backend), they do not remember their logits for the loss to recover.
RAW_ACTIVATIONS = frozenset(
    {
        "tensorflow.nn.softmax", "tensorflow.math.softmax", "tensorflow.nn.sigmoid", "tensorflow.math.sigmoid",
        "tensorflow.sigmoid", "keras.backend.softmax", "keras.backend.sigmoid",
    }
)


class ManualSoftmaxBeforeLoss(Rule):
    """
    ## What it does
    Reports a probability cross-entropy (`CategoricalCrossentropy()`, `SparseCategoricalCrossentropy()`,
    `BinaryCrossentropy()` and their functions, `from_logits=False`) fed the output of a raw
    `tf.nn.softmax` / `tf.math.sigmoid` in code that runs eagerly: a custom loop (or a helper it calls)
    that is not inside a `tf.function`. The prediction is followed through assignments, helpers and a
    subclassed model's `call`.

    ## Why is this bad?
    A probability cross-entropy clips its input to [1e-7, 1 - 1e-7] before the log, and a clip passes
    no gradient. Once the softmax saturates (one large Adam step is enough) every gradient is exactly
    zero and the loss is stuck: "gradients are zero except the first iteration". Keras avoids the clip
    when it can recover the logits: its own softmax/sigmoid layers and `keras.activations` remember
    them, and inside a `tf.function` (which is what `fit` runs) it reads them off the `Softmax` op. A raw
    `tf.nn.softmax` in an eager loop gets neither: measured on TF 2.21, |g| about 1.7e-6 against 1.5
    with logits. That is why `fit` learns and the hand-written loop does not.

    ## Example
    ```python
    loss_fn = tf.keras.losses.CategoricalCrossentropy()
    with tf.GradientTape() as tape:
        probs = tf.nn.softmax(model(x, training=True))
        loss = loss_fn(y, probs)
    ```

    ## Use instead
    ```python
    loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    ```
    Keep the softmax for predictions and metrics, outside the loss.

    ## Known problems
    A step that is wrapped in `tf.function` somewhere this module cannot see (another module, a
    `strategy.run` of a traced function) is still reported. A `tf.nn.softmax` fed to a loss with
    `from_logits=True` is TL101's finding, and logits fed to a probability loss are TL102's.

    ## Options
    None.

    ## Fix safety
    No fix: the loss and the activation must change together, and the activation is often shared with
    the metrics.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/34221 (eager and graph take different paths in the loss)
    - https://github.com/tensorflow/tensorflow/issues/32869 (the softmax's logits are not used)
    - https://github.com/tensorflow/tensorflow/issues/35585 (maintainer: drop the softmax, use from_logits=True)
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    """

    code = "TL107"
    name = "manual-softmax-before-loss"
    message = "`{activation}` output is fed to `{loss}` in an eager loop: once it saturates the clipped loss gives exactly zero gradient; pass the logits with `from_logits=True`"
    severity = Severity.WARNING
    triggers = (("softmax", "GradientTape"), ("sigmoid", "GradientTape"))
    probe = "Confirmed when the step's gradients are exactly zero while the predictions are saturated at 1.0 (TL811)."

    def check(self) -> None:
        facts = self.facts
        if not facts.uses_gradient_tape:
            return
        seen: set[int] = set()
        for fed in fed_losses(facts):
            if fed.via_compile or fed.spec.from_logits is not False or fed.output.kind is not Output.PROBABILITIES:
                continue
            node = fed.output.node
            if not isinstance(node, cst.Call) or facts.resolve(node.func) not in RAW_ACTIVATIONS:
                continue
            if not under_tape(facts, fed.site, every_caller=False, levels=4) or runs_traced(facts, fed.site.scope):
                continue  # an evaluation outside any tape has no gradient to lose
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.report(node, activation=dotted(node.func) or "softmax", loss=fed.spec.written)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)

for x, y in tf.data.Dataset.from_tensor_slices((tf.zeros((8, 4)), tf.zeros((8, 2)))).batch(4):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    probs = tf.nn.softmax(logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: logits go to the loss, the softmax only to the predictions",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probs = tf.nn.softmax(model(x, training=True))
        loss = loss_fn(y, probs)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "inside tf.function Keras reads the logits off the Softmax op",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2, activation="softmax")])
loss_fn = tf.keras.losses.CategoricalCrossentropy()
with tf.GradientTape() as tape:
    loss = loss_fn(tf.zeros((4, 2)), model(tf.zeros((4, 3)), training=True))
""",
            "a Keras softmax layer keeps its logits for the loss",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

base = tf.keras.applications.VGG16(include_top=False, weights="imagenet")
base.trainable = False
pool = tf.keras.layers.GlobalAveragePooling2D()
hidden = tf.keras.layers.Dense(64, activation="relu")
head = tf.keras.layers.Dense(2)
loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)

def forward(images):
    return tf.nn.softmax(head(hidden(pool(base(images, training=False)))))

def train_epoch(dataset):
    for images, labels in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, forward(images))
        variables = hidden.trainable_variables + head.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
""",
            line=13, column=12,
            message_contains="`tf.nn.softmax` output is fed to `CategoricalCrossentropy`",
        ),
        Invalid(
            """
import tensorflow as tf

class Detector(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.features = tf.keras.layers.Dense(32, activation="relu")
        self.logit = tf.keras.layers.Dense(1)

    def call(self, x, training=False):
        return tf.math.sigmoid(self.logit(self.features(x)))

model = Detector()
bce = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam()
for step in range(100):
    x = tf.random.normal((32, 8))
    y = tf.cast(tf.reduce_sum(x, axis=1, keepdims=True) > 0, tf.float32)
    with tf.GradientTape() as tape:
        loss = bce(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="`tf.math.sigmoid`",
        ),
    ]
