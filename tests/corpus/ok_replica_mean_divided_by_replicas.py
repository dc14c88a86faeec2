# expect: none
"""The distributed regression step keeps the per-replica `tf.reduce_mean` but divides it by
`strategy.num_replicas_in_sync`, which equals dividing the replica's sum by the global batch when the
replicas get equal shares (the reduction discussed in tensorflow/tensorflow#28956).

Observed on TF 2.21 (CPU, MirroredStrategy over 2 logical CPU devices): the first distributed update is
1.00 times the single-device SGD step on the whole global batch."""
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

GLOBAL_BATCH_SIZE = 64
rng = np.random.default_rng(0)
x = rng.normal(size=(GLOBAL_BATCH_SIZE, 8)).astype("float32")
y = (x @ rng.normal(size=(8, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH_SIZE)
dist_dataset = strategy.experimental_distribute_dataset(dataset)

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    optimizer = tf.keras.optimizers.SGD(0.1)


def train_step(inputs):
    features, labels = inputs
    with tf.GradientTape() as tape:
        predictions = model(features, training=True)
        loss = tf.reduce_mean(tf.square(labels - predictions)) / strategy.num_replicas_in_sync
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@tf.function
def distributed_train_step(inputs):
    per_replica_losses = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica_losses, axis=None)


# What one SGD step on the whole global batch does, on one device.
ref_kernel = tf.Variable(tf.zeros((8, 1)))
with tf.GradientTape() as ref_tape:
    ref_loss = tf.reduce_mean(tf.square(y - x @ ref_kernel))
expected_step = 0.1 * tf.norm(ref_tape.gradient(ref_loss, ref_kernel))

for batch in dist_dataset:
    distributed_train_step(batch)
actual_step = tf.norm(model.layers[0].kernel)
print("update / single-device update:", float(actual_step / expected_step))
