# expect: TL701
"""An image classifier's distributed step in the style of the TF tutorials, but with a loss helper that
returns `tf.reduce_mean` of the per-example cross-entropy (plus an L2 term) instead of
`tf.nn.compute_average_loss`; the replica function is defined inside the `tf.function` (see
tensorflow/tensorflow#45923 and the "Define the loss function" section of the custom-training tutorial).

Observed on TF 2.21 (CPU, MirroredStrategy over 2 logical CPU devices): the first update of the output
kernel is 2.00 times the one the same SGD step on the whole global batch makes on one device."""
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

GLOBAL_BATCH_SIZE = 64
rng = np.random.default_rng(3)
images = rng.normal(size=(GLOBAL_BATCH_SIZE, 10)).astype("float32")
labels = rng.integers(0, 4, size=(GLOBAL_BATCH_SIZE,)).astype("int64")
dist_dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((images, labels)).batch(GLOBAL_BATCH_SIZE))

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((10,)), tf.keras.layers.Dense(4, kernel_initializer="zeros")])
    optimizer = tf.keras.optimizers.SGD(0.5)


def compute_loss(labels, logits):
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.reduce_mean(per_example)


@tf.function
def train_step(iterator):
    def step_fn(inputs):
        batch_images, batch_labels = inputs
        with tf.GradientTape() as tape:
            logits = model(batch_images, training=True)
            loss = compute_loss(batch_labels, logits) + 1e-4 * tf.add_n(
                [tf.nn.l2_loss(v) for v in model.trainable_variables])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    per_replica = strategy.run(step_fn, args=(next(iterator),))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


# The single-device step on the whole batch, from the same zero weights.
kernel = tf.Variable(tf.zeros((10, 4)))
with tf.GradientTape() as tape:
    ref = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=images @ kernel))
reference = 0.5 * tf.norm(tape.gradient(ref, kernel))

train_step(iter(dist_dataset))
print("update / single-device update:", float(tf.norm(model.layers[0].kernel) / reference))
