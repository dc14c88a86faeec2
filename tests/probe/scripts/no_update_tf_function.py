# expect: TL807
"""Seed 1's bug in a `tf.function` step (run as a graph under the probe): the step computes and returns the
gradients from a persistent tape, and the loop never applies them. The traced step reuses one tape object every
time it runs, so the probe must still tell one run of the step from the next. After "Gradients are zero except
first iteration in tensorflow" (Stack Overflow). Expected: TL807 at the optimizer that is never applied."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(14)
x = rng.normal(size=(64, 6)).astype("float32")
y = rng.integers(0, 3, size=64)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def compute_gradients(x, y):
    with tf.GradientTape(persistent=True) as tape:
        loss = loss_fn(y, model(x, training=True))
    return loss, tape.gradient(loss, model.trainable_variables)


for step in range(30):
    loss, grads = compute_gradients(x, y)
