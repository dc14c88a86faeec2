from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.analysis.gradients import gradient_calls
from tapelint.analysis.optimizer_families import GradientScaling, optimizers_applying
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl701_distribution import Scaling, loss_scaling, per_replica


class PerReplicaLossAveraged(Rule):
    """
    ## What it does
    Reports a loss that a replica function (the function given to `strategy.run(fn, args=...)` or
    `experimental_run_v2`, and the local functions it calls) reduces with `tf.reduce_mean` (or
    `keras.ops.mean`) over its own share of the batch and then differentiates with `tape.gradient`,
    when the strategy is a `tf.distribute.MirroredStrategy`, `MultiWorkerMirroredStrategy`,
    `TPUStrategy` or `CentralStorageStrategy`, and when the optimizer that applies those gradients
    takes steps in proportion to them. The strategy, the replica function and the optimizer (the one
    whose `apply_gradients` or `apply` receives that tape's gradients, through a `LossScaleOptimizer`
    if there is one) are resolved by the value model; the loss is followed through its assignments and
    local helpers; the optimizer's family comes from `tapelint.analysis.optimizer_families`.

    ## Why is this bad?
    Under a multi-replica strategy `apply_gradients` sums the gradients of all replicas. Each replica's
    loss must therefore be its share of the global mean, `sum(per_example) / global_batch_size`, which is
    what `tf.nn.compute_average_loss(per_example_loss, global_batch_size=...)` returns. A per-replica
    mean is N times that, so with N replicas the summed gradient is N times too large. Under plain SGD
    (with or without momentum) every update is then N times too large: the effective learning rate
    grows with the number of devices, and a run that was tuned on one GPU diverges on eight. Nothing
    fails. Measured on TF 2.21 with a `MirroredStrategy` over 2 logical CPU devices, one SGD step (lr
    0.1) from zero weights: `tf.reduce_mean` moves the kernel by 1.954 in total,
    `tf.nn.compute_average_loss` by 0.977, exactly half; `keras.ops.mean` behaves like `tf.reduce_mean`
    (1.954). A Keras 3.15 loss object with the default reduction gives 0.977: Keras 3 divides its result
    by `num_replicas_in_sync` itself (`keras/src/losses/loss.py`, `scale_loss_for_distribution`), where
    tf_keras's `Reduction.AUTO` raised an error inside a strategy. A mean divided by
    `strategy.num_replicas_in_sync` gives 0.977 too.

    What the optimizer does with an N times larger gradient decides whether this matters, so the
    message names the optimizer's family:
    - plain SGD: each update is N times too large (reported, high confidence);
    - Adagrad and Ftrl divide by `sqrt(0.1 + sum of squared gradients)`, RMSprop and Adadelta by
      `sqrt(mean squared gradient + 1e-7)`: the step grows with N, up to N times, while the squared
      gradients are small next to that constant (for Adagrad, typically for thousands of steps; for
      RMSprop, on weights whose RMS gradient is below about 3e-4). Reported with inferred confidence.
    - Adam, AdamW, Adamax, Nadam (epsilon outside the square root), Lion (the sign of the gradient),
      Lamb, Adafactor and Muon divide the gradient's scale away: the step does not change. Not
      reported. Gradient clipping by a fixed norm does not make it matter either way: Keras 3 clips
      (`clipnorm`, `global_clipnorm`) inside `apply()` before the replicas' gradients are summed, and a
      `tf.clip_by_global_norm` in the replica function also sees one replica's gradient, which a
      per-replica mean keeps at the scale the threshold was tuned for on one device (tf_keras clipped
      after the sum; the effect depends on the version, so no claim is made). The loss a replica
      returns is the local mean either way.
    - an optimizer the value model cannot pin down (passed in from another module, an apply call on
      something it cannot read, `optimizer.minimize`): reported with inferred confidence and a message
      that says the claim holds for SGD. The fix is right whatever the optimizer, and under SGD the
      damage is large; a user who filters on `high` confidence does not see these.

    ## Example
    ```python
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)

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
    `train_step` overrides run by `fit`. Under an adaptive optimizer a per-replica mean still departs
    from the documented recipe; it is left alone because the updates do not change.

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
    - https://github.com/keras-team/keras/blob/master/keras/src/optimizers/base_optimizer.py (`apply`
      clips before the backend's update step, where TensorFlow sums the replicas' gradients)
    """

    code = "TL701"
    name = "per-replica-loss-averaged"
    message = ("`{loss}` is a per-replica mean, but `{strategy}` sums the gradients of its replicas: {effect}; "
               "use `tf.nn.compute_average_loss(per_example_loss, global_batch_size=...)`")
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
            appliers = optimizers_applying(facts, grad.site.node)
            if appliers is None:
                self.report(judged.mean, loss=render(judged.mean), strategy=name, confidence=Confidence.INFERRED,
                            effect=("if the optimizer that applies them is plain SGD, each update is as many "
                                    "times too large as there are replicas (tapelint could not tell which "
                                    "optimizer it is, and Adam-like ones divide that scale away)"))
                continue
            proportional = [a for a in appliers if a.info.scaling is GradientScaling.PROPORTIONAL]
            partly = [a for a in appliers if a.info.scaling is GradientScaling.PARTLY]
            if proportional:
                self.report(judged.mean, loss=render(judged.mean), strategy=name,
                            effect=(f"under `{proportional[0].creation.cls}` each update is as many times too "
                                    "large as there are replicas"))
            elif partly:
                cls, offset = partly[0].creation.cls, partly[0].info.offset
                self.report(judged.mean, loss=render(judged.mean), strategy=name, confidence=Confidence.INFERRED,
                            effect=(f"under `{cls}` the updates grow with the number of replicas, up to as many "
                                    f"times too large, while the squared gradients are small next to {offset}"))
            # Adam and the other scale-invariant optimizers: the step does not change, nothing to report.

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
        Valid(
            """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3, global_clipnorm=1.0)

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

@tf.function
def distributed_step(images, labels):
    return strategy.run(train_step, args=(images, labels))
""",
            "near miss: Adam divides the gradient's scale away, so the summed mean does not change its step",
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
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)

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
            self.optimizer = keras.optimizers.SGD(learning_rate=0.01)

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
            Invalid(
            """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    critic = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="tanh"), tf.keras.layers.Dense(1)])
    critic_optimizer = tf.keras.optimizers.RMSprop(learning_rate=7e-4)

def critic_step(states, returns):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(returns - critic(states, training=True)))
    grads = tape.gradient(loss, critic.trainable_variables)
    critic_optimizer.apply_gradients(zip(grads, critic.trainable_variables))

strategy.run(critic_step, args=(states, returns))
""",
            line=11,
            message_contains="under `RMSprop` the updates grow with the number of replicas, up to as many times",
        ),
        Invalid(
            """
import tensorflow as tf

from training_setup import make_optimizer

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = make_optimizer()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

strategy.run(train_step, args=(x, y))
""",
            message_contains="if the optimizer that applies them is plain SGD, each update is as many times",
        ),
    ]
