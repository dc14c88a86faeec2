# expect: none
"""A correct loop whose step is compiled with XLA (`@tf.function(jit_compile=True)`): the probe's host
callbacks cannot live in an XLA cluster, so this step runs eagerly under the probe and once more as a graph
at the end."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(12)
rng = np.random.default_rng(12)
x = rng.normal(size=(64, 8)).astype("float32")
y = rng.normal(size=(64, 1)).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.01)


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(20):
    train_step(x, y)
