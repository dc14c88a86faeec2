# expect: TL402
"""A warm-up schedule computed inside the traced step from the Python step counter that `enumerate`
gives (the pattern of https://github.com/microsoft/AirSim-Drone-Racing-VAE-Imitation/issues/10, a
Python `epoch` passed to a tf.function train step).

Observed on TF 2.21 (CPU): 30 steps trace `train_step` 30 times (`experimental_get_tracing_count()`),
TF prints "triggered tf.function retracing", and the loop takes 10.3 s against 1.3 s with
`tf.constant(step)` (ok_tffn_step_counter_tensor.py: 1 trace)."""
import time

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
x_train = rng.normal(size=(960, 16)).astype("float32")
y_train = (x_train @ rng.normal(size=(16, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = tf.keras.Sequential([tf.keras.Input(shape=(16,)), tf.keras.layers.Dense(64, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
WARMUP = 20


@tf.function
def train_step(x, y, step):
    warmup = tf.minimum(1.0, tf.cast(step + 1, tf.float32) / WARMUP)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip([g * warmup for g in grads], model.trainable_variables))
    return loss


start = time.perf_counter()
for step, (x, y) in enumerate(dataset):
    loss = train_step(x, y, step)
print(f"loss {float(loss):.3f}, traces {train_step.experimental_get_tracing_count()}, "
      f"{time.perf_counter() - start:.2f} s")
