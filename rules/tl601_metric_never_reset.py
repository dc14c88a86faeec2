from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.analysis.epochs import metrics_never_reset
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class MetricNeverReset(Rule):
    """
    ## What it does
    Reports a stateful Keras metric (`keras.metrics.Mean()`, `SparseCategoricalAccuracy()`, ...) that is
    updated (`update_state(...)` or called) inside an epoch loop, read with `result()` inside that loop,
    and never reset there (`reset_state()`, `reset_states()` on tf_keras, `model.reset_metrics()`, or a new
    metric object made in the loop). An epoch loop is a loop that runs another loop of training steps
    (a `GradientTape` block, an apply call, or `train_on_batch`, directly or in the functions it calls).

    ## Why is this bad?
    A metric accumulates until it is reset: `result()` is the mean over everything it has seen since it
    was created. Without a reset at each epoch, the number printed for epoch 5 is the average over
    epochs 1 to 5, so the curve lags, flattens, and hides both progress and overfitting. `fit()` resets
    its metrics at every epoch; a hand-written loop has to do it itself. Measured on TF 2.21
    (`tests/corpus/metricreset_mnist_style_loop.py`): the printed training accuracy of epochs 1-5 is
    0.684, 0.786, 0.841, 0.876, 0.900, while the same program with a reset at each epoch prints 0.729,
    0.898, 0.965, 0.982, 0.996 (loss 0.255 at epoch 5 instead of 0.070).

    ## Example
    ```python
    train_loss = tf.keras.metrics.Mean()
    for epoch in range(epochs):
        for x, y in train_ds:
            train_loss(train_step(x, y))
        print(epoch, train_loss.result())
    ```

    ## Use instead
    ```python
    train_loss = tf.keras.metrics.Mean()
    for epoch in range(epochs):
        train_loss.reset_state()
        for x, y in train_ds:
            train_loss(train_step(x, y))
        print(epoch, train_loss.result())
    ```

    ## Known problems
    Only metrics created in the file (from `keras.metrics`) are judged, and only when an update and a
    `result()` both run within the epoch loop. A reset through a receiver the value model cannot read
    (`for m in self.all_metrics: m.reset_state()`) counts as a reset. Metrics owned by a model trained
    with `fit()` are reset by Keras and are never in an epoch loop of the file. A metric that is meant
    to accumulate over the whole run but is printed every epoch is reported.

    ## Options
    None.

    ## Fix safety
    No fix: whether the reset belongs at the start of the epoch or after the epoch's numbers are logged,
    and under which name the metric is reachable there, is the author's choice.

    ## References
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch (resets the metrics
      at the end of each epoch)
    - https://github.com/lucasjinreal/tfboys/pull/2 ("reset the states of tf.Metrics object at the end
      of each epoch")
    - https://github.com/keras-team/keras-io/pull/155 (the reset at the end of an epoch in "intro to
      Keras for researchers")
    - https://github.com/JetBrains-Research/code2seq/pull/112 ("Without resetting, metrics accumulate
      state over multiple epochs")
    """

    code = "TL601"
    name = "metric-never-reset"
    message = ("`{metric}` is updated in the epoch loop at {loop} and never reset there, so `{read}` reports the "
               "running value since the first epoch: call `reset_state()` at each epoch")
    severity = Severity.WARNING
    claims_absence = True
    triggers = (("metrics", "result"),)

    def check(self) -> None:
        for finding in metrics_never_reset(self.facts):
            read = finding.read.node
            self.report(finding.update.node, metric=render(finding.update.node.func).removesuffix(".update_state"),
                        loop=self.location(finding.loop.node) or "the loop", read=render(read))

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_acc.update_state(y, logits)
    print(epoch, float(train_acc.result()))
    train_acc.reset_state()
""",
            "near miss: reset at the end of each epoch",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
for epoch in range(10):
    train_loss = tf.keras.metrics.Mean()
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_loss(loss)
    print(epoch, float(train_loss.result()))
""",
            "near miss: a new metric each epoch",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
test_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
for x, y in test_ds:
    test_acc.update_state(y, model(x, training=False))
print("test accuracy", float(test_acc.result()))
""",
            "near miss: a metric updated once after training and read at the end",
        ),
        Valid(
            """
import tensorflow as tf

class Trainer(tf.keras.Model):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss_tracker = tf.keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
trainer.compile(optimizer="adam")
trainer.fit(dataset, epochs=5)
""",
            "near miss: a model's own metrics under fit(), which resets them every epoch",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_acc.update_state(y, logits)
    print(epoch, float(train_acc.result()))
""",
            line=15,
            message_contains="`train_acc` is updated in the epoch loop at line 8",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_loss = tf.keras.metrics.Mean(name="train_loss")

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_object(labels, model(images, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)

for epoch in range(5):
    for images, labels in train_ds:
        train_step(images, labels)
    print(f"Epoch {epoch + 1}, Loss: {train_loss.result()}")
""",
            line=15,
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
val_acc = tf.keras.metrics.SparseCategoricalAccuracy()
for epoch in range(10):
    for x, y in train_ds:
        model.train_on_batch(x, y)
    for x, y in val_ds:
        val_acc.update_state(y, model(x, training=False))
    print("val accuracy", float(val_acc.result()))
""",
            line=11,
        ),
    ]
