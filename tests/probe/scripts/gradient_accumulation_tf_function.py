# expect: none
"""Gradient accumulation with the step in a `tf.function` (run as a graph under the probe): the micro-step adds
its gradients into non-trainable accumulator variables, and a second function applies them every 4th micro-step.
After "How to accumulate gradients in TensorFlow 2" (Stack Overflow 59893850). Expected: nothing at --steps 3 and
--steps 10."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

ACCUMULATE = 4
keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)
x = rng.normal(size=(512, 10)).astype("float32")
y = rng.integers(0, 4, size=512)
model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
accumulated = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


@tf.function
def accumulate(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True)) / ACCUMULATE
    grads = tape.gradient(loss, model.trainable_variables)
    for total, grad in zip(accumulated, grads):
        total.assign_add(grad)
    return loss


@tf.function
def apply_accumulated():
    optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
    for total in accumulated:
        total.assign(tf.zeros_like(total))


for i in range(0, len(x), 16):
    accumulate(x[i:i + 16], y[i:i + 16])
    if (i // 16 + 1) % ACCUMULATE == 0:
        apply_accumulated()
