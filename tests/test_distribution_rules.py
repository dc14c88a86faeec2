"""TL701 on realistic distributed loops: a per-replica mean is reported, scaled losses are not."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source

LOOP = """
import tensorflow as tf

GLOBAL_BATCH_SIZE = 128
strategy = STRATEGY
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = OPTIMIZER
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

def compute_loss(labels, logits):
    per_example_loss = loss_object(labels, logits)
    return REDUCE

def train_step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = compute_loss(labels, logits)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss

@tf.function
def distributed_train_step(inputs):
    per_replica_losses = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)
"""


def _codes(strategy: str, reduce: str, optimizer: str = "tf.keras.optimizers.SGD(0.1)") -> list[tuple[str, int]]:
    source = LOOP.replace("STRATEGY", strategy).replace("REDUCE", reduce).replace("OPTIMIZER", optimizer)
    return [(d.code, d.line) for d in lint_source(textwrap.dedent(source), "t.py", Config(), force=True)
            if d.code == "TL701"]


def test_a_helper_returning_a_per_replica_mean_under_mirrored_strategy_is_reported():
    assert _codes("tf.distribute.MirroredStrategy()", "tf.reduce_mean(per_example_loss)") == [("TL701", 13)]


def test_compute_average_loss_with_the_global_batch_is_silent():
    assert _codes("tf.distribute.MirroredStrategy()",
                  "tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH_SIZE)") == []


def test_reduce_sum_over_the_global_batch_is_silent():
    assert _codes("tf.distribute.MirroredStrategy()",
                  "tf.reduce_sum(per_example_loss) * (1.0 / GLOBAL_BATCH_SIZE)") == []


def test_a_one_device_strategy_is_silent():
    assert _codes('tf.distribute.OneDeviceStrategy("/cpu:0")', "tf.reduce_mean(per_example_loss)") == []


def test_a_tpu_strategy_is_reported():
    assert _codes("tf.distribute.TPUStrategy(resolver)", "tf.reduce_mean(per_example_loss)") == [("TL701", 13)]


def test_the_same_per_replica_mean_under_adam_is_silent():
    # Adam divides the gradient's scale away: the summed mean does not change its step.
    assert _codes("tf.distribute.MirroredStrategy()", "tf.reduce_mean(per_example_loss)",
                  "tf.keras.optimizers.Adam()") == []
