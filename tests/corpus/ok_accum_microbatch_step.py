# expect: none
"""Gradient accumulation over micro-batches inside one training step: the sums are a list created
at the start of the step, so every application starts from zero (the memory-saving pattern asked
about in tensorflow/tensorflow#55478 and https://stackoverflow.com/questions/46772685).

Observed on TF 2.21 (CPU): it trains; the loss falls 0.11, 0.033, 0.028, ... 0.025 over ten epochs
and the applied mean gradient's norm from 0.89 to 0.19."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(3)
rng = np.random.default_rng(3)
x = rng.normal(size=(512, 6)).astype("float32")
y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2]).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)

model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(32, activation="tanh"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.05)
micro_batches = 4


@tf.function
def train_step(xb, yb):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    total = 0.0
    for xm, ym in zip(tf.split(xb, micro_batches), tf.split(yb, micro_batches)):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xm, training=True) - ym))
        grads = tape.gradient(loss, model.trainable_variables)
        sums = [s + g / micro_batches for s, g in zip(sums, grads)]
        total += loss / micro_batches
    optimizer.apply_gradients(zip(sums, model.trainable_variables))
    return total, tf.linalg.global_norm(sums)


for epoch in range(10):
    for xb, yb in dataset:
        loss, norm = train_step(xb, yb)
    print(epoch, "loss", round(float(loss), 3), "applied norm", round(float(norm), 3))
