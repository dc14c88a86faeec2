# expect: none
"""persistent_two_gradients.py with the step in a `tf.function` (run as a graph under the probe): one persistent
tape gives the loss's gradient and a weight penalty's, summed and applied once. The traced step reuses one tape
object every time it runs. Expected: nothing."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(4)
x = rng.normal(size=(64, 6)).astype("float32")
y = rng.integers(0, 3, size=64)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape(persistent=True) as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        penalty = 1e-3 * tf.add_n([tf.reduce_sum(tf.square(w)) for w in model.trainable_variables])
    loss_grads = tape.gradient(loss, model.trainable_variables)
    penalty_grads = tape.gradient(penalty, model.trainable_variables)
    grads = [g + p for g, p in zip(loss_grads, penalty_grads)]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


for step in range(20):
    train_step(x, y)
