from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl602_evaluation import training_mode_evaluations


class EvaluationInTrainingMode(Rule):
    """
    ## What it does
    Reports a call of a model that contains Dropout or BatchNormalization with `training=True` (or
    through a subclass whose `call(self, x, training=True)` defaults to it) in evaluation code.
    Evaluation code is recognised by structure, never by names: the call runs under no
    `GradientTape` (nor do its callers), its function neither opens a tape nor applies gradients, it is
    not inside a loop of training steps, and it is a Keras `test_step` / `predict_step` override, or its
    output reaches a metric update, or it runs in the epoch loop outside the training batches (a
    validation pass whose result is used).

    ## Why is this bad?
    In training mode Dropout drops units at random and BatchNormalization normalises each batch with
    that batch's own mean and variance (and moves its running statistics towards the evaluation data).
    Validation and test numbers are then noisy, depend on the batch size, and understate the model;
    early stopping and checkpoint selection decide on the wrong numbers. Measured on TF 2.21
    (`tests/corpus/evalmode_validation_loop_training_true.py`, BatchNorm and Dropout(0.5), validation
    batches of 8): the validation accuracy reported after five epochs is 0.775-0.810 over two runs while
    the same model called with `training=False` scores 0.915-0.920; `evaluate()` through a `test_step`
    that calls `self(x, training=True)` reports 0.713-0.780 against 0.807-0.810
    (`evalmode_test_step_override.py`).

    ## Example
    ```python
    for x, y in val_ds:
        logits = model(x, training=True)
        val_acc.update_state(y, logits)
    ```

    ## Use instead
    ```python
    for x, y in val_ds:
        logits = model(x, training=False)
        val_acc.update_state(y, logits)
    ```

    ## Known problems
    Only models whose layers the file shows (Sequential lists, functional graphs, subclasses,
    `keras.applications` families with BatchNorm) are judged. Several stochastic passes on the same
    input (Monte-Carlo dropout: a comprehension, or `for _ in range(T)`) are deliberate and not
    reported. A prediction made in training mode whose output reaches no metric and that runs outside
    any epoch loop (a standalone `predict()` helper) is not reported: it cannot be told from a
    training step called from another module. Calls inside the tape without `training=` are TL302's.

    ## Options
    None.

    ## Fix safety
    No fix: `training=False` is almost always what is meant, but a model deliberately evaluated with
    batch statistics (test-time BatchNorm adaptation) would change meaning.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/33771 ("Val loss behaves strange while using custom
      training loop": "Setting training=False worked for getting validation results that made sense")
    - https://github.com/tensorflow/tensorflow/issues/46414 (BatchNormalization during
      validation/evaluation gives different numbers from training)
    - https://keras.io/getting_started/faq/ (the `training` argument in `call()`)
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch (the validation loop
      calls the model with `training=False`)
    """

    code = "TL602"
    name = "evaluation-in-training-mode"
    message = ("`{call}` runs {how} in evaluation code ({why}), so its {layers} behave as in training: "
               "evaluate with `training=False`")
    severity = Severity.WARNING
    # A finding needs `training=True` (or a call that defaults to it, only reported alongside one) and one of
    # the evaluation contexts rules/_tl602_evaluation.py knows: a Keras `test_step`/`predict_step`, a metric update
    # (`update_state`, or a call of a `keras.metrics` object), or an epoch loop around training steps (tape
    # blocks and `apply_gradients`/`minimize`/`train_on_batch` calls).
    triggers = tuple(("training=True", context) for context in (
        "test_step", "predict_step", "update_state", "etric", "GradientTape", "apply_gradients", "minimize",
        "train_on_batch"))

    def check(self) -> None:
        for finding in training_mode_evaluations(self.facts):
            how = "in training mode (its `call` defaults to `training=True`)" if finding.default else "with `training=True`"
            layers = " and ".join(f"`{c}`" if " " not in c else c for c in finding.layers)
            self.report(finding.site.node, call=render(finding.site.node), how=how, why=finding.why, layers=layers)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dropout(0.5),
                             tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
val_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    for x, y in val_ds:
        val_acc.update_state(y, model(x, training=False))
""",
            "near miss: training=True in the step, training=False in evaluation",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dropout(0.2),
                             tf.keras.layers.Dense(1)])

def predict_with_uncertainty(x, passes=50):
    samples = tf.stack([model(x, training=True) for _ in range(passes)])
    return tf.reduce_mean(samples, axis=0), tf.math.reduce_std(samples, axis=0)

mean, std = predict_with_uncertainty(x_test)
mae = tf.keras.metrics.MeanAbsoluteError()
mae.update_state(y_test, mean)
""",
            "near miss: Monte-Carlo dropout, several stochastic passes averaged on purpose",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
test_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for x, y in test_ds:
    test_acc.update_state(y, model(x, training=True))
print(test_acc.result())
""",
            "near miss: no Dropout or BatchNorm, so training=True changes nothing",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
train_acc = tf.keras.metrics.SparseCategoricalAccuracy()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_acc.update_state(y, logits)
""",
            "near miss: the training step itself",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dropout(0.5),
                             tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
val_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    for x, y in val_ds:
        val_acc.update_state(y, model(x, training=True))
""",
            line=16,
            message_contains="`model(x, training=True)` runs with `training=True` in evaluation code",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.norm = tf.keras.layers.BatchNormalization()
        self.out = tf.keras.layers.Dense(10)

    def call(self, x, training=True):
        return self.out(self.norm(self.hidden(x), training=training))

    def test_step(self, data):
        x, y = data
        logits = self(x)
        self.compiled_metrics.update_state(y, logits)
        return {m.name: m.result() for m in self.metrics}

model = Classifier()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(train_ds, validation_data=val_ds, epochs=3)
""",
            line=16,
            message_contains="its `call` defaults to `training=True`",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for epoch in range(20):
    for x, y in train_ds:
        train_step(x, y)
    val_pred = model(x_val, training=True)
    print(epoch, float(tf.reduce_mean(tf.square(val_pred - y_val))))
""",
            line=19,
        ),
    ]
