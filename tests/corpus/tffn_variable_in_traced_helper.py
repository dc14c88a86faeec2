# expect: TL403
"""A regression loop whose traced step calls a helper that creates its temperature as a tf.Variable on
every call (written after "tf.function-decorated function tried to create variables on non-first call",
https://github.com/tensorflow/tensorflow/issues/27120).

Observed on TF 2.21 (CPU): the first `train_step` call raises `ValueError: tf.function only supports
singleton tf.Variables created on the first call`, pointing at the helper's `tf.Variable(...)` line."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.normal(size=(128, 8)).astype("float32")
targets = (features @ rng.normal(size=(8, 1))).astype("float32")

model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(16, activation="tanh"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.05)


def scaled_error(y, prediction):
    temperature = tf.Variable(2.0, trainable=False)
    return tf.reduce_mean(tf.square(y - prediction)) / temperature


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = scaled_error(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(20):
    loss = train_step(features, targets)
print("final loss", float(loss))
