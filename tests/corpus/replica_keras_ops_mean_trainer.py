# expect: TL701
"""A Keras 3 trainer class whose replica step averages the squared error with `keras.ops.mean` over the
replica's own batch, run by `self.strategy.run` (the loss scaling asked about in
tensorflow/tensorflow#58938: the answer there is `tf.nn.compute_average_loss` with the global batch size).

Observed on TF 2.21 / Keras 3.15 (CPU, MirroredStrategy over 2 logical CPU devices): after one step the
kernel moved 2.00 times as far as one SGD step on the whole global batch on one device."""
import keras
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

GLOBAL_BATCH_SIZE = 32


class Trainer:
    def __init__(self, strategy):
        self.strategy = strategy
        with strategy.scope():
            self.model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, kernel_initializer="zeros")])
            self.optimizer = keras.optimizers.SGD(learning_rate=0.05)

    def replica_step(self, features, targets):
        with tf.GradientTape() as tape:
            predictions = self.model(features, training=True)
            loss = keras.ops.mean(keras.ops.square(targets - predictions))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    @tf.function
    def step(self, features, targets):
        losses = self.strategy.run(self.replica_step, args=(features, targets))
        return self.strategy.reduce("mean", losses, axis=None)


rng = np.random.default_rng(1)
x = rng.normal(size=(GLOBAL_BATCH_SIZE, 6)).astype("float32")
y = (x.sum(axis=1, keepdims=True) + 0.1).astype("float32")
trainer = Trainer(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
batches = trainer.strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH_SIZE))
for features, targets in batches:
    trainer.step(features, targets)

reference = 0.05 * np.linalg.norm(2.0 * x.T @ y / GLOBAL_BATCH_SIZE)  # one SGD step from zero, on one device
moved = np.linalg.norm(trainer.model.layers[0].kernel.numpy())
print("update / single-device update:", moved / reference)
