from __future__ import annotations

from tapelint.analysis.distribution import Scaling, loss_scaling, per_replica
from tapelint.analysis.gradients import gradient_calls
from tapelint.analysis.dataflow import render
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class PerReplicaLossAveraged(Rule):
    """
    ## What it does
    Reports a loss that a replica function (the function given to `strategy.run(fn, args=...)` or
    `experimental_run_v2`, and the local functions it calls) reduces with `tf.reduce_mean` (or
    `keras.ops.mean`) over its own share of the batch and then differentiates with `tape.gradient`,
    when the strategy is a `tf.distribute.MirroredStrategy`, `MultiWorkerMirroredStrategy`,
    `TPUStrategy` or `CentralStorageStrategy`. The strategy and the replica function are resolved by
    the value model; the loss is followed through its assignments and local helpers.

    ## Why is this bad?
    Under a multi-replica strategy `apply_gradients` sums the gradients of all replicas. Each replica's
    loss must therefore be its share of the global mean, `sum(per_example) / global_batch_size`, which is
    what `tf.nn.compute_average_loss(per_example_loss, global_batch_size=...)` returns. A per-replica
    mean is N times that, so with N replicas every update is N times too large: the effective learning
    rate grows with the number of devices, and a run that was tuned on one GPU diverges on eight.
    Nothing fails. Measured on TF 2.21 with a `MirroredStrategy` over 2 logical CPU devices, one SGD
    step (lr 0.1) from zero weights: `tf.reduce_mean` moves the kernel by 1.954 in total,
    `tf.nn.compute_average_loss` by 0.977, exactly half; `keras.ops.mean` behaves like `tf.reduce_mean`
    (1.954). A Keras 3.15 loss object with the default reduction gives 0.977: Keras 3 divides its result
    by `num_replicas_in_sync` itself (`keras/src/losses/loss.py`, `scale_loss_for_distribution`), where
    tf_keras's `Reduction.AUTO` raised an error inside a strategy. A mean divided by
    `strategy.num_replicas_in_sync` gives 0.977 too.

    ## Example
    ```python
    strategy = tf.distribute.MirroredStrategy()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    strategy.run(train_step, args=(x, y))
    ```

    ## Use instead
    ```python
    def train_step(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_mean(tf.square(model(x, training=True) - y), axis=-1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH_SIZE)
        ...
    ```
    or a Keras 3 loss object (`keras.losses.MeanSquaredError()`), which scales by the replicas itself.

    ## Known problems
    A `MirroredStrategy()` with no device list is reported even when the machine has one device (then
    the strategy has one replica and the update is right); a `OneDeviceStrategy`, a `MirroredStrategy`
    over a literal one-device list and `tf.distribute.get_strategy()` are not. A loss multiplied by a
    non-constant factor, computed by a helper we cannot see, or a mean on only some branches is not
    reported. `optimizer.minimize(loss)` inside the replica function is not checked, nor Keras
    `train_step` overrides run by `fit`.

    ## Options
    None.

    ## Fix safety
    No fix: `compute_average_loss` needs the per-example losses and the global batch size, which only
    the author knows.

    ## References
    - https://www.tensorflow.org/tutorials/distribute/custom_training (define the loss function:
      `tf.reduce_mean` is not recommended; divide by the global batch size)
    - https://github.com/tensorflow/tensorflow/issues/45923 (losses of `fit` and of the custom loop
      differ under `MultiWorkerMirroredStrategy`)
    - https://github.com/tensorflow/tensorflow/issues/58938 (`MultiWorkerMirroredStrategy` with a custom
      step: the answer is `tf.nn.compute_average_loss(..., global_batch_size=...)`)
    - https://github.com/tensorflow/tensorflow/issues/28956 (how per-replica losses must be reduced)
    """

    code = "TL701"
    name = "per-replica-loss-averaged"
    message = ("`{loss}` is a per-replica mean, but `{strategy}` sums the gradients of its replicas: each update "
               "is as many times too large as there are replicas; use `tf.nn.compute_average_loss(per_example_loss, "
               "global_batch_size=...)`")
    severity = Severity.WARNING
    triggers = (("distribute", "GradientTape"), ("Strategy", "GradientTape"))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for grad in gradient_calls(facts):
            run = per_replica(facts, grad.site.scope)
            if run is None or not run.multi_replica:
                continue
            judged = loss_scaling(facts, grad.target, grad.site.scope, grad.site.order)
            if judged.scaling is not Scaling.MEAN or judged.mean is None:
                continue
            strategy = run.strategy
            name = strategy.cls.rsplit(".", 1)[-1] if strategy is not None else "the strategy"
            self.report(judged.mean, loss=render(judged.mean), strategy=name)

    VALID = [
        Valid(
            """
import tensorflow as tf

GLOBAL_BATCH_SIZE = 64
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        per_example = tf.reduce_mean(tf.square(model(x, training=True) - y), axis=-1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH_SIZE)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

@tf.function
def distributed_step(x, y):
    losses = strategy.run(train_step, args=(x, y))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
""",
            "compute_average_loss divides by the global batch",
        ),
        Valid(
            """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y)) / strategy.num_replicas_in_sync
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

strategy.run(train_step, args=(x, y))
""",
            "near miss: the per-replica mean is divided by the number of replicas",
        ),
        Valid(
            """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return tf.reduce_mean(loss)

strategy.run(train_step, args=(x, y))
""",
            "near miss: a Keras 3 loss object scales by the replicas; the mean is only returned",
        ),
        Valid(
            """
import tensorflow as tf

strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

strategy.run(train_step, args=(x, y))
""",
            "near miss: one replica, nothing is summed",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

for x, y in batches:
    train_step(x, y)
""",
            "no strategy: a mean is the usual loss",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

@tf.function
def distributed_step(x, y):
    losses = strategy.run(train_step, args=(x, y))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)
""",
            line=11,
            column=16,
            message_contains="`MirroredStrategy` sums the gradients",
        ),
        Invalid(
            """
import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
strategy = tf.distribute.TPUStrategy(resolver)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam()

def compute_loss(labels, logits):
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.reduce_mean(per_example)

@tf.function
def train_step(iterator):
    def step_fn(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = compute_loss(labels, logits) + 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in model.trainable_variables])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    strategy.run(step_fn, args=(next(iterator),))
""",
            line=12,
            message_contains="`TPUStrategy`",
        ),
        Invalid(
            """
import keras
import tensorflow as tf

class Trainer:
    def __init__(self, strategy):
        self.strategy = strategy
        with strategy.scope():
            self.model = keras.Sequential([keras.layers.Dense(1)])
            self.optimizer = keras.optimizers.Adam()

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(self, x, y):
        return self.strategy.run(self.train_step, args=(x, y))

trainer = Trainer(tf.distribute.MultiWorkerMirroredStrategy())
""",
            line=14,
        ),
    ]
